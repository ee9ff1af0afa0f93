/**
 * The one fixture builder: rows written straight into SQLite (no scrypt for owners, unlike
 * seedDemo), each table inserted by exactly one function here: owners and their tokens, stores of
 * any type, menus, drivers, staff, customers and storefront tokens; plus row counters for "nothing
 * was written". Composites (createAccount here, createFleet in ./delivery.ts) are built from these.
 * Rows written here are picked up by the server at once: auth and store actors read SQLite on
 * first use, so write fixtures before the first request that touches the store.
 */
import { randomBytes, randomInt } from 'node:crypto'
import type { Db } from '../../src/storage/db.ts'
import { nowIso } from '../../src/storage/db.ts'
import { createOwnerToken } from '../../src/seed.ts'
import { setAccountPlan, syncPlatformPlans } from '../../src/storage/plans.ts'
import { newToken, sha256Hex } from '../../src/auth/tokens.ts'
import { hashSecretSync } from '../../src/auth/passwords.ts'
import { hashPinSync, issueStaffToken, storePinSalt } from '../../src/auth/staff.ts'
import { issueCustomerToken } from '../../src/auth/customer.ts'
import type { Test } from 'tap'
import type { TestServer, Res } from './server.ts'
import { specCode } from './spec-errors.ts'

export interface FixtureMenu {
  categoryId: number
  emptyCategoryId: number
  /** 10.00; variants Single (no own price) and Double 15.00; extras Cheese 1.50, Bacon 2.00. */
  burger: { id: number; single: number; double: number; cheese: number; bacon: number }
  /** 3.00, no variants or extras. */
  fries: number
  /** 5.00, sold out. */
  soup: number
}

export interface Account {
  ownerId: number
  token: string
  storeId: number
  slug: string
  menu: FixtureMenu
}

const uniq = () => randomBytes(4).toString('hex')

/** A phone number in the 555 range, random enough not to collide within a test server. */
export const randomPhone = (): string => `+1555${String(randomInt(0, 10_000_000)).padStart(7, '0')}`

/**
 * An owner account on `plan` ('pro' by default: every feature and generous quotas, so tests of other
 * rules are not limited by the plan; test/plans-quotas.test.ts passes 'free' to test the limits).
 */
export function createOwner(db: Db, name = `Owner ${uniq()}`, plan: string | null = 'pro'): number {
  const id = Number(db.prepare('INSERT INTO owners (name, email, created_at) VALUES (?, ?, ?)').run(name, `${uniq()}@test.local`, nowIso()).lastInsertRowid)
  if (plan) {
    // A database opened by the test itself (crash tests: before the server) has no platform plans yet.
    if (!db.prepare('SELECT 1 FROM plans WHERE key = ?').get(plan)) syncPlatformPlans(db)
    setAccountPlan(db, id, plan)
  }
  return id
}

/** A raw owner token with `caps`; `expiresAt` ISO or null. */
export function tokenFor(db: Db, ownerId: number, caps: string[], expiresAt: string | null = null): string {
  return createOwnerToken(db, ownerId, caps, expiresAt, 'test').token
}

/** A store of `ownerId`; `settings` is the store's settings JSON object (driver_fee, hours, ...). */
export function createStore(db: Db, ownerId: number, opts: { type?: string; title?: string; createdAt?: string; settings?: Record<string, unknown> } = {}): { id: number; slug: string } {
  const slug = `store-${uniq()}`
  const id = Number(db.prepare(`INSERT INTO stores (owner_id, title, slug, template, store_type, currency, city, settings, created_at)
    VALUES (?, ?, ?, 'classic', ?, 'USD', 'Testville', ?, ?)`)
    .run(ownerId, opts.title ?? `Store ${slug}`, slug, opts.type ?? 'restaurant', JSON.stringify(opts.settings ?? {}), opts.createdAt ?? nowIso()).lastInsertRowid)
  return { id, slug }
}

/** A menu category; `station` routes its items on the kitchen display (docs/kds.md). */
export function createCategory(db: Db, storeId: number, name: string, opts: { station?: string | null; position?: number } = {}): number {
  return Number(db.prepare('INSERT INTO menu_categories (store_id, name, position, station, created_at) VALUES (?, ?, ?, ?, ?)')
    .run(storeId, name, opts.position ?? 0, opts.station ?? null, nowIso()).lastInsertRowid)
}

/** A menu item; `price` in minor units. */
export function createItem(db: Db, storeId: number, categoryId: number, name: string, price: number, opts: { soldOut?: boolean } = {}): number {
  const now = nowIso()
  return Number(db.prepare(`INSERT INTO menu_items (store_id, category_id, name, description, price, position, is_sold_out, created_at, updated_at)
    VALUES (?, ?, ?, '', ?, 0, ?, ?, ?)`).run(storeId, categoryId, name, price, opts.soldOut ? 1 : 0, now, now).lastInsertRowid)
}

