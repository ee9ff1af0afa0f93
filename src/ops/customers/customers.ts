/**
 * Customers (api-v1 §4.5, §2.7; docs/customers.md). The customer app: profile, saved addresses,
 * gift cards and store credit, logout of this device; identity comes only from the token
 * (`customerOf`), so no operation takes a customer id and a body's `customer_id` is never read.
 * The store's side: the customer list and adding a customer to it (owner and staff with
 * `customers`), store credit and gift cards. Balances are ledgers whose checks run inside the
 * write (src/storage/customers.ts).
 * Sign-in operations: src/ops/customers/customer-auth.ts.
 */
import * as v from 'valibot'
import { defineOp, type Access } from '../op.ts'
import { customerOf, storeOf } from '../scope.ts'
import { Id, Money, Nullable, PageQuery, PaginatedSchema, RevokedSchema, ShortText, pageOf, paginate } from '../schemas/common.ts'
import { Birthday, Consents, CustomerSchema, customerView } from '../schemas/customers.ts'
import { customerAuthOps } from './customer-auth.ts'
import { ApiError, notFound } from '../../errors.ts'
import { fromCents, toCents } from '../../domain/money.ts'
import { normalizePhone, validLatLng } from '../../domain/delivery.ts'
import { newToken, sha256Hex } from '../../auth/tokens.ts'
import type { Services } from '../../services.ts'
import { nowIso } from '../../storage/db.ts'
import { customerAddresses, customers, customerTokens, giftCards, isUniqueViolation, storeCredit, type AddressRow } from '../../storage/customers.ts'
import { appendEvent, type OutboxEvent } from '../../storage/outbox.ts'
import { named } from '../schemas/named.ts'
import { parseSettings } from '../../storage/stores.ts'
import { storePosition } from '../../actors/store-delivery.ts'
import { GEOCODER_LIMITS } from '../../providers/geocoder.ts'

const tag = 'Customer app'
const crmTag = 'Customers'
const customer: Access = { customer: true }
const CUSTOMERS_PER_PAGE = 30
const CREDIT_ENTRIES = 50

const currencyOf = (svc: Services, storeId: number) => svc.stores.byId(storeId)?.currency ?? 'USD'

// ---- profile ---------------------------------------------------------------------------------------

const ProfileInput = v.object({
  name: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(120)))),
  email: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.email(), v.maxLength(254)))),
  phone: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(40), v.transform((s) => normalizePhone(s) ?? ''), v.minLength(1, 'Not a phone number.')))),
  birthday: v.optional(v.nullable(Birthday)),
  consents: v.optional(Consents),
})

export const getProfile = defineOp({
  id: 'customer.profile.get', tag, access: customer, scope: [], output: CustomerSchema,
  summary: 'The signed-in customer\'s profile',
  run: (ctx) => customerView(customers.byId(ctx.svc.db, customerOf(ctx).customerId)!),
})

export const updateProfile = defineOp({
  id: 'customer.profile.update', tag, access: customer, scope: [], input: ProfileInput, output: CustomerSchema,
  summary: 'Update name, email, phone, birthday, consents',
  description: 'Fields left out stay; `consents` are merged key by key. An email used by another customer of the store: 422.',
  run: async (ctx, body) => {
    const { customerId } = customerOf(ctx)
    try {
      await ctx.svc.committer.write((db) => {
        // Merged inside the write, so two concurrent updates never drop each other's consents.
        const cur = customers.byId(db, customerId)!
        const consents = body.consents ? JSON.stringify({ ...(JSON.parse(cur.consents) as Record<string, boolean>), ...body.consents }) : undefined
        customers.update(db, customerId, { name: body.name, email: body.email, phone: body.phone, birthday: body.birthday, consents }, nowIso())
      })
    } catch (err) {
      if (isUniqueViolation(err)) throw new ApiError('validation_failed', undefined, { email: ['Another account of this store uses this email.'] })
      throw err
    }
    return customerView(customers.byId(ctx.svc.db, customerId)!)
  },
})

