/**
 * Staff repository (docs/staff.md): members, their tokens' revocation, two-factor state, push
 * devices, the store's integration controls (busy, snooze) and the PIN-device list. Reads take the
 * read connection; every function that writes must be called inside a durable write
 * (`svc.committer.write((db) => …)`), like the token and PIN-device writers in src/auth.
 */
import type { Db } from './db.ts'
import { nowIso } from './db.ts'
import type { PinDeviceRow } from '../auth/pin-devices.ts'
import type { IntegrationState } from '../domain/integration.ts'

export interface StaffRow {
  id: number
  store_id: number
  name: string
  email: string
  role: string
  password_hash: string
  pin_hash: string | null
  permissions: string | null
  station: string | null
  totp_secret: string | null
  totp_pending: string | null
  totp_last_step: number | null
  created_at: string
}

// ---- members ------------------------------------------------------------------------------------

export const staffById = (db: Db, id: number): StaffRow | undefined =>
  db.prepare<[number], StaffRow>('SELECT * FROM staff WHERE id = ?').get(id)

/** A member of this store only: another store's member is not found (tenancy at lookup). */
export const staffInStore = (db: Db, id: number, storeId: number): StaffRow | undefined =>
  db.prepare<[number, number], StaffRow>('SELECT * FROM staff WHERE id = ? AND store_id = ?').get(id, storeId)

/** Emails are unique per store, compared without case (sign-in takes them as typed). */
export const staffByEmail = (db: Db, storeId: number, email: string): StaffRow | undefined =>
  db.prepare<[number, string], StaffRow>('SELECT * FROM staff WHERE store_id = ? AND email = ? COLLATE NOCASE').get(storeId, email)

export const staffOfStore = (db: Db, storeId: number): StaffRow[] =>
  db.prepare<[number], StaffRow>('SELECT * FROM staff WHERE store_id = ? ORDER BY id').all(storeId)

/** PIN hashes of the store's members, except `exceptId` (0: none), for PIN sign-in and the uniqueness check. */
export const pinHashesOfStore = (db: Db, storeId: number, exceptId = 0): Array<{ id: number; pin_hash: string }> =>
  db.prepare<[number, number], { id: number; pin_hash: string }>('SELECT id, pin_hash FROM staff WHERE store_id = ? AND pin_hash IS NOT NULL AND id != ?').all(storeId, exceptId)

/** Another member of the store already has this exact PIN hash (same store salt). */
export const pinHashTaken = (db: Db, storeId: number, pinHash: string, exceptId: number): boolean =>
  db.prepare('SELECT 1 FROM staff WHERE store_id = ? AND pin_hash = ? AND id != ?').get(storeId, pinHash, exceptId) !== undefined

export type NewStaff = Pick<StaffRow, 'name' | 'email' | 'role' | 'password_hash' | 'pin_hash' | 'permissions' | 'station'>

