/**
 * Staff sign-in (api-v1 §4.7, §5; docs/staff.md): email + password (+ TOTP when two-factor is on),
 * PIN on a store device with a lock-out, `GET /staff/me`, logout of this device, two-factor setup.
 */
import * as v from 'valibot'
import { route } from '../route.ts'
import { ApiError, notFound } from '../../errors.ts'
import { hashSecretSync, verifySecret } from '../../auth/passwords.ts'
import {
  PIN_LOCKOUT, hashPin, issueStaffToken, newTotpSecret, pinSucceeded, reservePinAttempt, saltOf, sameHash, storePinSalt,
  totpUri, verifyTotp, TOTP_PARAMS, type StaffRow,
} from '../../auth/staff.ts'
import { effectivePermissions, parseOverrides, STAFF_PERMISSIONS, STAFF_ROLES } from '../../domain/permissions.ts'
import type { Services } from '../../services.ts'
import { nowIso } from '../../storage/db.ts'

const tag = 'Staff'
/** api-v1 §8 gives 10/min for customer login; staff sign-in gets the same budget per address and store. */
const LOGIN_RATE = { perMinute: 10 }

const Device = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(80))
const LoginBody = v.object({
  email: v.pipe(v.string(), v.trim(), v.email(), v.maxLength(254)),
  password: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  device: v.optional(Device, 'app'),
  totp_code: v.optional(v.pipe(v.string(), v.regex(/^\d{6}$/, 'A TOTP code is 6 digits.'))),
})
const PinBody = v.object({ pin: v.pipe(v.string(), v.regex(/^\d{4,8}$/, 'A PIN is 4 to 8 digits.')), device: Device })
const ConfirmBody = v.object({ code: v.pipe(v.string(), v.regex(/^\d{6}$/, 'A TOTP code is 6 digits.')) })

/** Spent on unknown emails too, so the answer time does not reveal which emails exist. */
const DUMMY_HASH = hashSecretSync('not-a-real-password')

export const StaffSchema = {
  type: 'object', required: ['id', 'role', 'permissions'],
  properties: {
    id: { type: 'integer' }, restaurant_id: { type: 'integer' }, name: { type: 'string' }, email: { type: 'string' },
    role: { type: 'string', enum: [...STAFF_ROLES] }, permissions: { type: 'array', items: { type: 'string', enum: [...STAFF_PERMISSIONS] } },
    station: { anyOf: [{ type: 'string' }, { type: 'null' }] }, two_factor_enabled: { type: 'boolean' },
  },
}
const LoginSchema = { type: 'object', required: ['token', 'staff'], properties: { token: { type: 'string' }, staff: StaffSchema } }

export function staffView(r: StaffRow) {
  return {
    id: r.id, restaurant_id: r.store_id, name: r.name, email: r.email, role: r.role,
    permissions: effectivePermissions(r.role, parseOverrides(r.permissions)), station: r.station, two_factor_enabled: r.totp_secret !== null,
  }
}

const staffRow = (svc: Services, id: number) => svc.db.prepare<[number], StaffRow>('SELECT * FROM staff WHERE id = ?').get(id)
const storeOf = (svc: Services, id: string | undefined) => {
  const store = svc.stores.byId(Number(id))
  if (!store) throw notFound('restaurant')
  return store
}

