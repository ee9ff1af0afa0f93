/**
 * Staff sign-in and the member's own account (api-v1 §4.7, §5; docs/staff.md): email + password
 * (+ TOTP when two-factor is on), PIN on an enrolled store device with a per-device lock-out,
 * the member's profile, logout of this device, two-factor setup, and push devices.
 */
import * as v from 'valibot'
import { defineOp, type Access } from '../op.ts'
import { staffOf, storeOf } from '../scope.ts'
import { RevokedSchema } from '../schemas/common.ts'
import { RateLimiter } from '../../ratelimit.ts'
import { perServer } from '../../per-server.ts'
import { ApiError, invalidField } from '../../errors.ts'
import { dummyHash, verifySecret } from '../../auth/passwords.ts'
import {
  hashPin, issueStaffToken, newTotpSecret, saltOf, sameHash, storePinSalt, totpUri, verifyTotp, TOTP_PARAMS,
} from '../../auth/staff.ts'
import { PIN_LOCKOUT, findPinDevice, pinSucceeded, reservePinAttempt } from '../../auth/pin-devices.ts'
import { effectivePermissions, parseOverrides, STAFF_PERMISSIONS, STAFF_ROLES } from '../../domain/permissions.ts'
import {
  claimTotpStep, enableTotp, pinHashesOfStore, registerPushDevice, revokeStaffToken, setPendingTotp, staffByEmail, staffById,
  unregisterPushDevice, type StaffRow,
} from '../../storage/staff.ts'
import type { Services } from '../../services.ts'
import { named } from '../schemas/named.ts'
import { WEB_TOKEN_HINT, webTokenIsSubscription } from '../../providers/web-subscription.ts'

const tag = 'Staff'
/** Sign-in needs no credential; the store comes from the path (public, like the menu). */
const signIn: Access = { public: true }
/** Every member, whatever their permissions: their own profile, devices and sign-out. */
const anyMember: Access = { staff: 'any' }

export const StaffSchema = {
  type: 'object', required: ['id', 'role', 'permissions'],
  properties: {
    id: { type: 'integer' }, restaurant_id: { type: 'integer' }, name: { type: 'string' }, email: { type: 'string' },
    role: { type: 'string', enum: [...STAFF_ROLES] }, permissions: { type: 'array', items: { type: 'string', enum: [...STAFF_PERMISSIONS] } },
    station: { anyOf: [{ type: 'string' }, { type: 'null' }] }, two_factor_enabled: { type: 'boolean' },
  },
}
named('Staff', StaffSchema)
const LoginSchema = { type: 'object', required: ['token', 'staff'], properties: { token: { type: 'string' }, staff: StaffSchema } }

export function staffView(r: StaffRow) {
  return {
    id: r.id, restaurant_id: r.store_id, name: r.name, email: r.email, role: r.role,
    permissions: effectivePermissions(r.role, parseOverrides(r.permissions)), station: r.station, two_factor_enabled: r.totp_secret !== null,
  }
}

/** A member whose token was just resolved (or who was just signed in) exists: a miss is a server bug. */
function memberRow(svc: Services, staffId: number): StaffRow {
  const row = staffById(svc.db, staffId)
  if (!row) throw new ApiError('internal_error', 'Staff member vanished.')
  return row
}

// ---- sign-in ------------------------------------------------------------------------------------

const Device = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(80))
const LoginInput = v.object({
  email: v.pipe(v.string(), v.trim(), v.email(), v.maxLength(254)),
  password: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  device: v.optional(Device, 'app'),
  totp_code: v.optional(v.pipe(v.string(), v.regex(/^\d{6}$/, 'A TOTP code is 6 digits.'))),
})
/** `device` is the key of a device enrolled for PIN sign-in (docs/staff.md "PIN devices"). */
const PinInput = v.object({ pin: v.pipe(v.string(), v.regex(/^\d{4,8}$/, 'A PIN is 4 to 8 digits.')), device: Device })

const wrongCode = () => new ApiError('unauthenticated', 'Wrong or already used two-factor code.')

export const signInWithPassword = defineOp({
  id: 'staff.sign_in.password', tag, summary: 'Staff sign-in with email and password (+ `totp_code` when two-factor is on)',
  description: 'Returns `{token, staff}`; the token is for this `device` (an earlier token of the same device is revoked). Wrong credentials: 401 `unauthenticated`; two-factor on and no code: 401 `two_factor_required`. 10 per minute per address and store.',
  access: signIn, scope: ['store'], input: LoginInput, output: LoginSchema,
  run: async (ctx, input) => {
    const { svc } = ctx
    const row = staffByEmail(svc.db, storeOf(ctx).id, input.email)
    const good = await verifySecret(input.password, row?.password_hash ?? await dummyHash())
    if (!row || !good) throw new ApiError('unauthenticated', 'Wrong email or password.')
    let step: number | null = null
    if (row.totp_secret) {
      if (!input.totp_code) throw new ApiError('two_factor_required')
      step = verifyTotp(row.totp_secret, input.totp_code, row.totp_last_step)
      if (step === null) throw wrongCode()
    }
    const token = await svc.committer.write((db) => {
      if (step !== null && !claimTotpStep(db, row.id, step)) throw wrongCode()
      return issueStaffToken(db, row.id, input.device, 'password')
    })
    return { token, staff: staffView(memberRow(svc, row.id)) }
  },
})