export function createMenu(db: Db, storeId: number): FixtureMenu {
  const now = nowIso()
  const variant = (itemId: number, name: string, price: number | null) =>
    Number(db.prepare('INSERT INTO item_variants (item_id, name, price, position, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?)').run(itemId, name, price, now, now).lastInsertRowid)
  const extra = (itemId: number, name: string, price: number) =>
    Number(db.prepare('INSERT INTO item_extras (item_id, name, price, group_name, position) VALUES (?, ?, ?, NULL, 0)').run(itemId, name, price).lastInsertRowid)

  const categoryId = createCategory(db, storeId, 'Mains', { station: 'grill' })
  const emptyCategoryId = createCategory(db, storeId, 'Empty')
  const burger = createItem(db, storeId, categoryId, 'Burger', 1000)
  return {
    categoryId,
    emptyCategoryId,
    burger: { id: burger, single: variant(burger, 'Single', null), double: variant(burger, 'Double', 1500), cheese: extra(burger, 'Cheese', 150), bacon: extra(burger, 'Bacon', 200) },
    fries: createItem(db, storeId, categoryId, 'Fries', 300),
    soup: createItem(db, storeId, categoryId, 'Soup', 500, { soldOut: true }),
  }
}

/** A brand of a store (migration 020), written straight in: any store type. */
export function createBrand(db: Db, storeId: number, name: string): number {
  const now = nowIso()
  return Number(db.prepare('INSERT INTO brands (store_id, name, slug, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
    .run(storeId, name, `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${uniq()}`, now, now).lastInsertRowid)
}

/** An expiry batch of an item (migration 020), `expiresOn` YYYY-MM-DD. */
export function createBatch(db: Db, itemId: number, expiresOn: string, quantity: number, code: string | null = null): number {
  return Number(db.prepare('INSERT INTO item_batches (item_id, batch_code, expires_on, quantity, created_at) VALUES (?, ?, ?, ?, ?)')
    .run(itemId, code, expiresOn, quantity, nowIso()).lastInsertRowid)
}

/** A fitment (vehicle) of a store (migration 021); the table takes any store, the routes only car parts stores'. */
export function createFitment(db: Db, storeId: number, make = 'Volkswagen', model = 'Golf', yearFrom = 2013, yearTo = 2020): number {
  const now = nowIso()
  return Number(db.prepare('INSERT INTO fitments (store_id, make, model, year_from, year_to, engine, created_at, updated_at) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)')
    .run(storeId, make, model, yearFrom, yearTo, now, now).lastInsertRowid)
}

/**
 * A plan of the test's own (not in the platform catalog), e.g. one without a feature to test its
 * refusal; put an account on it with setAccountPlan(db, ownerId, key).
 */
export function createPlan(db: Db, features: string[], quotas: Record<string, number> = {}, key = `test-${uniq()}`): string {
  db.prepare(`INSERT INTO plans (key, name, price, wholesale_price, features, quotas, created_at) VALUES (?, ?, 0, 0, ?, ?, ?)`)
    .run(key, `Test plan ${key}`, JSON.stringify(features), JSON.stringify(quotas), nowIso())
  return key
}

/** Owner + `*` token + one restaurant with the fixture menu; on the Pro plan unless `plan` says otherwise. */
export function createAccount(db: Db, opts: { type?: string; plan?: string } = {}): Account {
  const ownerId = createOwner(db, undefined, opts.plan ?? 'pro')
  const token = tokenFor(db, ownerId, ['*'])
  const store = createStore(db, ownerId, opts)
  return { ownerId, token, storeId: store.id, slug: store.slug, menu: createMenu(db, store.id) }
}

export interface TestDriver { id: number; token: string; phone: string; name: string }

/** A driver of `ownerId` with a ready token; `restaurantId` null for a driver bound to no store. */
export function createDriver(db: Db, ownerId: number, restaurantId: number | null, opts: { onShift?: boolean; phone?: string } = {}): TestDriver {
  const token = newToken('driver')
  const phone = opts.phone ?? randomPhone()
  const name = `Driver ${uniq()}`
  const id = Number(db.prepare('INSERT INTO drivers (owner_id, restaurant_id, name, phone, token_hash, on_shift, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
    .run(ownerId, restaurantId, name, phone, sha256Hex(token), opts.onShift ? 1 : 0, nowIso()).lastInsertRowid)
  return { id, token, phone, name }
}

export interface StaffFixture { id: number; email: string; password: string; pin: string; token: string }

let pinSeq = 100000 + Math.floor(Math.random() * 800000)

/** A staff member with real (slow) password and PIN hashes, plus a ready token for device `fixture`. */
export function createStaff(db: Db, storeId: number, opts: { role?: string; station?: string | null; permissions?: { grant?: string[]; revoke?: string[] }; pin?: string; password?: string } = {}): StaffFixture {
  const role = opts.role ?? 'manager'
  const email = `${role}-${uniq()}@staff.test`
  const password = opts.password ?? `pw-${uniq()}`
  const pin = opts.pin ?? String(pinSeq++)
  const id = Number(db.prepare('INSERT INTO staff (store_id, name, email, role, password_hash, pin_hash, permissions, station, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
    .run(storeId, `Staff ${role}`, email, role, hashSecretSync(password), hashPinSync(pin, storePinSalt(db, storeId)), opts.permissions ? JSON.stringify(opts.permissions) : null, opts.station ?? null, nowIso()).lastInsertRowid)
  const token = issueStaffToken(db, id, 'fixture', 'password')
  return { id, email, password, pin, token }
}

/** A storefront token for a store (default scopes: menu:read and order:write). */
export function createStorefrontToken(db: Db, storeId: number, scopes: string[] = ['menu:read', 'order:write']): string {
  const token = newToken('storefront')
  db.prepare('INSERT INTO storefront_tokens (store_id, token_hash, scopes, created_at) VALUES (?, ?, ?, ?)').run(storeId, sha256Hex(token), JSON.stringify(scopes), nowIso())
  return token
}

export interface CustomerFixture { id: number; email: string; password: string; phone: string; token: string }

/** A customer with a password and a token for device `fixture`. */
export function createCustomer(db: Db, storeId: number, opts: { email?: string; password?: string; phone?: string } = {}): CustomerFixture {
  const email = opts.email ?? `c-${uniq()}@customer.test`
  const password = opts.password ?? `pw-${uniq()}`
  const phone = opts.phone ?? randomPhone()
  const now = nowIso()
  const id = Number(db.prepare("INSERT INTO customers (store_id, name, email, phone, password_hash, consents, created_at, updated_at) VALUES (?, 'Cust', ?, ?, ?, '{}', ?, ?)")
    .run(storeId, email, phone, hashSecretSync(password), now, now).lastInsertRowid)
  return { id, email, password, phone, token: issueCustomerToken(db, id, 'fixture') }
}

export interface RowCounts { orders: number; order_lines: number; outbox: number; idempotency_keys: number }

export function counts(db: Db): RowCounts {
  const n = (t: string) => db.prepare(`SELECT COUNT(*) FROM ${t}`).pluck().get() as number
  return { orders: n('orders'), order_lines: n('order_lines'), outbox: n('outbox'), idempotency_keys: n('idempotency_keys') }
}

export interface OutboxRow { id: number; owner_id: number; store_id: number | null; event: string; data: Record<string, any>; created_at: string }

/** Outbox rows (data parsed), optionally only those of one event name, oldest first. */
export function outbox(db: Db, event?: string): OutboxRow[] {
  const rows = (event
    ? db.prepare('SELECT * FROM outbox WHERE event = ? ORDER BY id').all(event)
    : db.prepare('SELECT * FROM outbox ORDER BY id').all()) as Array<Omit<OutboxRow, 'data'> & { data: string }>
  return rows.map((r) => ({ ...r, data: JSON.parse(r.data) as Record<string, any> }))
}

/** POST an order as the owner. */
export function postOrder(s: TestServer, token: string, storeId: number, body: unknown, headers: Record<string, string> = {}): Promise<Res> {
  return s.req('POST', `/restaurants/${storeId}/orders`, { token, body, headers })
}

/** Assert-free shape check of the api-v1 §7 envelope; returns a reason string when it is wrong. */
export function envelopeProblem(body: unknown, reason: string): string | null {
  if (!body || typeof body !== 'object') return `not a JSON object: ${JSON.stringify(body)}`
  const b = body as Record<string, unknown>
  const code = specCode(reason)
  if (b.code !== code || b.reason !== reason) return `code ${String(b.code)}, reason ${String(b.reason)} instead of ${code}, ${reason}`
  if (typeof b.message !== 'string' || b.message.length === 0) return 'message missing'
  const extra = Object.keys(b).filter((k) => !['message', 'code', 'reason', 'errors', 'details'].includes(k))
  if (extra.length) return `unexpected keys ${extra.join(', ')}`
  // `details`: machine-readable facts of a refusal, e.g. which plan limit (docs/billing.md).
  if ('details' in b && (!b.details || typeof b.details !== 'object')) return '`details` is not an object'
  // Every 422 names its fields, never none (docs/errors.md); of the others only lines_already_paid does (lines.N.quantity).
  if (code === 'validation_failed' && Object.keys((b.errors ?? {}) as object).length === 0) return 'a 422 without `errors`'
  if ('errors' in b) {
    if (code !== 'validation_failed' && reason !== 'lines_already_paid') return '`errors` on a non-validation error'
    const e = b.errors as Record<string, unknown>
    if (!e || typeof e !== 'object') return '`errors` is not an object'
    for (const [k, v] of Object.entries(e)) if (!Array.isArray(v) || v.length === 0 || !v.every((m) => typeof m === 'string')) return `errors.${k} is not an array of strings`
  }
  return null
}

/** Assert status + §7 envelope: `reason` the catalog code given, `code` the spec's for the status (api-v1 §7). */
export function isError(t: Test, res: Res, status: number, reason: string, what = ''): void {
  t.equal(res.status, status, `${what} answers ${status}`.trim())
  t.equal(envelopeProblem(res.body, reason), null, `${what} has the §7 envelope with code ${specCode(reason)}, reason ${reason}`.trim())
}