export const staffAuthRoutes = [
  route({
    method: 'POST', path: '/restaurants/{id}/staff/login', tag, auth: 'none', body: LoginBody, rateLimit: LOGIN_RATE, response: LoginSchema,
    summary: 'Staff sign-in with email and password (+ `totp_code` when two-factor is on)',
    description: 'Returns `{token, staff}`; the token is for this `device` (an earlier token of the same device is revoked). Wrong credentials: 401 `unauthenticated`; two-factor on and no code: 401 `two_factor_required`. 10 per minute per address and store.',
    handler: async ({ svc, params, body }) => {
      const store = storeOf(svc, params.id)
      const row = svc.db.prepare<[number, string], StaffRow>('SELECT * FROM staff WHERE store_id = ? AND email = ? COLLATE NOCASE').get(store.id, body.email)
      const good = await verifySecret(body.password, row?.password_hash ?? DUMMY_HASH)
      if (!row || !good) throw new ApiError('unauthenticated', 'Wrong email or password.')
      let step: number | null = null
      if (row.totp_secret) {
        if (!body.totp_code) throw new ApiError('two_factor_required')
        step = verifyTotp(row.totp_secret, body.totp_code, row.totp_last_step)
        if (step === null) throw new ApiError('unauthenticated', 'Wrong or already used two-factor code.')
      }
      const token = await svc.committer.write((db) => {
        if (step !== null) {
          // Two logins racing with one code: only the first may use its time step (RFC 6238 §5.2).
          const r = db.prepare('UPDATE staff SET totp_last_step = ? WHERE id = ? AND (totp_last_step IS NULL OR totp_last_step < ?)').run(step, row.id, step)
          if (r.changes === 0) throw new ApiError('unauthenticated', 'Wrong or already used two-factor code.')
        }
        return issueStaffToken(db, row.id, body.device, 'password')
      })
      return { token, staff: staffView(staffRow(svc, row.id)!) }
    },
  }),
  route({
    method: 'POST', path: '/restaurants/{id}/staff/pin', tag, auth: 'none', body: PinBody, rateLimit: LOGIN_RATE, response: LoginSchema,
    summary: 'Staff sign-in with a PIN on a store device',
    description: `PINs are short, so wrong PINs are counted: ${PIN_LOCKOUT.deviceFailures} within 15 minutes lock that device, ${PIN_LOCKOUT.storeFailures} lock PIN sign-in for the whole store, for 15 minutes (429 \`locked_out\` with \`Retry-After\`). A correct PIN resets the device's count.`,
    handler: async ({ svc, params, body }) => {
      const store = storeOf(svc, params.id)
      // The attempt is counted before the slow hash runs, so parallel guesses cannot pass the limit.
      const gate = await svc.committer.write((db) => ({ lockedUntil: reservePinAttempt(db, store.id, body.device, Date.now()), salt: storePinSalt(db, store.id) }))
      if (gate.lockedUntil !== null) {
        const secs = Math.max(1, Math.ceil((gate.lockedUntil - Date.now()) / 1000))
        throw new ApiError('locked_out', `Too many wrong PINs; try again in ${secs} s.`, undefined, { 'Retry-After': String(secs) })
      }
      const hash = await hashPin(body.pin, gate.salt)
      const rows = svc.db.prepare<[number], { id: number; pin_hash: string }>('SELECT id, pin_hash FROM staff WHERE store_id = ? AND pin_hash IS NOT NULL').all(store.id)
      let match = rows.find((r) => saltOf(r.pin_hash) === gate.salt && sameHash(r.pin_hash, hash))
      if (!match) {
        // PINs hashed before the store had a salt (own salt each) are checked one by one.
        const legacy = rows.filter((r) => saltOf(r.pin_hash) !== gate.salt)
        const ok = await Promise.all(legacy.map((r) => verifySecret(body.pin, r.pin_hash)))
        match = legacy.find((_, i) => ok[i])
      }
      if (!match) throw new ApiError('unauthenticated', 'Wrong PIN.')
      const staffId = match.id
      const token = await svc.committer.write((db) => {
        pinSucceeded(db, store.id, body.device)
        return issueStaffToken(db, staffId, body.device, 'pin')
      })
      return { token, staff: staffView(staffRow(svc, staffId)!) }
    },
  }),
  route({
    method: 'GET', path: '/staff/me', tag, auth: 'staff', summary: 'The signed-in staff member: role, effective permissions, station', response: StaffSchema,
    handler: ({ svc, principal }) => staffView(staffRow(svc, principal.staffId)!),
  }),
  route({
    method: 'POST', path: '/staff/logout', tag, auth: 'staff', summary: 'Revoke the token of this request (this device only)',
    response: { type: 'object', required: ['revoked'], properties: { revoked: { type: 'boolean' } } },
    handler: async ({ svc, principal }) => {
      await svc.committer.write((db) => db.prepare('UPDATE staff_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(nowIso(), principal.tokenId))
      svc.kds.tokenRevoked(principal.tokenId)
      return { revoked: true }
    },
  }),
  route({
    method: 'POST', path: '/staff/2fa/setup', tag, auth: 'staff', summary: 'Start two-factor sign-in: a new TOTP secret (RFC 6238)',
    description: 'Returns `{secret, otpauth_url, algorithm, digits, period}` to load into an authenticator app; nothing changes until `/staff/2fa/confirm` gets a valid code. 409 `conflict` when two-factor is already on.',
    response: { type: 'object', required: ['secret', 'otpauth_url'], properties: { secret: { type: 'string' }, otpauth_url: { type: 'string' }, algorithm: { type: 'string' }, digits: { type: 'integer' }, period: { type: 'integer' } } },
    handler: async ({ svc, principal }) => {
      const row = staffRow(svc, principal.staffId)!
      if (row.totp_secret) throw new ApiError('conflict', 'Two-factor sign-in is already on.')
      const secret = newTotpSecret()
      await svc.committer.write((db) => db.prepare('UPDATE staff SET totp_pending = ? WHERE id = ?').run(secret, row.id))
      const store = svc.stores.byId(principal.storeId)
      return { secret, otpauth_url: totpUri(secret, row.email, store ? `Dispatch · ${store.title}` : 'Dispatch'), ...TOTP_PARAMS }
    },
  }),
  route({
    method: 'POST', path: '/staff/2fa/confirm', tag, auth: 'staff', body: ConfirmBody, summary: 'Turn two-factor sign-in on with a first code from the app',
    description: 'From now on `POST /restaurants/{id}/staff/login` needs `totp_code`. A wrong code: 422 `otp_invalid`; no setup started: 409 `conflict`.',
    response: { type: 'object', required: ['two_factor_enabled'], properties: { two_factor_enabled: { type: 'boolean' } } },
    handler: async ({ svc, principal, body }) => {
      const row = staffRow(svc, principal.staffId)!
      if (row.totp_secret) throw new ApiError('conflict', 'Two-factor sign-in is already on.')
      if (!row.totp_pending) throw new ApiError('conflict', 'Start with POST /staff/2fa/setup.')
      const step = verifyTotp(row.totp_pending, body.code, null)
      if (step === null) throw new ApiError('otp_invalid', 'The code does not match; check the authenticator app and the clock.')
      const pending = row.totp_pending
      await svc.committer.write((db) => db.prepare('UPDATE staff SET totp_secret = ?, totp_pending = NULL, totp_last_step = ? WHERE id = ?').run(pending, step, row.id))
      return { two_factor_enabled: true }
    },
  }),
]
