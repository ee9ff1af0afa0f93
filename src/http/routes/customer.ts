/**
 * The customer app (api-v1 §4.5; docs/customers.md): profile, own orders, saved addresses, gift
 * cards and store credit, logout of this device. Identity comes only from the token: no route
 * takes a customer id, and a body's `customer_id` is never read.
 */
import * as v from 'valibot'
import { route, Reply } from '../route.ts'
import { ApiError, notFound } from '../../errors.ts'
import { Nullable, OrderInputSchema, PageQuery, PaginatedSchema, ShortText, Id, Money, pageOf, paginate } from '../schemas.ts'
import { OrderSchema } from '../docs-schemas.ts'
import { fromCents, toCents } from '../../domain/money.ts'
import { validLatLng } from '../../domain/delivery.ts'
import { normalizePhone } from '../../domain/delivery.ts'
import type { Services } from '../../services.ts'
import type { OrderRow } from '../../storage/orders.ts'
import { nowIso } from '../../storage/db.ts'
import { newToken, sha256Hex } from '../../auth/tokens.ts'
import { createOrder, createdReply } from './orders.ts'
import { ownedStore } from './owner-access.ts'
import { Birthday, Consents, CustomerSchema, customerView, type CustomerRow } from './customer-view.ts'

const tag = 'Customer app'
const ORDERS_PER_PAGE = 30

const me = (svc: Services, id: number) => svc.db.prepare<[number], CustomerRow>('SELECT * FROM customers WHERE id = ?').get(id)!

const ProfileBody = v.object({
  name: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(120)))),
  email: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.email(), v.maxLength(254)))),
  phone: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(40), v.transform((s) => normalizePhone(s) ?? ''), v.minLength(1, 'Not a phone number.')))),
  birthday: v.optional(v.nullable(Birthday)),
  consents: v.optional(Consents),
})

/** Customer orders: the §2.4 input plus `address_id` (a saved address fills `address`). */
const CustomerOrderBody = v.object({ ...OrderInputSchema.entries, address_id: Nullable(Id) })

const Lat = v.pipe(v.number(), v.minValue(-90), v.maxValue(90))
const Lng = v.pipe(v.number(), v.minValue(-180), v.maxValue(180))
const addressFields = {
  label: Nullable(ShortText(60)),
  address: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(500)),
  lat: Nullable(Lat),
  lng: Nullable(Lng),
  notes: Nullable(ShortText(500)),
  is_default: v.optional(v.boolean()),
}
const AddressCreate = v.object(addressFields)
const AddressUpdate = v.partial(v.object(addressFields))

interface AddressRow { id: number; customer_id: number; label: string | null; address: string; lat: number | null; lng: number | null; notes: string | null; is_default: number; created_at: string; updated_at: string }
const addressView = (a: AddressRow) => ({ id: a.id, label: a.label, address: a.address, lat: a.lat, lng: a.lng, notes: a.notes, is_default: a.is_default === 1, created_at: a.created_at, updated_at: a.updated_at })
const AddressSchema = {
  type: 'object', required: ['id', 'address', 'lat', 'lng', 'is_default'],
  properties: { id: { type: 'integer' }, label: { type: ['string', 'null'] }, address: { type: 'string' }, lat: { type: ['number', 'null'] }, lng: { type: ['number', 'null'] }, notes: { type: ['string', 'null'] }, is_default: { type: 'boolean' }, created_at: { type: 'string' }, updated_at: { type: 'string' } },
}
const ownAddress = (svc: Services, customerId: number, id: number) =>
  svc.db.prepare<[number, number], AddressRow>('SELECT * FROM customer_addresses WHERE id = ? AND customer_id = ?').get(id, customerId)

/** lat and lng come together (a half position is no position). */
function checkLatLng(lat: number | null | undefined, lng: number | null | undefined) {
  if ((lat == null) !== (lng == null) || (lat != null && !validLatLng(lat, lng))) {
    throw new ApiError('validation_failed', undefined, { [lat == null ? 'lat' : 'lng']: ['Send lat and lng together.'] })
  }
}