export const logout = defineOp({
  id: 'customer.logout', tag, access: customer, scope: [],
  summary: 'Revoke the token of this request (this device only; other devices stay signed in)',
  output: RevokedSchema,
  run: async (ctx) => {
    const { tokenId } = customerOf(ctx)
    await ctx.svc.committer.write((db) => customerTokens.revoke(db, tokenId, nowIso()))
    return { revoked: true }
  },
})

// ---- saved addresses ---------------------------------------------------------------------------------

// The website's form shows these messages as they are (issue 34 item 4).
const Lat = v.pipe(v.number('The position\'s latitude must be a number.'), v.minValue(-90, 'A latitude is between -90 and 90.'), v.maxValue(90, 'A latitude is between -90 and 90.'))
const Lng = v.pipe(v.number('The position\'s longitude must be a number.'), v.minValue(-180, 'A longitude is between -180 and 180.'), v.maxValue(180, 'A longitude is between -180 and 180.'))
const addressFields = {
  label: Nullable(ShortText(60)),
  address: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(500)),
  lat: Nullable(Lat),
  lng: Nullable(Lng),
  notes: Nullable(ShortText(500)),
  is_default: v.optional(v.boolean()),
}
const addressId = { address_id: Id }

export const AddressSchema = {
  type: 'object', required: ['id', 'address', 'lat', 'lng', 'is_default'],
  properties: { id: { type: 'integer' }, label: { type: ['string', 'null'] }, address: { type: 'string' }, lat: { type: ['number', 'null'] }, lng: { type: ['number', 'null'] }, notes: { type: ['string', 'null'] }, is_default: { type: 'boolean' }, created_at: { type: 'string' }, updated_at: { type: 'string' } },
}
named('Address', AddressSchema)
const addressView = (a: AddressRow) => ({ id: a.id, label: a.label, address: a.address, lat: a.lat, lng: a.lng, notes: a.notes, is_default: a.is_default === 1, created_at: a.created_at, updated_at: a.updated_at })

/** lat and lng come together (a half position is no position). */
function checkLatLng(lat: number | null | undefined, lng: number | null | undefined) {
  if ((lat == null) !== (lng == null) || (lat != null && !validLatLng(lat, lng))) {
    throw new ApiError('validation_failed', undefined, { [lat == null ? 'lat' : 'lng']: ['Send lat and lng together (a position needs both).'] })
  }
}

const ownAddress = (svc: Services, customerId: number, id: number) => {
  const a = customerAddresses.own(svc.db, customerId, id)
  if (!a) throw notFound('address')
  return a
}

export const listAddresses = defineOp({
  id: 'customer.addresses.list', tag, access: customer, scope: [], output: { type: 'array', items: AddressSchema },
  summary: 'Saved addresses, the default first',
  run: (ctx) => customerAddresses.list(ctx.svc.db, customerOf(ctx).customerId).map(addressView),
})

export const createAddress = defineOp({
  id: 'customer.addresses.create', tag, access: customer, scope: [], input: v.object(addressFields), output: AddressSchema,
  summary: 'Save an address (`lat`/`lng` optional, together)',
  description: 'The first saved address becomes the default; `is_default: true` makes a later one the default.',
  run: async (ctx, body) => {
    const { customerId } = customerOf(ctx)
    checkLatLng(body.lat, body.lng)
    const fields = { label: body.label ?? null, address: body.address, lat: body.lat ?? null, lng: body.lng ?? null, notes: body.notes ?? null }
    const id = await ctx.svc.committer.write((db) => customerAddresses.create(db, customerId, fields, body.is_default === true, nowIso()))
    return addressView(ownAddress(ctx.svc, customerId, id))
  },
})

