/**
 * Customers in SQLite (api-v1 §2.7, §4.5; docs/customers.md): the customer record, per-device
 * tokens, SMS one-time codes, saved addresses, gift cards and store credit. Reads are direct
 * (ARCHITECTURE 7); every function documented "inside a write" must be called inside a committer
 * transaction (`svc.committer.write((db) => …)`), so its checks and its writes are one atomic step.
 * Balances are ledgers: a balance is always the sum of its entries, never a stored number.
 */
import { perDb, type Db } from './db.ts'

export interface CustomerRow {
  id: number; store_id: number; name: string | null; email: string | null; phone: string | null; password_hash: string | null
  birthday: string | null; consents: string; created_at: string; updated_at: string
}
/** The fields a customer's profile may change (consents as their JSON text). */
export interface CustomerChanges { name?: string | null; email?: string | null; phone?: string | null; birthday?: string | null; consents?: string }
export interface NewCustomer { name: string | null; email: string | null; phone: string | null; password_hash: string | null; birthday: string | null; consents: Record<string, boolean> }
/** A customer's order history in figures (CRM detail): cents; cancelled orders count but are not spend. */
export interface CustomerOrderStats { order_count: number; total_spent: number; last_order_id: number | null; last_order_at: string | null }
/** The owner's and staff's customer list rows. */
export interface CustomerListRow { id: number; name: string | null; email: string | null; phone: string | null; created_at: string }

export interface AddressRow { id: number; customer_id: number; label: string | null; address: string; lat: number | null; lng: number | null; notes: string | null; is_default: number; created_at: string; updated_at: string }
export interface AddressFields { label: string | null; address: string; lat: number | null; lng: number | null; notes: string | null }
export type AddressChanges = Partial<AddressFields>

export interface OtpRow { id: number; code_hash: string; attempts: number; expires_at: string; used_at: string | null }
export interface GiftCardRow { id: number; code_last4: string; expires_at: string | null }
/** A gift card as its customer sees it; amounts in cents. */
export interface GiftCardBalanceRow { id: number; code_last4: string; expires_at: string | null; created_at: string; balance: number; issued: number }
export interface CreditEntryRow { id: number; amount: number; reason: string; order_id: number | null; created_at: string }
/** What the customer-token authenticator needs (api-v1 §5 "Customer token"). */
export interface CustomerTokenRow { token_id: number; customer_id: number; store_id: number; owner_id: number }