/**
 * Keys that are not an enrolled device of the store, per client address across all stores: such
 * attempts never reach a PIN check or any counter of the store, so they only cost the sender.
 */
const UNKNOWN_DEVICES_PER_MINUTE = 10
const unknownDevices = perServer(() => new RateLimiter(UNKNOWN_DEVICES_PER_MINUTE))
/** Its own code, so a screen knows to ask for enrollment again rather than for another PIN. */
const notEnrolled = () => new ApiError('device_not_enrolled')

/** The member whose PIN this is (the store's salt first, then PINs hashed before the store had one). */
async function memberByPin(svc: Services, storeId: number, pin: string, salt: string): Promise<number | undefined> {
  const hash = await hashPin(pin, salt)
  const rows = pinHashesOfStore(svc.db, storeId)
  const match = rows.find((r) => saltOf(r.pin_hash) === salt && sameHash(r.pin_hash, hash))
  if (match) return match.id
  // PINs hashed before the store had a salt (own salt each) are checked one by one.
  const legacy = rows.filter((r) => saltOf(r.pin_hash) !== salt)
  const ok = await Promise.all(legacy.map((r) => verifySecret(pin, r.pin_hash)))
  return legacy.find((_, i) => ok[i])?.id
}

export const signInWithPin = defineOp({
  id: 'staff.sign_in.pin', tag, summary: 'Staff sign-in with a PIN on an enrolled store device',
  description: `\`device\` is the key a manager got when enrolling this device (\`POST /staff/pin-devices\` or \`POST /restaurants/{id}/pin-devices\`). A key that is not an enrolled, unrevoked device of this store: 401 \`device_not_enrolled\`, before any PIN check (${UNKNOWN_DEVICES_PER_MINUTE} per minute per address, then 429). Wrong PINs are counted per device: ${PIN_LOCKOUT.deviceFailures} within ${PIN_LOCKOUT.windowMs / 60_000} minutes lock that device for ${PIN_LOCKOUT.lockMs / 60_000} minutes (429 \`locked_out\` with \`Retry-After\`); other devices are not affected. A correct PIN resets the device's count. 10 per minute per address and store.`,
  access: signIn, scope: ['store'], input: PinInput, output: LoginSchema,
  run: async (ctx, input) => {
    const { svc } = ctx
    const store = storeOf(ctx)
    if (!findPinDevice(svc.db, store.id, input.device)) {
      const d = unknownDevices(svc).take(ctx.ip)
      if (!d.allowed) throw new ApiError('rate_limited', `Too many unknown devices from this address; retry in ${d.retryAfterSec} s.`, undefined, { 'Retry-After': String(d.retryAfterSec) })
      throw notEnrolled()
    }
    // The attempt is counted before the slow hash runs, so parallel guesses cannot pass the limit;
    // the device is looked up again inside the write, so a revocation in between wins.
    const gate = await svc.committer.write((db) => {
      const device = findPinDevice(db, store.id, input.device)
      return device ? { deviceId: device.id, lockedUntil: reservePinAttempt(db, device.id, Date.now()), salt: storePinSalt(db, store.id) } : null
    })
    if (!gate) throw notEnrolled()
    if (gate.lockedUntil !== null) {
      const secs = Math.max(1, Math.ceil((gate.lockedUntil - Date.now()) / 1000))
      throw new ApiError('locked_out', `Too many wrong PINs on this device; try again in ${secs} s.`, undefined, { 'Retry-After': String(secs) })
    }
    const staffId = await memberByPin(svc, store.id, input.pin, gate.salt)
    if (staffId === undefined) throw new ApiError('unauthenticated', 'Wrong PIN.')
    const { deviceId } = gate
    const token = await svc.committer.write((db) => {
      // Revoked while the PIN was being hashed: no token, or it would outlive its device.
      if (findPinDevice(db, store.id, input.device)?.id !== deviceId) throw notEnrolled()
      pinSucceeded(db, deviceId, Date.now())
      // The key is a secret, so the token's device label is the device's id, never the key.
      return issueStaffToken(db, staffId, `pin-device:${deviceId}`, 'pin', deviceId)
    })
    return { token, staff: staffView(memberRow(svc, staffId)) }
  },
})

// ---- the member's own account -------------------------------------------------------------------

export const getMe = defineOp({
  id: 'staff.me.get', tag, summary: 'The signed-in staff member: role, effective permissions, station',
  access: anyMember, scope: ['store'], output: StaffSchema,
  run: (ctx) => staffView(memberRow(ctx.svc, staffOf(ctx).staffId)),
})