export const updateAddress = defineOp({
  id: 'customer.addresses.update', tag, access: customer, scope: [],
  input: v.object({ ...addressId, ...v.partial(v.object(addressFields)).entries }), output: AddressSchema,
  summary: 'Update a saved address',
  description: '`is_default: true` makes it the default (there is always exactly one while any address is saved; `false` is ignored).',
  run: async (ctx, { address_id, is_default, ...changes }) => {
    const { customerId } = customerOf(ctx)
    const cur = ownAddress(ctx.svc, customerId, address_id)
    checkLatLng(changes.lat !== undefined ? changes.lat : cur.lat, changes.lng !== undefined ? changes.lng : cur.lng)
    await ctx.svc.committer.write((db) => customerAddresses.update(db, customerId, address_id, changes, is_default === true, nowIso()))
    return addressView(ownAddress(ctx.svc, customerId, address_id))
  },
})

export const deleteAddress = defineOp({
  id: 'customer.addresses.delete', tag, access: customer, scope: [], input: v.object(addressId), empty: true,
  summary: 'Delete a saved address (the oldest remaining becomes the default)',
  run: async (ctx, { address_id }) => {
    const { customerId } = customerOf(ctx)
    if (!await ctx.svc.committer.write((db) => customerAddresses.remove(db, customerId, address_id))) throw notFound('address')
  },
})

/** What an address search answers (docs/customers.md "Finding an address"). */
export const PlacesSchema = named('AddressSearch', {
  type: 'object', required: ['source', 'places', 'failure'],
  properties: {
    source: { type: 'string', enum: ['none', 'nominatim'], description: 'The server\'s geocoder (`GEOCODER`); `none`: no address search on this server, give `lat`/`lng` another way' },
    places: {
      type: 'array', maxItems: GEOCODER_LIMITS.places, description: 'Places for the text, the service\'s best first (biased towards the store)',
      items: { type: 'object', required: ['label', 'lat', 'lng'], properties: { label: { type: 'string' }, lat: { type: 'number' }, lng: { type: 'number' } } },
    },
    failure: { type: ['string', 'null'], description: 'Why the geocoder gave no answer (none configured, timed out, refused), or null' },
  },
})

/**
 * Text → places (issue 34 item 4): the server's geocoder (src/providers/geocoder.ts), biased towards
 * the customer's store. Nothing is saved: the customer saves the place they choose as an address.
 */
export const searchAddresses = defineOp({
  id: 'customer.addresses.search', tag, access: customer, scope: [],
  input: v.object({ q: v.pipe(v.string(), v.trim(), v.minLength(3, 'Type at least 3 characters.'), v.maxLength(200)) }),
  output: PlacesSchema,
  summary: 'Find places for an address text (`?q=`), to save one with its position',
  description: 'Answers up to 5 places with `lat`/`lng` from the server\'s geocoder (docs/providers.md "Geocoder"), nearest the store first where the service ranks so. Without a geocoder (`source: "none"`), or when it fails, `places` is empty and `failure` says why: the address can still be saved with a position from the device. Answers are cached for a day.',
  run: async (ctx, { q }) => {
    const { storeId } = customerOf(ctx)
    const store = ctx.svc.stores.byId(storeId)
    return ctx.svc.geocoder.search(q, store ? storePosition(parseSettings(store.settings)) : null)
  },
})

// ---- gift cards and store credit -------------------------------------------------------------------

