/**
 * Enrolled PIN devices (docs/staff.md "PIN devices"): PIN sign-in (api-v1 §4.7 `{pin, device}`)
 * works only from a device a manager enrolled, and `device` carries that device's key. Keys are
 * 256 random bits behind a family prefix, stored only as SHA-256, like every token (ARCHITECTURE
 * "Storage"). Wrong PINs lock the device they were typed on, never the store, so only a holder
 * of a device's key can lock that device out.
 */
import { randomBytes } from 'node:crypto'
import type { Db } from '../storage/db.ts'
import { nowIso } from '../storage/db.ts'
import { sha256Hex } from './tokens.ts'

/** "dispatch staff kiosk": recognisable when leaked, like the other families (src/auth/tokens.ts). */
export const DEVICE_KEY_PREFIX = 'dsk_'

/** PINs are short: 5 wrong within 15 minutes lock that device for 15 minutes. */
export const PIN_LOCKOUT = { deviceFailures: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 } as const

/** Enrolled (not revoked) devices per store: enough for any kitchen, a bound on what one manager can create. */
export const MAX_ACTIVE_DEVICES = 100

export interface PinDeviceRow {
  id: number
  store_id: number
  name: string
  key_hash: string
  key_hint: string
  enrolled_by: 'owner' | 'staff'
  enrolled_by_staff_id: number | null
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
  failures: number
  window_start: string | null
  locked_until: string | null
}

export const newDeviceKey = (): string => DEVICE_KEY_PREFIX + randomBytes(32).toString('base64url')

export const activeDeviceCount = (db: Db, storeId: number): number =>
  db.prepare<[number], number>('SELECT COUNT(*) FROM staff_pin_devices WHERE store_id = ? AND revoked_at IS NULL').pluck().get(storeId) ?? 0

/** Enroll a device; the raw key is returned here only. Call inside a durable write. */
export function enrollPinDevice(db: Db, storeId: number, name: string, byStaffId: number | null): { id: number; key: string } {
  const key = newDeviceKey()
  const id = Number(db.prepare(`INSERT INTO staff_pin_devices (store_id, name, key_hash, key_hint, enrolled_by, enrolled_by_staff_id, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)`).run(storeId, name, sha256Hex(key), key.slice(0, DEVICE_KEY_PREFIX.length + 4), byStaffId === null ? 'owner' : 'staff', byStaffId, nowIso()).lastInsertRowid)
  return { id, key }
}

/** The enrolled, unrevoked device of this store that `key` belongs to. */
export function findPinDevice(db: Db, storeId: number, key: string): PinDeviceRow | undefined {
  if (!key.startsWith(DEVICE_KEY_PREFIX)) return undefined
  return db.prepare<[string, number], PinDeviceRow>('SELECT * FROM staff_pin_devices WHERE key_hash = ? AND store_id = ? AND revoked_at IS NULL')
    .get(sha256Hex(key), storeId)
}

/**
 * Reserve one PIN attempt on a device before the slow hash runs, so parallel guesses cannot slip
 * past the counter. Returns the lock's end (ms) when the device is locked. Call inside a durable write.
 */
export function reservePinAttempt(db: Db, deviceId: number, nowMs: number): number | null {
  const r = db.prepare<[number], Pick<PinDeviceRow, 'failures' | 'window_start' | 'locked_until'>>('SELECT failures, window_start, locked_until FROM staff_pin_devices WHERE id = ?').get(deviceId)
  if (!r) return null
  if (r.locked_until && Date.parse(r.locked_until) > nowMs) return Date.parse(r.locked_until)
  const fresh = !r.window_start || nowMs - Date.parse(r.window_start) > PIN_LOCKOUT.windowMs || r.locked_until !== null
  const failures = fresh ? 1 : r.failures + 1
  db.prepare('UPDATE staff_pin_devices SET failures = ?, window_start = ?, locked_until = ? WHERE id = ?')
    .run(failures, fresh ? nowIso(nowMs) : r.window_start, failures >= PIN_LOCKOUT.deviceFailures ? nowIso(nowMs + PIN_LOCKOUT.lockMs) : null, deviceId)
  return null
}

/** A correct PIN: the device's count starts over. Call inside a durable write. */
export function pinSucceeded(db: Db, deviceId: number, nowMs: number): void {
  db.prepare('UPDATE staff_pin_devices SET failures = 0, window_start = NULL, locked_until = NULL, last_used_at = ? WHERE id = ?').run(nowIso(nowMs), deviceId)
}

/**
 * Revoke a device and every staff token issued through it; returns those token ids (their kitchen
 * sockets must close). Revoking twice keeps the first time; null when the store has no such
 * device. Call inside a durable write.
 */
export function revokePinDevice(db: Db, storeId: number, deviceId: number): number[] | null {
  const now = nowIso()
  const r = db.prepare('UPDATE staff_pin_devices SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND store_id = ?').run(now, deviceId, storeId)
  if (r.changes === 0) return null
  const ids = db.prepare<[number], number>('SELECT id FROM staff_tokens WHERE pin_device_id = ? AND revoked_at IS NULL').pluck().all(deviceId)
  db.prepare('UPDATE staff_tokens SET revoked_at = ? WHERE pin_device_id = ? AND revoked_at IS NULL').run(now, deviceId)
  return ids
}