/** Insert a member; a duplicate email of the store throws SQLite's UNIQUE constraint error. */
export function insertStaff(db: Db, storeId: number, s: NewStaff): number {
  return Number(db.prepare('INSERT INTO staff (store_id, name, email, role, password_hash, pin_hash, permissions, station, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
    .run(storeId, s.name, s.email, s.role, s.password_hash, s.pin_hash, s.permissions, s.station, nowIso()).lastInsertRowid)
}

/** The columns a staff update may set; undefined leaves a column as it is. */
export type StaffChanges = Partial<Pick<StaffRow, 'name' | 'email' | 'role' | 'station' | 'permissions' | 'password_hash' | 'pin_hash' | 'totp_secret' | 'totp_pending' | 'totp_last_step'>>

const STAFF_CHANGE_COLUMNS: ReadonlyArray<keyof StaffChanges> = ['name', 'email', 'role', 'station', 'permissions', 'password_hash', 'pin_hash', 'totp_secret', 'totp_pending', 'totp_last_step']

export function updateStaff(db: Db, id: number, changes: StaffChanges): void {
  // Column names come from the fixed list above, never from the caller's keys.
  const cols = STAFF_CHANGE_COLUMNS.filter((k) => changes[k] !== undefined)
  if (cols.length === 0) return
  db.prepare(`UPDATE staff SET ${cols.map((k) => `${k} = ?`).join(', ')} WHERE id = ?`).run(...cols.map((k) => changes[k]), id)
}

export function deleteStaff(db: Db, id: number): void {
  db.prepare('DELETE FROM staff WHERE id = ?').run(id)
}

// ---- tokens -------------------------------------------------------------------------------------

/** How a staff token was obtained (issued by src/auth/staff.ts): managing PIN devices needs the stronger, password sign-in. */
export const staffTokenMethod = (db: Db, tokenId: number): 'password' | 'pin' | undefined =>
  db.prepare<[number], 'password' | 'pin'>('SELECT method FROM staff_tokens WHERE id = ?').pluck().get(tokenId)

/** Revoke one token (a logout); revoking twice keeps the first time. */
export function revokeStaffToken(db: Db, tokenId: number): void {
  db.prepare('UPDATE staff_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(nowIso(), tokenId)
}

/** Revoke a member's live tokens (all, or those of one sign-in method); returns their ids (their kitchen sockets must close). */
export function revokeStaffTokens(db: Db, staffId: number, method: 'password' | 'pin' | null): number[] {
  const ids = db.prepare<[number], { id: number; method: string }>('SELECT id, method FROM staff_tokens WHERE staff_id = ? AND revoked_at IS NULL').all(staffId)
    .filter((t) => method === null || t.method === method).map((t) => t.id)
  const stmt = db.prepare('UPDATE staff_tokens SET revoked_at = ? WHERE id = ?')
  const now = nowIso()
  for (const id of ids) stmt.run(now, id)
  return ids
}

// ---- two-factor (RFC 6238) ----------------------------------------------------------------------

/**
 * Use a TOTP time step for a sign-in: false when this or a later step was used already. Two
 * sign-ins racing with one code: only the first may use its step (RFC 6238 §5.2).
 */
export function claimTotpStep(db: Db, staffId: number, step: number): boolean {
  return db.prepare('UPDATE staff SET totp_last_step = ? WHERE id = ? AND (totp_last_step IS NULL OR totp_last_step < ?)').run(step, staffId, step).changes > 0
}

/** A new secret waits here until a first code confirms it. */
export function setPendingTotp(db: Db, staffId: number, secret: string): void {
  db.prepare('UPDATE staff SET totp_pending = ? WHERE id = ?').run(secret, staffId)
}

/** Two-factor on: the pending secret becomes the secret, and the confirming code's step is spent. */
export function enableTotp(db: Db, staffId: number, secret: string, step: number): void {
  db.prepare('UPDATE staff SET totp_secret = ?, totp_pending = NULL, totp_last_step = ? WHERE id = ?').run(secret, step, staffId)
}

// ---- push devices -------------------------------------------------------------------------------

/** A device token belongs to one member at a time: registering it again moves it. */
export function registerPushDevice(db: Db, staffId: number, deviceToken: string, platform: string): void {
  const now = nowIso()
  db.prepare(`INSERT INTO staff_devices (staff_id, device_token, platform, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (device_token) DO UPDATE SET staff_id = excluded.staff_id, platform = excluded.platform, updated_at = excluded.updated_at`)
    .run(staffId, deviceToken, platform, now, now)
}

/** False when the token was not the caller's: someone else's token is never touched. */
export function unregisterPushDevice(db: Db, staffId: number, deviceToken: string): boolean {
  return db.prepare('DELETE FROM staff_devices WHERE device_token = ? AND staff_id = ?').run(deviceToken, staffId).changes > 0
}

export interface PushTarget { device_token: string; platform: string; role: string; permissions: string | null }

/** Every push device of the store's members, with the member's role and overrides. */
export function createPushTargets(db: Db): (storeId: number) => PushTarget[] {
  const q = db.prepare<[number], PushTarget>('SELECT d.device_token, d.platform, s.role, s.permissions FROM staff_devices d JOIN staff s ON s.id = d.staff_id WHERE s.store_id = ?')
  return (storeId) => q.all(storeId)
}

// ---- integration controls (busy, snooze) --------------------------------------------------------

export type IntegrationRow = IntegrationState

export const integrationRow = (db: Db, storeId: number): IntegrationRow | undefined =>
  db.prepare<[number], IntegrationRow>('SELECT busy_until, extra_prep_minutes, snoozed_until FROM store_integration WHERE store_id = ?').get(storeId)

const INTEGRATION_COLUMNS: ReadonlyArray<keyof IntegrationRow> = ['busy_until', 'extra_prep_minutes', 'snoozed_until']

/** Set some of the store's integration columns (the row is created on first use). */
export function setIntegration(db: Db, storeId: number, changes: Partial<IntegrationRow>): void {
  const now = nowIso()
  db.prepare('INSERT OR IGNORE INTO store_integration (store_id, updated_at) VALUES (?, ?)').run(storeId, now)
  const cols = INTEGRATION_COLUMNS.filter((k) => k in changes)
  db.prepare(`UPDATE store_integration SET ${[...cols.map((k) => `${k} = ?`), 'updated_at = ?'].join(', ')} WHERE store_id = ?`).run(...cols.map((k) => changes[k] ?? null), now, storeId)
}

// ---- PIN devices (writes: src/auth/pin-devices.ts) -----------------------------------------------

/** The store's devices, enrolled first, newest first. */
export const pinDevicesOfStore = (db: Db, storeId: number): PinDeviceRow[] =>
  db.prepare<[number], PinDeviceRow>('SELECT * FROM staff_pin_devices WHERE store_id = ? ORDER BY revoked_at IS NOT NULL, id DESC').all(storeId)

export const pinDeviceById = (db: Db, id: number): PinDeviceRow | undefined =>
  db.prepare<[number], PinDeviceRow>('SELECT * FROM staff_pin_devices WHERE id = ?').get(id)