const GiftCardSchema = { type: 'object', required: ['id', 'code_last4', 'balance'], properties: { id: { type: 'integer' }, code_last4: { type: 'string' }, balance: { type: 'number' }, issued: { type: 'number' }, currency: { type: 'string' }, expires_at: { type: ['string', 'null'] }, created_at: { type: 'string' } } }
const CreditSchema = { type: 'object', required: ['balance', 'currency', 'entries'], properties: { balance: { type: 'number' }, currency: { type: 'string' }, entries: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' }, amount: { type: 'number' }, reason: { type: 'string' }, order_id: { type: ['integer', 'null'] }, created_at: { type: 'string' } } } } } }

/** Store credit of a customer as a ledger view: the balance is the sum of the entries. */
function storeCreditView(svc: Services, storeId: number, customerId: number) {
  const entries = storeCredit.entries(svc.db, storeId, customerId, CREDIT_ENTRIES)
  return { balance: fromCents(storeCredit.balance(svc.db, storeId, customerId)), currency: currencyOf(svc, storeId), entries: entries.map((e) => ({ ...e, amount: fromCents(e.amount) })) }
}

export const listGiftCards = defineOp({
  id: 'customer.gift_cards.list', tag, access: customer, scope: [], output: { type: 'array', items: GiftCardSchema },
  summary: 'Own gift cards with their balances',
  description: 'A balance is the sum of the card\'s ledger entries (issue and top-ups positive, redemptions negative).',
  run: (ctx) => {
    const { customerId, storeId } = customerOf(ctx)
    const currency = currencyOf(ctx.svc, storeId)
    return giftCards.ofCustomer(ctx.svc.db, storeId, customerId).map((g) => ({ ...g, balance: fromCents(g.balance), issued: fromCents(g.issued), currency }))
  },
})

export const getStoreCredit = defineOp({
  id: 'customer.store_credit.get', tag, access: customer, scope: [], output: CreditSchema,
  summary: 'Own store credit: balance and the latest 50 ledger entries',
  run: (ctx) => {
    const { customerId, storeId } = customerOf(ctx)
    return storeCreditView(ctx.svc, storeId, customerId)
  },
})

// ---- the store's side: customer list, store credit, gift cards ------------------------------------
// The customer records (list, create, detail) are the plan's CRM feature (docs/billing.md), owner and
// staff alike: `feature: 'crm'` answers 403 `feature_not_in_plan` without it.

const CustomerListItem = { type: 'object', required: ['id'], properties: { id: { type: 'integer' }, name: { type: ['string', 'null'] }, email: { type: ['string', 'null'] }, phone: { type: ['string', 'null'] }, created_at: { type: 'string' } } }

export const listCustomers = defineOp({
  id: 'customers.list', feature: 'crm', tag: crmTag, access: { owner: 'customers:read', staff: 'customers' }, scope: ['store'],
  input: v.object({ ...PageQuery.entries, search: v.optional(v.pipe(v.string(), v.maxLength(100))) }), output: PaginatedSchema(CustomerListItem),
  summary: 'The store\'s customers, newest first (30 per page); query `search`',
  description: '`search` matches a part of the name, email or phone.',
  run: (ctx, input) => {
    const page = pageOf(input)
    const { rows, total } = customers.page(ctx.svc.db, storeOf(ctx).id, input.search ?? '', CUSTOMERS_PER_PAGE, (page - 1) * CUSTOMERS_PER_PAGE)
    return paginate(rows, page, CUSTOMERS_PER_PAGE, total)
  },
})

/** Either is enough to reach the customer and to sign in later (SMS code) or be found again. */
const reachable = (c: { email?: string | null; phone?: string | null }) => c.email != null || c.phone != null
const REACHABLE = 'Send an email or a phone (or both).'
const CreateCustomerInput = v.pipe(
  ProfileInput,
  v.forward(v.partialCheck([['email'], ['phone']], reachable, REACHABLE), ['email']),
  v.forward(v.partialCheck([['email'], ['phone']], reachable, REACHABLE), ['phone']),
)
const taken = (field: 'email' | 'phone') => new ApiError('validation_failed', undefined, { [field]: [`Another customer of this store has this ${field}.`] })

export const createCustomer = defineOp({
  id: 'customers.create', feature: 'crm', tag: crmTag, access: { owner: 'customers:write', staff: 'customers' }, scope: ['store'],
  input: CreateCustomerInput, output: CustomerSchema,
  summary: 'Add a customer to the store\'s CRM (no password; they can sign in later by SMS code to that phone)',
  description: 'Body `{name?, email?, phone?, birthday?, consents?}` with an email or a phone (422 otherwise); the phone is normalised as the customer app does. An email or phone another customer of this store has: 422 keyed by that field. Answers the customer profile and emits `customer.created` with `source: "crm"`.',
  run: async (ctx, body) => {
    const store = storeOf(ctx)
    const c = { name: body.name ?? null, email: body.email ?? null, phone: body.phone ?? null, password_hash: null, birthday: body.birthday ?? null, consents: body.consents ?? {} }
    const events: OutboxEvent[] = []
    let id: number
    try {
      id = await ctx.svc.committer.write((db) => {
        // Checked inside the write, so a racing create or a first SMS sign-in of the same phone
        // cannot slip in between: the SMS sign-in finds the store's oldest customer with the
        // phone, so a second record with it could never be signed into (a duplicate).
        // byEmail matches case-insensitively, also for rows written before emails were lowercased.
        if (c.email !== null && customers.byEmail(db, store.id, c.email)) throw taken('email')
        if (c.phone !== null && customers.idByPhone(db, store.id, c.phone) !== undefined) throw taken('phone')
        const id = customers.insert(db, store.id, c, nowIso())
        // api-v1 §6: the event commits with the customer (outbox), same payload as the app's.
        events.push(appendEvent(db, { ownerId: store.owner_id, storeId: store.id, event: 'customer.created', data: { customer_id: id, restaurant_id: store.id, source: 'crm' } }))
        return id
      })
    } catch (err) {
      if (isUniqueViolation(err)) throw taken('email')
      throw err
    }
    ctx.svc.events.publish(events)
    return customerView(customers.byId(ctx.svc.db, id)!)
  },
})

const CustomerDetailSchema = {
  ...CustomerSchema,
  required: [...CustomerSchema.required, 'order_count', 'total_spent', 'currency', 'last_order_id', 'last_order_at'],
  properties: {
    ...CustomerSchema.properties,
    order_count: { type: 'integer', description: 'Orders linked to the customer at this store, cancelled ones included' },
    total_spent: { type: 'number', description: 'Sum of the totals of those orders that were not cancelled, in the store currency' },
    currency: { type: 'string' },
    last_order_id: { type: ['integer', 'null'] },
    last_order_at: { type: ['string', 'null'], format: 'date-time' },
  },
}

export const getCustomer = defineOp({
  id: 'customers.get', feature: 'crm', tag: crmTag, access: { owner: 'customers:read', staff: 'customers' }, scope: ['store'],
  input: v.object({ customer_id: Id }), output: CustomerDetailSchema,
  summary: 'A customer of the store with their order count, spend and latest order',
  description: 'Orders count when they are linked to the customer: placed in the customer app, or by anyone with the customer\'s phone (docs/customers.md "CRM"). A customer of another store: 404.',
  run: (ctx, { customer_id }) => {
    const store = storeOf(ctx)
    const c = customers.inStore(ctx.svc.db, store.id, customer_id)
    if (!c) throw notFound('customer')
    const stats = customers.orderStats(ctx.svc.db, store.id, c.id)
    return { ...customerView(c), ...stats, total_spent: fromCents(stats.total_spent), currency: store.currency }
  },
})

const TwoDecimals = (n: number) => Math.abs(n * 100 - Math.round(n * 100)) < 1e-6

export const adjustStoreCredit = defineOp({
  id: 'customers.store_credit.adjust', tag: crmTag, access: { owner: 'customers:write' }, scope: ['store'],
  input: v.object({
    customer_id: Id,
    amount: v.pipe(v.number(), v.minValue(-1_000_000), v.maxValue(1_000_000), v.check((n) => n !== 0, 'Use a non-zero amount.'), v.check(TwoDecimals, 'Use at most two decimals.')),
    reason: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)),
  }),
  output: CreditSchema,
  summary: 'Credit (positive) or debit (negative) a customer\'s store credit',
  description: 'Adds a ledger entry; a debit below zero balance is refused (422). A customer of another store is 404.',
  run: async (ctx, { customer_id, amount, reason }) => {
    const store = storeOf(ctx)
    if (!customers.inStore(ctx.svc.db, store.id, customer_id)) throw notFound('customer')
    const r = await ctx.svc.committer.write((db) => storeCredit.add(db, store.id, customer_id, toCents(amount), reason, nowIso()))
    if (!r.ok) throw new ApiError('validation_failed', undefined, { amount: [`The balance is ${fromCents(r.balance)}; it cannot go below zero.`] })
    return storeCreditView(ctx.svc, store.id, customer_id)
  },
})