export const logout = defineOp({
  id: 'staff.logout', tag, summary: 'Revoke the token of this request (this device only)',
  access: anyMember, scope: ['store'],
  output: RevokedSchema,
  run: async (ctx) => {
    const { tokenId } = staffOf(ctx)
    await ctx.svc.committer.write((db) => revokeStaffToken(db, tokenId))
    // Kitchen screens signed in with this token close now, not at their next frame.
    ctx.svc.kds.tokenRevoked(tokenId)
    return { revoked: true }
  },
})

const alreadyOn = () => new ApiError('conflict', 'Two-factor sign-in is already on.')

export const startTwoFactor = defineOp({
  id: 'staff.two_factor.setup', tag, summary: 'Start two-factor sign-in: a new TOTP secret (RFC 6238)',
  description: 'Returns `{secret, otpauth_url, algorithm, digits, period}` to load into an authenticator app; nothing changes until `/staff/2fa/confirm` gets a valid code. 409 `conflict` when two-factor is already on.',
  access: anyMember, scope: ['store'],
  output: { type: 'object', required: ['secret', 'otpauth_url'], properties: { secret: { type: 'string' }, otpauth_url: { type: 'string' }, algorithm: { type: 'string' }, digits: { type: 'integer' }, period: { type: 'integer' } } },
  run: async (ctx) => {
    const row = memberRow(ctx.svc, staffOf(ctx).staffId)
    if (row.totp_secret) throw alreadyOn()
    const secret = newTotpSecret()
    await ctx.svc.committer.write((db) => setPendingTotp(db, row.id, secret))
    return { secret, otpauth_url: totpUri(secret, row.email, `Dispatch · ${storeOf(ctx).title}`), ...TOTP_PARAMS }
  },
})

export const confirmTwoFactor = defineOp({
  id: 'staff.two_factor.confirm', tag, summary: 'Turn two-factor sign-in on with a first code from the app',
  description: 'From now on `POST /restaurants/{id}/staff/login` needs `totp_code`. A wrong code: 422 `otp_invalid`; no setup started: 409 `conflict`.',
  access: anyMember, scope: ['store'],
  input: v.object({ code: v.pipe(v.string(), v.regex(/^\d{6}$/, 'A TOTP code is 6 digits.')) }),
  output: { type: 'object', required: ['two_factor_enabled'], properties: { two_factor_enabled: { type: 'boolean' } } },
  run: async (ctx, { code }) => {
    const row = memberRow(ctx.svc, staffOf(ctx).staffId)
    if (row.totp_secret) throw alreadyOn()
    const pending = row.totp_pending
    if (!pending) throw new ApiError('conflict', 'Start with POST /staff/2fa/setup.')
    const step = verifyTotp(pending, code, null)
    if (step === null) throw invalidField('code', 'The code does not match; check the authenticator app and the clock.', 'otp_invalid')
    await ctx.svc.committer.write((db) => enableTotp(db, row.id, pending, step))
    return { two_factor_enabled: true }
  },
})

// ---- push devices (docs/staff.md "Push") --------------------------------------------------------

const DeviceToken = v.pipe(v.string(), v.trim(), v.minLength(8), v.maxLength(4096))

export const registerPush = defineOp({
  id: 'staff.push.register', tag, summary: 'Receive push alerts (new orders) on this device',
  description: 'Body `{device_token, platform: ios|android|web}`. Registering a token again (also from another member) moves it to the caller.',
  access: anyMember, scope: ['store'],
  // Platform web: the browser's PushSubscription JSON (docs/providers.md "Registering a browser").
  input: v.pipe(
    v.object({ device_token: DeviceToken, platform: v.picklist(['ios', 'android', 'web']) }),
    v.forward(v.partialCheck([['device_token'], ['platform']], webTokenIsSubscription, WEB_TOKEN_HINT), ['device_token']),
  ),
  output: { type: 'object', required: ['registered'], properties: { registered: { type: 'boolean' }, device_token: { type: 'string' }, platform: { type: 'string' } } },
  run: async (ctx, { device_token, platform }) => {
    const { staffId } = staffOf(ctx)
    await ctx.svc.committer.write((db) => registerPushDevice(db, staffId, device_token, platform))
    return { registered: true, device_token, platform }
  },
})

export const unregisterPush = defineOp({
  id: 'staff.push.unregister', tag, summary: 'Stop push alerts on this device',
  description: '`unregistered` is false when the token was not registered to the caller (someone else\'s token is never touched).',
  access: anyMember, scope: ['store'],
  input: v.object({ device_token: DeviceToken }),
  output: { type: 'object', required: ['unregistered'], properties: { unregistered: { type: 'boolean' } } },
  run: async (ctx, { device_token }) => {
    const { staffId } = staffOf(ctx)
    return { unregistered: await ctx.svc.committer.write((db) => unregisterPushDevice(db, staffId, device_token)) }
  },
})

export const staffOps = [signInWithPassword, signInWithPin, getMe, logout, startTwoFactor, confirmTwoFactor, registerPush, unregisterPush]
