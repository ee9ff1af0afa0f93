/**
 * Staff authentication (api-v1 §4.7, §5 "Staff token"): device tokens from email+password (+ TOTP
 * when two-factor is on) or PIN login on an enrolled device (src/auth/pin-devices.ts), PIN hashing
 * with a per-store salt, TOTP. Tokens are looked up on every use, so a logout applies at once.
 */
import { randomBytes, scrypt, scryptSync, timingSafeEqual } from 'node:crypto'
import * as OTPAuth from 'otpauth'
import type { Db } from '../storage/db.ts'
import { nowIso } from '../storage/db.ts'
import { TOKEN_PREFIX, newToken, sha256Hex } from './tokens.ts'
import { effectivePermissions, parseOverrides, type StaffPermission } from '../domain/permissions.ts'
import type { StaffRow } from '../storage/staff.ts'

export interface StaffPrincipal {
  kind: 'staff'
  staffId: number
  storeId: number
  ownerId: number
  tokenId: number
  role: string
  permissions: StaffPermission[]
  /** The KDS station this member works, if any (its screens default to it). */
  station: string | null
}

/** The row type lives with the staff repository; re-exported for the callers that know it from here. */
export type { StaffRow } from '../storage/staff.ts'

export function createStaffAuth(db: Db) {
  const byHash = db.prepare<[string], StaffRow & { token_id: number; owner_id: number }>(
    `SELECT s.*, t.id AS token_id, st.owner_id FROM staff_tokens t JOIN staff s ON s.id = t.staff_id JOIN stores st ON st.id = s.store_id
     WHERE t.token_hash = ? AND t.revoked_at IS NULL`,
  )
  return {
    resolve(rawToken: string): StaffPrincipal | null {
      if (!rawToken.startsWith(TOKEN_PREFIX.staff)) return null
      const r = byHash.get(sha256Hex(rawToken))
      if (!r) return null
      return {
        kind: 'staff', staffId: r.id, storeId: r.store_id, ownerId: r.owner_id, tokenId: r.token_id, role: r.role,
        permissions: effectivePermissions(r.role, parseOverrides(r.permissions)), station: r.station,
      }
    },
  }
}

/**
 * Issue a token for one device; an earlier token of the same member and device is revoked.
 * `pinDeviceId` ties a PIN token to its enrolled device, so revoking the device revokes it. Call inside a durable write.
 */
export function issueStaffToken(db: Db, staffId: number, device: string, method: 'password' | 'pin', pinDeviceId: number | null = null): string {
  const now = nowIso()
  db.prepare('UPDATE staff_tokens SET revoked_at = ? WHERE staff_id = ? AND device = ? AND revoked_at IS NULL').run(now, staffId, device)
  const token = newToken('staff')
  db.prepare('INSERT INTO staff_tokens (staff_id, token_hash, device, method, created_at, pin_device_id) VALUES (?, ?, ?, ?, ?, ?)').run(staffId, sha256Hex(token), device, method, now, pinDeviceId)
  return token
}

// ---- PINs ----------------------------------------------------------------------------------------

// Same cost as passwords (src/auth/passwords.ts); the salt is the store's, so one hash finds the member.
const PIN_PARAMS = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }
const encodePin = (salt: string, key: Buffer) => `scrypt$${PIN_PARAMS.N}$${salt}$${key.toString('base64url')}`

/** The store's PIN salt, created on first use. */
export function storePinSalt(db: Db, storeId: number): string {
  const row = db.prepare<[number], { salt: string }>('SELECT salt FROM staff_pin_salts WHERE store_id = ?').get(storeId)
  if (row) return row.salt
  const salt = randomBytes(16).toString('base64url')
  db.prepare('INSERT OR IGNORE INTO staff_pin_salts (store_id, salt) VALUES (?, ?)').run(storeId, salt)
  return db.prepare<[number], { salt: string }>('SELECT salt FROM staff_pin_salts WHERE store_id = ?').get(storeId)!.salt
}

export function hashPinSync(pin: string, salt: string): string {
  return encodePin(salt, scryptSync(pin, Buffer.from(salt, 'base64url'), 32, PIN_PARAMS))
}

export function hashPin(pin: string, salt: string): Promise<string> {
  return new Promise((resolve, reject) =>
    scrypt(pin, Buffer.from(salt, 'base64url'), 32, PIN_PARAMS, (err, key) => (err ? reject(err) : resolve(encodePin(salt, key)))),
  )
}

/** Constant-time equality of two encoded hashes. */
export function sameHash(a: string, b: string): boolean {
  const ba = Buffer.from(a)
  const bb = Buffer.from(b)
  return ba.length === bb.length && timingSafeEqual(ba, bb)
}

/** The salt inside an encoded `scrypt$N$salt$key` hash. */
export const saltOf = (encoded: string): string | undefined => encoded.split('$')[2]

// ---- TOTP (RFC 6238) --------------------------------------------------------------------------------

export const TOTP_PARAMS = { algorithm: 'SHA1', digits: 6, period: 30 } as const

export function newTotpSecret(): string {
  return new OTPAuth.Secret({ size: 20 }).base32
}

export function totpUri(secret: string, label: string, issuer: string): string {
  return new OTPAuth.TOTP({ issuer, label, secret: OTPAuth.Secret.fromBase32(secret), ...TOTP_PARAMS }).toString()
}

/**
 * The time step a code is valid for (±1 step for clock drift), or null. Steps at or before
 * `lastStep` are refused so an observed code cannot be replayed (RFC 6238 §5.2).
 */
export function verifyTotp(secret: string, code: string, lastStep: number | null, nowMs = Date.now()): number | null {
  if (!/^\d{6}$/.test(code)) return null
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), ...TOTP_PARAMS })
  const delta = totp.validate({ token: code, timestamp: nowMs, window: 1 })
  if (delta === null) return null
  const step = Math.floor(nowMs / 1000 / TOTP_PARAMS.period) + delta
  return lastStep !== null && step <= lastStep ? null : step
}