export const issueGiftCard = defineOp({
  id: 'customers.gift_cards.issue', tag: crmTag, access: { owner: 'customers:write' }, scope: ['store'],
  input: v.object({
    amount: v.pipe(Money, v.minValue(0.01)),
    customer_id: Nullable(Id),
    expires_at: Nullable(v.pipe(v.string(), v.isoTimestamp())),
  }),
  output: { type: 'object', required: ['id', 'code', 'balance'], properties: { id: { type: 'integer' }, code: { type: 'string' }, balance: { type: 'number' }, customer_id: { type: ['integer', 'null'] } } },
  summary: 'Issue a gift card (its code is shown once)',
  description: 'Body `{amount, customer_id?, expires_at?}`; only a hash of the code is kept.',
  run: async (ctx, body) => {
    const store = storeOf(ctx)
    const customerId = body.customer_id ?? null
    if (customerId !== null && !customers.inStore(ctx.svc.db, store.id, customerId)) {
      throw new ApiError('validation_failed', undefined, { customer_id: ['No such customer at this store.'] })
    }
    const code = newToken('customer').slice(4, 20).toUpperCase().replace(/[^A-Z0-9]/g, 'X')
    const card = { storeId: store.id, customerId, codeHash: sha256Hex(code), codeLast4: code.slice(-4), expiresAt: body.expires_at ?? null, cents: toCents(body.amount) }
    const id = await ctx.svc.committer.write((db) => giftCards.issue(db, card, nowIso()))
    return { id, code, balance: body.amount, customer_id: customerId }
  },
})