const GiftCardSchema = { type: 'object', required: ['id', 'code_last4', 'balance'], properties: { id: { type: 'integer' }, code_last4: { type: 'string' }, balance: { type: 'number' }, issued: { type: 'number' }, currency: { type: 'string' }, expires_at: { type: ['string', 'null'] }, created_at: { type: 'string' } } }
const CreditSchema = { type: 'object', required: ['balance', 'currency', 'entries'], properties: { balance: { type: 'number' }, currency: { type: 'string' }, entries: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' }, amount: { type: 'number' }, reason: { type: 'string' }, order_id: { type: ['integer', 'null'] }, created_at: { type: 'string' } } } } } }

const currencyOf = (svc: Services, storeId: number) => svc.stores.byId(storeId)?.currency ?? 'USD'

/** Store credit of a customer as a ledger view: the balance is the sum of the entries. */
export function storeCredit(svc: Services, storeId: number, customerId: number) {
  const balance = svc.db.prepare('SELECT COALESCE(SUM(amount), 0) FROM store_credit_entries WHERE customer_id = ? AND store_id = ?').pluck().get(customerId, storeId) as number
  const entries = svc.db.prepare<[number, number], { id: number; amount: number; reason: string; order_id: number | null; created_at: string }>(
    'SELECT id, amount, reason, order_id, created_at FROM store_credit_entries WHERE customer_id = ? AND store_id = ? ORDER BY id DESC LIMIT 50').all(customerId, storeId)
  return { balance: fromCents(balance), currency: currencyOf(svc, storeId), entries: entries.map((e) => ({ ...e, amount: fromCents(e.amount) })) }
}

export const customerRoutes = [
  route({
    method: 'GET', path: '/customer/me', tag, auth: 'customer', summary: 'The signed-in customer\'s profile', response: CustomerSchema,
    handler: ({ svc, principal }) => customerView(me(svc, principal.customerId)),
  }),
  route({
    method: 'PUT', path: '/customer/me', tag, auth: 'customer', body: ProfileBody, response: CustomerSchema,
    summary: 'Update name, email, phone, birthday, consents', description: 'Fields left out stay; `consents` are merged key by key. An email used by another customer of the store: 422.',
    handler: async ({ svc, principal, body }) => {
      const cur = me(svc, principal.customerId)
      const consents = body.consents ? JSON.stringify({ ...(JSON.parse(cur.consents) as Record<string, boolean>), ...body.consents }) : undefined
      const cols = Object.entries({ name: body.name, email: body.email, phone: body.phone, birthday: body.birthday, consents, updated_at: nowIso() }).filter(([, x]) => x !== undefined)
      try {
        await svc.committer.write((db) => db.prepare(`UPDATE customers SET ${cols.map(([k]) => `${k} = ?`).join(', ')} WHERE id = ?`).run(...cols.map(([, x]) => x), principal.customerId))
      } catch (err) {
        if (err instanceof Error && /UNIQUE constraint failed/.test(err.message)) throw new ApiError('validation_failed', undefined, { email: ['Another account of this store uses this email.'] })
        throw err
      }
      return customerView(me(svc, principal.customerId))
    },
  }),
  route({
    method: 'GET', path: '/customer/orders', tag, auth: 'customer', query: PageQuery, response: PaginatedSchema(OrderSchema),
    summary: 'Own order history, newest first (30 per page)',
    handler: ({ svc, principal, query }) => {
      const page = pageOf(query)
      const total = svc.db.prepare('SELECT COUNT(*) FROM orders WHERE customer_id = ? AND store_id = ?').pluck().get(principal.customerId, principal.storeId) as number
      const rows = svc.db.prepare<[number, number, number, number], OrderRow>('SELECT * FROM orders WHERE customer_id = ? AND store_id = ? ORDER BY id DESC LIMIT ? OFFSET ?')
        .all(principal.customerId, principal.storeId, ORDERS_PER_PAGE, (page - 1) * ORDERS_PER_PAGE)
      return paginate(rows.map((r) => svc.orders.full(r)), page, ORDERS_PER_PAGE, total)
    },
  }),
  route({
    method: 'POST', path: '/customer/orders', tag, auth: 'customer', body: CustomerOrderBody, status: 201, response: OrderSchema,
    summary: 'Place an order as the signed-in customer (item structure of api-v1 §2.4)',
    description: 'The customer is the token\'s; name and phone default to the profile; `address_id` fills `address` from a saved address. Returns the order with `track_token`. `Idempotency-Key` or `client_uuid` make retries safe.',
    headers: [{ name: 'Idempotency-Key', description: 'Makes the request safe to retry.' }],
    handler: async ({ svc, principal, body, headers }) => {
      const profile = me(svc, principal.customerId)
      const { address_id, ...input } = body
      let address = input.address ?? null
      if (address_id != null) {
        const a = ownAddress(svc, principal.customerId, address_id)
        if (!a) throw new ApiError('validation_failed', undefined, { address_id: ['No such saved address.'] })
        address = a.address
      }
      const order = {
        ...input, address,
        customer_name: input.customer_name ?? profile.name, phone: input.phone ?? profile.phone, source: input.source ?? 'customer_app',
      }
      return createdReply(await createOrder(svc, principal.storeId, `customer:${principal.customerId}`, order, headers['idempotency-key'], principal.customerId))
    },
  }),
  route({
    method: 'GET', path: '/customer/addresses', tag, auth: 'customer', summary: 'Saved addresses, the default first', response: { type: 'array', items: AddressSchema },
    handler: ({ svc, principal }) => svc.db.prepare<[number], AddressRow>('SELECT * FROM customer_addresses WHERE customer_id = ? ORDER BY is_default DESC, id').all(principal.customerId).map(addressView),
  }),
  route({
    method: 'POST', path: '/customer/addresses', tag, auth: 'customer', body: AddressCreate, status: 201, response: AddressSchema,
    summary: 'Save an address (`lat`/`lng` optional, together)', description: 'The first saved address becomes the default; `is_default: true` makes a later one the default.',
    handler: async ({ svc, principal, body }) => {
      checkLatLng(body.lat, body.lng)
      const now = nowIso()
      const id = await svc.committer.write((db) => {
        const first = !db.prepare('SELECT 1 FROM customer_addresses WHERE customer_id = ?').get(principal.customerId)
        const isDefault = first || body.is_default === true
        if (isDefault) db.prepare('UPDATE customer_addresses SET is_default = 0 WHERE customer_id = ?').run(principal.customerId)
        return Number(db.prepare('INSERT INTO customer_addresses (customer_id, label, address, lat, lng, notes, is_default, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
          .run(principal.customerId, body.label ?? null, body.address, body.lat ?? null, body.lng ?? null, body.notes ?? null, isDefault ? 1 : 0, now, now).lastInsertRowid)
      })
      return addressView(ownAddress(svc, principal.customerId, id)!)
    },
  }),
  route({
    method: 'PUT', path: '/customer/addresses/{addressId}', tag, auth: 'customer', body: AddressUpdate, response: AddressSchema,
    summary: 'Update a saved address', description: '`is_default: true` makes it the default (there is always exactly one while any address is saved; `false` is ignored).',
    handler: async ({ svc, principal, params, body }) => {
      const id = Number(params.addressId)
      const cur = ownAddress(svc, principal.customerId, id)
      if (!cur) throw notFound('address')
      const lat = body.lat !== undefined ? body.lat : cur.lat
      const lng = body.lng !== undefined ? body.lng : cur.lng
      checkLatLng(lat, lng)
      const cols = Object.entries({ label: body.label, address: body.address, lat: body.lat, lng: body.lng, notes: body.notes, updated_at: nowIso() }).filter(([, x]) => x !== undefined)
      await svc.committer.write((db) => {
        if (body.is_default === true) db.prepare('UPDATE customer_addresses SET is_default = (id = ?) WHERE customer_id = ?').run(id, principal.customerId)
        db.prepare(`UPDATE customer_addresses SET ${cols.map(([k]) => `${k} = ?`).join(', ')} WHERE id = ?`).run(...cols.map(([, x]) => x), id)
      })
      return addressView(ownAddress(svc, principal.customerId, id)!)
    },
  }),
  route({
    method: 'DELETE', path: '/customer/addresses/{addressId}', tag, auth: 'customer', status: 204, summary: 'Delete a saved address (the oldest remaining becomes the default)',
    handler: async ({ svc, principal, params }) => {
      const id = Number(params.addressId)
      if (!ownAddress(svc, principal.customerId, id)) throw notFound('address')
      await svc.committer.write((db) => {
        db.prepare('DELETE FROM customer_addresses WHERE id = ?').run(id)
        if (!db.prepare('SELECT 1 FROM customer_addresses WHERE customer_id = ? AND is_default = 1').get(principal.customerId)) {
          db.prepare('UPDATE customer_addresses SET is_default = 1 WHERE id = (SELECT MIN(id) FROM customer_addresses WHERE customer_id = ?)').run(principal.customerId)
        }
      })
      return null
    },
  }),
  route({
    method: 'GET', path: '/customer/gift-cards', tag, auth: 'customer', summary: 'Own gift cards with their balances', response: { type: 'array', items: GiftCardSchema },
    description: 'A balance is the sum of the card\'s ledger entries (issue and top-ups positive, redemptions negative).',
    handler: ({ svc, principal }) => {
      const currency = currencyOf(svc, principal.storeId)
      return svc.db.prepare<[number, number], { id: number; code_last4: string; expires_at: string | null; created_at: string; balance: number; issued: number }>(
        `SELECT g.id, g.code_last4, g.expires_at, g.created_at, COALESCE(SUM(e.amount), 0) AS balance, COALESCE(SUM(CASE WHEN e.amount > 0 THEN e.amount END), 0) AS issued
         FROM gift_cards g LEFT JOIN gift_card_entries e ON e.gift_card_id = g.id WHERE g.customer_id = ? AND g.store_id = ? GROUP BY g.id ORDER BY g.id`,
      ).all(principal.customerId, principal.storeId).map((g) => ({ ...g, balance: fromCents(g.balance), issued: fromCents(g.issued), currency }))
    },
  }),
  route({
    method: 'GET', path: '/customer/store-credit', tag, auth: 'customer', summary: 'Own store credit: balance and the latest 50 ledger entries', response: CreditSchema,
    handler: ({ svc, principal }) => storeCredit(svc, principal.storeId, principal.customerId),
  }),
  route({
    method: 'POST', path: '/customer/logout', tag, auth: 'customer', summary: 'Revoke the token of this request (this device only; other devices stay signed in)',
    response: { type: 'object', required: ['revoked'], properties: { revoked: { type: 'boolean' } } },
    handler: async ({ svc, principal }) => {
      await svc.committer.write((db) => db.prepare('UPDATE customer_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(nowIso(), principal.tokenId))
      return { revoked: true }
    },
  }),
]

// ---- owner side of balances ----------------------------------------------------------------------

const CreditBody = v.object({
  amount: v.pipe(v.number(), v.minValue(-1_000_000), v.maxValue(1_000_000), v.check((n) => n !== 0, 'Use a non-zero amount.'), v.check((n) => Math.abs(n * 100 - Math.round(n * 100)) < 1e-6, 'Use at most two decimals.')),
  reason: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)),
})
const RedeemBody = v.object({ amount: v.pipe(Money, v.minValue(0.01)), order_id: Nullable(Id) })
const RedeemSchema = { type: 'object', required: ['id', 'balance', 'redeemed'], properties: { id: { type: 'integer' }, code_last4: { type: 'string' }, balance: { type: 'number' }, redeemed: { type: 'number' }, currency: { type: 'string' }, order_id: { type: ['integer', 'null'] } } }
const GiftCardBody = v.object({
  amount: v.pipe(Money, v.minValue(0.01)),
  customer_id: Nullable(Id),
  expires_at: Nullable(v.pipe(v.string(), v.isoTimestamp())),
})

export const customerBalanceRoutes = [
  route({
    method: 'POST', path: '/restaurants/{id}/customers/{customerId}/store-credit', tag: 'Customers', auth: 'owner', capability: 'customers:write', body: CreditBody, status: 201, response: CreditSchema,
    summary: 'Credit (positive) or debit (negative) a customer\'s store credit', description: 'Adds a ledger entry; a debit below zero balance is refused (422).',
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      const customerId = Number(params.customerId)
      if (!svc.db.prepare('SELECT 1 FROM customers WHERE id = ? AND store_id = ?').get(customerId, store.id)) throw notFound('customer')
      const cents = toCents(body.amount)
      await svc.committer.write((db) => {
        const bal = db.prepare('SELECT COALESCE(SUM(amount), 0) FROM store_credit_entries WHERE customer_id = ? AND store_id = ?').pluck().get(customerId, store.id) as number
        if (bal + cents < 0) throw new ApiError('validation_failed', undefined, { amount: [`The balance is ${fromCents(bal)}; it cannot go below zero.`] })
        db.prepare('INSERT INTO store_credit_entries (store_id, customer_id, amount, reason, created_at) VALUES (?, ?, ?, ?, ?)').run(store.id, customerId, cents, body.reason, nowIso())
      })
      return new Reply(201, storeCredit(svc, store.id, customerId))
    },
  }),
  route({
    method: 'POST', path: '/restaurants/{id}/gift-cards', tag: 'Customers', auth: 'owner', capability: 'customers:write', body: GiftCardBody, status: 201,
    summary: 'Issue a gift card (its code is shown once)', description: 'Body `{amount, customer_id?, expires_at?}`; only a hash of the code is kept.',
    response: { type: 'object', required: ['id', 'code', 'balance'], properties: { id: { type: 'integer' }, code: { type: 'string' }, balance: { type: 'number' }, customer_id: { type: ['integer', 'null'] } } },
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      if (body.customer_id != null && !svc.db.prepare('SELECT 1 FROM customers WHERE id = ? AND store_id = ?').get(body.customer_id, store.id)) {
        throw new ApiError('validation_failed', undefined, { customer_id: ['No such customer at this store.'] })
      }
      const code = newToken('customer').slice(4, 20).toUpperCase().replace(/[^A-Z0-9]/g, 'X')
      const now = nowIso()
      const id = await svc.committer.write((db) => {
        const gid = Number(db.prepare('INSERT INTO gift_cards (store_id, customer_id, code_hash, code_last4, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)')
          .run(store.id, body.customer_id ?? null, sha256Hex(code), code.slice(-4), body.expires_at ?? null, now).lastInsertRowid)
        db.prepare('INSERT INTO gift_card_entries (gift_card_id, amount, reason, created_at) VALUES (?, ?, ?, ?)').run(gid, toCents(body.amount), 'issued', now)
        return gid
      })
      return new Reply(201, { id, code, balance: body.amount, customer_id: body.customer_id ?? null })
    },
  }),
  route({
    method: 'POST', path: '/restaurants/{id}/gift-cards/{giftCardId}/redeem', tag: 'Customers', auth: 'owner', capability: 'customers:write', body: RedeemBody, response: RedeemSchema,
    summary: 'Spend from a gift card (a negative ledger entry)',
    description: 'Body `{amount, order_id?}`. More than the balance, or an expired card: 422; the balance never goes below zero, even when two redemptions race (checked inside the write).',
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      const card = svc.db.prepare<[number, number], { id: number; code_last4: string; expires_at: string | null }>('SELECT id, code_last4, expires_at FROM gift_cards WHERE id = ? AND store_id = ?').get(Number(params.giftCardId), store.id)
      if (!card) throw notFound('gift card')
      if (card.expires_at && Date.parse(card.expires_at) <= Date.now()) throw new ApiError('validation_failed', undefined, { amount: ['This gift card has expired.'] })
      if (body.order_id != null && !svc.orders.rowInStore(body.order_id, store.id)) throw new ApiError('validation_failed', undefined, { order_id: ['No such order at this store.'] })
      const cents = toCents(body.amount)
      const balance = await svc.committer.write((db) => {
        const bal = db.prepare('SELECT COALESCE(SUM(amount), 0) FROM gift_card_entries WHERE gift_card_id = ?').pluck().get(card.id) as number
        if (bal < cents) throw new ApiError('validation_failed', undefined, { amount: [`The balance is ${fromCents(bal).toFixed(2)}.`] })
        db.prepare('INSERT INTO gift_card_entries (gift_card_id, amount, reason, order_id, created_at) VALUES (?, ?, ?, ?, ?)').run(card.id, -cents, 'redeemed', body.order_id ?? null, nowIso())
        return bal - cents
      })
      return { id: card.id, code_last4: card.code_last4, balance: fromCents(balance), redeemed: body.amount, currency: currencyOf(svc, store.id), order_id: body.order_id ?? null }
    },
  }),
]
