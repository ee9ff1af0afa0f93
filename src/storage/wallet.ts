/**
 * The wallet (docs/billing.md "The wallet"): one ledger per account in `wallet_entries`. The
 * balance is the sum of the entries and never goes below zero: `debit` checks inside the
 * transaction that appends, so two debits cannot both pass (SQLite runs one writer at a time).
 * A `reference` names what an entry pays for; a second entry with the same reference is a no-op,
 * which makes every charge and top-up safe to repeat. Call the writers inside a transaction.
 */
import { nowIso, stmt, type Db } from './db.ts'

export interface WalletEntry {
  id: number
  owner_id: number
  /** Minor units: credit > 0, debit < 0. */
  amount: number
  currency: string
  reason: string
  reference: string | null
  created_by: string
  created_at: string
}

/** What a credit or debit did: the entry written, or the one that already had its reference. */
export interface WalletWrite { entry: WalletEntry; balance: number; repeated: boolean }

export const WALLET_PAGE_SIZE = 25

/** The balance in minor units: the sum of the account's entries. */
export const walletBalance = (db: Db, ownerId: number): number =>
  stmt<[number], number>(db, 'SELECT COALESCE(SUM(amount), 0) FROM wallet_entries WHERE owner_id = ?').pluck().get(ownerId) ?? 0

/** One page of entries, newest first (1-based `page`). */
export function walletEntries(db: Db, ownerId: number, page = 1, perPage = WALLET_PAGE_SIZE): { entries: WalletEntry[]; total: number } {
  const total = stmt<[number], number>(db, 'SELECT COUNT(*) FROM wallet_entries WHERE owner_id = ?').pluck().get(ownerId) ?? 0
  const entries = stmt<[number, number, number], WalletEntry>(db, 
    'SELECT * FROM wallet_entries WHERE owner_id = ? ORDER BY id DESC LIMIT ? OFFSET ?').all(ownerId, perPage, (page - 1) * perPage)
  return { entries, total }
}

const byReference = (db: Db, ownerId: number, reference: string): WalletEntry | undefined =>
  stmt<[number, string], WalletEntry>(db, 'SELECT * FROM wallet_entries WHERE owner_id = ? AND reference = ?').get(ownerId, reference)

function append(db: Db, ownerId: number, amount: number, reason: string, reference: string | null, createdBy: string, currency: string): WalletEntry {
  const created_at = nowIso()
  const r = stmt(db, 'INSERT INTO wallet_entries (owner_id, amount, currency, reason, reference, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
    .run(ownerId, amount, currency, reason, reference, createdBy, created_at)
  return { id: Number(r.lastInsertRowid), owner_id: ownerId, amount, currency, reason, reference, created_by: createdBy, created_at }
}

/** Add `amount` (minor units, > 0). A repeated `reference` returns the existing entry and writes nothing. */
export function credit(db: Db, ownerId: number, amount: number, reason: string, reference: string | null, createdBy = 'system', currency = 'USD'): WalletWrite {
  if (!Number.isInteger(amount) || amount <= 0) throw new RangeError(`credit amount must be a positive integer of minor units, got ${amount}`)
  const seen = reference === null ? undefined : byReference(db, ownerId, reference)
  if (seen) return { entry: seen, balance: walletBalance(db, ownerId), repeated: true }
  const entry = append(db, ownerId, amount, reason, reference, createdBy, currency)
  return { entry, balance: walletBalance(db, ownerId), repeated: false }
}

/**
 * Take `amount` (minor units, > 0). Returns false, writing nothing, when the balance would go below
 * zero; a repeated `reference` returns the existing entry (the charge was made already).
 */
export function debit(db: Db, ownerId: number, amount: number, reason: string, reference: string | null, createdBy = 'system', currency = 'USD'): WalletWrite | false {
  if (!Number.isInteger(amount) || amount <= 0) throw new RangeError(`debit amount must be a positive integer of minor units, got ${amount}`)
  const seen = reference === null ? undefined : byReference(db, ownerId, reference)
  if (seen) return { entry: seen, balance: walletBalance(db, ownerId), repeated: true }
  if (walletBalance(db, ownerId) < amount) return false
  const entry = append(db, ownerId, -amount, reason, reference, createdBy, currency)
  return { entry, balance: walletBalance(db, ownerId), repeated: false }
}