function prepare(db: Db) {
  return {
    customer: db.prepare<[number], CustomerRow>('SELECT * FROM customers WHERE id = ?'),
    customerInStore: db.prepare<[number, number], CustomerRow>('SELECT * FROM customers WHERE id = ? AND store_id = ?'),
    customerByEmail: db.prepare<[number, string], CustomerRow>('SELECT * FROM customers WHERE store_id = ? AND email = ? COLLATE NOCASE'),
    customerByPhone: db.prepare<[number, string], { id: number }>('SELECT id FROM customers WHERE store_id = ? AND phone = ? ORDER BY id LIMIT 1'),
    orderStats: db.prepare<[number, number], { order_count: number; total_spent: number }>(
      "SELECT COUNT(*) AS order_count, COALESCE(SUM(CASE WHEN status != 'cancelled' THEN total END), 0) AS total_spent FROM orders WHERE customer_id = ? AND store_id = ?"),
    lastOrder: db.prepare<[number, number], { id: number; created_at: string }>('SELECT id, created_at FROM orders WHERE customer_id = ? AND store_id = ? ORDER BY id DESC LIMIT 1'),
    insertCustomer: db.prepare<unknown[]>('INSERT INTO customers (store_id, name, email, phone, password_hash, birthday, consents, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)'),

    tokenByHash: db.prepare<[string], CustomerTokenRow>(
      `SELECT t.id AS token_id, c.id AS customer_id, c.store_id, s.owner_id FROM customer_tokens t
       JOIN customers c ON c.id = t.customer_id JOIN stores s ON s.id = c.store_id
       WHERE t.token_hash = ? AND t.revoked_at IS NULL`,
    ),
    revokeDevice: db.prepare('UPDATE customer_tokens SET revoked_at = ? WHERE customer_id = ? AND device = ? AND revoked_at IS NULL'),
    insertToken: db.prepare('INSERT INTO customer_tokens (customer_id, token_hash, device, created_at) VALUES (?, ?, ?, ?)'),
    revokeToken: db.prepare('UPDATE customer_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),

    expireOtps: db.prepare('UPDATE customer_otps SET expires_at = ? WHERE store_id = ? AND phone = ? AND used_at IS NULL AND expires_at > ?'),
    insertOtp: db.prepare('INSERT INTO customer_otps (store_id, phone, code_hash, expires_at, created_at) VALUES (?, ?, ?, ?, ?)'),
    latestOtp: db.prepare<[number, string], OtpRow>('SELECT id, code_hash, attempts, expires_at, used_at FROM customer_otps WHERE store_id = ? AND phone = ? ORDER BY id DESC LIMIT 1'),
    otpAttempt: db.prepare('UPDATE customer_otps SET attempts = attempts + 1 WHERE id = ?'),
    otpUse: db.prepare('UPDATE customer_otps SET used_at = ? WHERE id = ?'),

    addresses: db.prepare<[number], AddressRow>('SELECT * FROM customer_addresses WHERE customer_id = ? ORDER BY is_default DESC, id'),
    address: db.prepare<[number, number], AddressRow>('SELECT * FROM customer_addresses WHERE id = ? AND customer_id = ?'),
    anyAddress: db.prepare<[number], 1>('SELECT 1 FROM customer_addresses WHERE customer_id = ?').pluck(),
    clearDefault: db.prepare('UPDATE customer_addresses SET is_default = 0 WHERE customer_id = ?'),
    setDefault: db.prepare('UPDATE customer_addresses SET is_default = (id = ?) WHERE customer_id = ?'),
    insertAddress: db.prepare('INSERT INTO customer_addresses (customer_id, label, address, lat, lng, notes, is_default, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)'),
    deleteAddress: db.prepare('DELETE FROM customer_addresses WHERE id = ? AND customer_id = ?'),
    hasDefault: db.prepare<[number], 1>('SELECT 1 FROM customer_addresses WHERE customer_id = ? AND is_default = 1').pluck(),
    oldestDefault: db.prepare('UPDATE customer_addresses SET is_default = 1 WHERE id = (SELECT MIN(id) FROM customer_addresses WHERE customer_id = ?)'),

    giftCardsOf: db.prepare<[number, number], GiftCardBalanceRow>(
      `SELECT g.id, g.code_last4, g.expires_at, g.created_at, COALESCE(SUM(e.amount), 0) AS balance, COALESCE(SUM(CASE WHEN e.amount > 0 THEN e.amount END), 0) AS issued
       FROM gift_cards g LEFT JOIN gift_card_entries e ON e.gift_card_id = g.id WHERE g.customer_id = ? AND g.store_id = ? GROUP BY g.id ORDER BY g.id`,
    ),
    giftCard: db.prepare<[number, number], GiftCardRow>('SELECT id, code_last4, expires_at FROM gift_cards WHERE id = ? AND store_id = ?'),
    insertGiftCard: db.prepare('INSERT INTO gift_cards (store_id, customer_id, code_hash, code_last4, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)'),
    giftCardBalance: db.prepare<[number], number>('SELECT COALESCE(SUM(amount), 0) FROM gift_card_entries WHERE gift_card_id = ?').pluck(),
    insertGiftCardEntry: db.prepare('INSERT INTO gift_card_entries (gift_card_id, amount, reason, order_id, created_at) VALUES (?, ?, ?, ?, ?)'),

    creditBalance: db.prepare<[number, number], number>('SELECT COALESCE(SUM(amount), 0) FROM store_credit_entries WHERE customer_id = ? AND store_id = ?').pluck(),
    creditEntries: db.prepare<[number, number, number], CreditEntryRow>(
      'SELECT id, amount, reason, order_id, created_at FROM store_credit_entries WHERE customer_id = ? AND store_id = ? ORDER BY id DESC LIMIT ?'),
    insertCredit: db.prepare('INSERT INTO store_credit_entries (store_id, customer_id, amount, reason, created_at) VALUES (?, ?, ?, ?, ?)'),
  }
}

const stmts = perDb(prepare)

/** `SET a = ?, b = ?` for the keys that are present; keys come from typed objects, never from input names. */
function setClause(changes: Record<string, unknown>): { sql: string; values: unknown[] } {
  const cols = Object.entries(changes).filter(([, x]) => x !== undefined)
  return { sql: cols.map(([k]) => `${k} = ?`).join(', '), values: cols.map(([, x]) => x) }
}

/** A write refused by a UNIQUE index (e.g. one email per store). */
export const isUniqueViolation = (err: unknown): boolean =>
  (err as { code?: string } | null)?.code === 'SQLITE_CONSTRAINT_UNIQUE'

// ---- the customer record -------------------------------------------------------------------------

export const customers = {
  byId: (db: Db, id: number): CustomerRow | undefined => stmts(db).customer.get(id),
  /** A customer of this store only: another store's customer is not found (api-v1 §1). */
  inStore: (db: Db, storeId: number, id: number): CustomerRow | undefined => stmts(db).customerInStore.get(id, storeId),
  /** Emails match case-insensitively. */
  byEmail: (db: Db, storeId: number, email: string): CustomerRow | undefined => stmts(db).customerByEmail.get(storeId, email),
  /** The store's oldest customer with this (normalised) phone. */
  idByPhone: (db: Db, storeId: number, phone: string): number | undefined => stmts(db).customerByPhone.get(storeId, phone)?.id,
  /** Inside a write. Throws a UNIQUE violation (isUniqueViolation) for an email the store already has. */
  insert(db: Db, storeId: number, c: NewCustomer, now: string): number {
    return Number(stmts(db).insertCustomer.run(storeId, c.name, c.email, c.phone, c.password_hash, c.birthday, JSON.stringify(c.consents), now, now).lastInsertRowid)
  },
  /** Inside a write. Throws a UNIQUE violation for an email another customer of the store uses. */
  update(db: Db, id: number, changes: CustomerChanges, now: string): void {
    const set = setClause({ name: changes.name, email: changes.email, phone: changes.phone, birthday: changes.birthday, consents: changes.consents, updated_at: now })
    db.prepare(`UPDATE customers SET ${set.sql} WHERE id = ?`).run(...set.values, id)
  },
  /** Orders, spend (cents) and the latest order of a customer at a store (orders linked by customer_id). */
  orderStats(db: Db, storeId: number, id: number): CustomerOrderStats {
    const st = stmts(db)
    const totals = st.orderStats.get(id, storeId) ?? { order_count: 0, total_spent: 0 }
    const last = st.lastOrder.get(id, storeId)
    return { ...totals, last_order_id: last?.id ?? null, last_order_at: last?.created_at ?? null }
  },
  /** A page of the store's customers, newest first; `search` matches name, email or phone (a substring, literally). */
  page(db: Db, storeId: number, search: string, limit: number, offset: number): { rows: CustomerListRow[]; total: number } {
    const like = `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    const where = "store_id = ? AND (COALESCE(name, '') LIKE ? ESCAPE '\\' OR COALESCE(email, '') LIKE ? ESCAPE '\\' OR COALESCE(phone, '') LIKE ? ESCAPE '\\')"
    const args = [storeId, like, like, like]
    const total = db.prepare(`SELECT COUNT(*) FROM customers WHERE ${where}`).pluck().get(...args) as number
    const rows = db.prepare<unknown[], CustomerListRow>(`SELECT id, name, email, phone, created_at FROM customers WHERE ${where} ORDER BY id DESC LIMIT ? OFFSET ?`)
      .all(...args, limit, offset)
    return { rows, total }
  },
}

// ---- tokens (per customer and device) and one-time codes -----------------------------------------

export const customerTokens = {
  /** The unrevoked token with this hash, with its customer, store and owner. */
  byHash: (db: Db, tokenHash: string): CustomerTokenRow | undefined => stmts(db).tokenByHash.get(tokenHash),
  /** Inside a write: the device's earlier token is revoked and this one stored. */
  replaceForDevice(db: Db, customerId: number, device: string, tokenHash: string, now: string): void {
    const s = stmts(db)
    s.revokeDevice.run(now, customerId, device)
    s.insertToken.run(customerId, tokenHash, device, now)
  },
  /** Inside a write: revoke one token (logout of one device). */
  revoke: (db: Db, tokenId: number, now: string): void => { stmts(db).revokeToken.run(now, tokenId) },
}

export const customerOtps = {
  /** Inside a write: earlier open codes of the phone at the store expire now; the new one is stored. */
  replace(db: Db, storeId: number, phone: string, codeHash: string, expiresAt: string, now: string): void {
    const s = stmts(db)
    s.expireOtps.run(now, storeId, phone, now)
    s.insertOtp.run(storeId, phone, codeHash, expiresAt, now)
  },
  latest: (db: Db, storeId: number, phone: string): OtpRow | undefined => stmts(db).latestOtp.get(storeId, phone),
  /** Inside a write. */
  countWrong: (db: Db, id: number): void => { stmts(db).otpAttempt.run(id) },
  /** Inside a write. */
  consume: (db: Db, id: number, now: string): void => { stmts(db).otpUse.run(now, id) },
}

// ---- saved addresses: while any is saved, exactly one is the default ------------------------------

export const customerAddresses = {
  /** The default first. */
  list: (db: Db, customerId: number): AddressRow[] => stmts(db).addresses.all(customerId),
  /** Only the customer's own: another customer's address is not found. */
  own: (db: Db, customerId: number, id: number): AddressRow | undefined => stmts(db).address.get(id, customerId),
  /** Inside a write. The first saved address becomes the default; `makeDefault` makes this one the default. */
  create(db: Db, customerId: number, a: AddressFields, makeDefault: boolean, now: string): number {
    const s = stmts(db)
    const isDefault = !s.anyAddress.get(customerId) || makeDefault
    if (isDefault) s.clearDefault.run(customerId)
    return Number(s.insertAddress.run(customerId, a.label, a.address, a.lat, a.lng, a.notes, isDefault ? 1 : 0, now, now).lastInsertRowid)
  },
  /** Inside a write. `makeDefault` moves the default here. */
  update(db: Db, customerId: number, id: number, changes: AddressChanges, makeDefault: boolean, now: string): void {
    if (makeDefault) stmts(db).setDefault.run(id, customerId)
    const set = setClause({ label: changes.label, address: changes.address, lat: changes.lat, lng: changes.lng, notes: changes.notes, updated_at: now })
    db.prepare(`UPDATE customer_addresses SET ${set.sql} WHERE id = ? AND customer_id = ?`).run(...set.values, id, customerId)
  },
  /** Inside a write; false when it was not the customer's. Deleting the default makes the oldest remaining one the default. */
  remove(db: Db, customerId: number, id: number): boolean {
    const s = stmts(db)
    if (s.deleteAddress.run(id, customerId).changes === 0) return false
    if (!s.hasDefault.get(customerId)) s.oldestDefault.run(customerId)
    return true
  },
}

// ---- gift cards and store credit (ledgers, amounts in cents) --------------------------------------

export const giftCards = {
  /** A customer's cards at a store, with balance and total issued. */
  ofCustomer: (db: Db, storeId: number, customerId: number): GiftCardBalanceRow[] => stmts(db).giftCardsOf.all(customerId, storeId),
  /** A card of this store only. */
  inStore: (db: Db, storeId: number, id: number): GiftCardRow | undefined => stmts(db).giftCard.get(id, storeId),
  /** Inside a write: the card (only a hash of its code) and its issuing entry. */
  issue(db: Db, c: { storeId: number; customerId: number | null; codeHash: string; codeLast4: string; expiresAt: string | null; cents: number }, now: string): number {
    const s = stmts(db)
    const id = Number(s.insertGiftCard.run(c.storeId, c.customerId, c.codeHash, c.codeLast4, c.expiresAt, now).lastInsertRowid)
    s.insertGiftCardEntry.run(id, c.cents, 'issued', null, now)
    return id
  },
  /**
   * Inside a write: spend `cents` unless the balance is smaller. The check and the entry are one
   * transaction, so two racing redemptions never overdraw the card.
   */
  spend(db: Db, id: number, cents: number, orderId: number | null, now: string): { ok: boolean; balance: number } {
    const s = stmts(db)
    const balance = s.giftCardBalance.get(id) as number
    if (balance < cents) return { ok: false, balance }
    s.insertGiftCardEntry.run(id, -cents, 'redeemed', orderId, now)
    return { ok: true, balance: balance - cents }
  },
}

export const storeCredit = {
  balance: (db: Db, storeId: number, customerId: number): number => stmts(db).creditBalance.get(customerId, storeId) as number,
  /** The latest entries, newest first. */
  entries: (db: Db, storeId: number, customerId: number, limit: number): CreditEntryRow[] => stmts(db).creditEntries.all(customerId, storeId, limit),
  /** Inside a write: add a credit (positive) or debit (negative) unless the balance would go below zero. */
  add(db: Db, storeId: number, customerId: number, cents: number, reason: string, now: string): { ok: boolean; balance: number } {
    const s = stmts(db)
    const balance = s.creditBalance.get(customerId, storeId) as number
    if (balance + cents < 0) return { ok: false, balance }
    s.insertCredit.run(storeId, customerId, cents, reason, now)
    return { ok: true, balance: balance + cents }
  },
}