export const redeemGiftCard = defineOp({
  id: 'customers.gift_cards.redeem', tag: crmTag, access: { owner: 'customers:write' }, scope: ['store'],
  input: v.object({ gift_card_id: Id, amount: v.pipe(Money, v.minValue(0.01)), order_id: Nullable(Id) }),
  output: { type: 'object', required: ['id', 'balance', 'redeemed'], properties: { id: { type: 'integer' }, code_last4: { type: 'string' }, balance: { type: 'number' }, redeemed: { type: 'number' }, currency: { type: 'string' }, order_id: { type: ['integer', 'null'] } } },
  summary: 'Spend from a gift card (a negative ledger entry)',
  description: 'Body `{amount, order_id?}`. More than the balance, or an expired card: 422; the balance never goes below zero, even when two redemptions race (checked inside the write).',
  run: async (ctx, { gift_card_id, amount, order_id }) => {
    const store = storeOf(ctx)
    const card = giftCards.inStore(ctx.svc.db, store.id, gift_card_id)
    if (!card) throw notFound('gift card')
    if (card.expires_at && Date.parse(card.expires_at) <= Date.now()) throw new ApiError('validation_failed', undefined, { amount: ['This gift card has expired.'] })
    if (order_id != null && !ctx.svc.orders.rowInStore(order_id, store.id)) throw new ApiError('validation_failed', undefined, { order_id: ['No such order at this store.'] })
    const r = await ctx.svc.committer.write((db) => giftCards.spend(db, card.id, toCents(amount), order_id ?? null, nowIso()))
    if (!r.ok) throw new ApiError('validation_failed', undefined, { amount: [`The balance is ${fromCents(r.balance).toFixed(2)}.`] })
    return { id: card.id, code_last4: card.code_last4, balance: fromCents(r.balance), redeemed: amount, currency: currencyOf(ctx.svc, store.id), order_id: order_id ?? null }
  },
})

/** Every customer operation, sign-in included (one line in ALL_OPS). */
export const customerOps = [
  ...customerAuthOps,
  getProfile, updateProfile, logout, listAddresses, searchAddresses, createAddress, updateAddress, deleteAddress, listGiftCards, getStoreCredit,
  listCustomers, getCustomer, createCustomer, adjustStoreCredit, issueGiftCard, redeemGiftCard,
]
