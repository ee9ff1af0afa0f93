/**
 * Customer sign-in (api-v1 §4.5, §5, §8; docs/customers.md): customers are per store, so these
 * public operations resolve the store they sign in at (`scope: ['store']`, a missing store is a
 * 404 before the input is read). The per-address limits of api-v1 §8 (register and login 10 per
 * minute, OTP requests 6) are the bindings' `rateLimit`; on top, texts and code checks are capped
 * per phone number across every store and address (OTP_PER_PHONE). SMS codes are single-use,
 * expire, and burn after 5 wrong tries.
 */
import * as v from 'valibot'
import { defineOp, type Access } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Birthday, Consents, CustomerSchema, customerView } from '../schemas/customers.ts'
import { ApiError, invalidField } from '../../errors.ts'
import { normalizePhone } from '../../domain/delivery.ts'
import { dummyHash, hashSecret, verifySecret } from '../../auth/passwords.ts'
import { OTP, OTP_PER_PHONE, hashOtp, issueCustomerToken, newOtpCode, otpMatches } from '../../auth/customer.ts'
import { phoneLimit, type Window } from '../../auth/phone-limits.ts'
import type { Services } from '../../services.ts'
import type { Db } from '../../storage/db.ts'
import { nowIso } from '../../storage/db.ts'
import { appendEvent, type OutboxEvent } from '../../storage/outbox.ts'
import type { StoreRow } from '../../storage/stores.ts'
import { customerOtps, customers, isUniqueViolation, type NewCustomer } from '../../storage/customers.ts'

const tag = 'Customer app'
const access: Access = { public: true }

const Email = v.pipe(v.string(), v.trim(), v.toLowerCase(), v.email(), v.maxLength(254))
const Device = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(80))
const Phone = v.pipe(v.string(), v.maxLength(40), v.transform((s) => normalizePhone(s) ?? ''), v.minLength(1, 'Not a phone number.'))

const RegisterInput = v.object({
  name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(120)),
  email: Email,
  password: v.pipe(v.string(), v.minLength(8, 'Use at least 8 characters.'), v.maxLength(200)),
  phone: v.optional(v.nullable(Phone)),
  birthday: v.optional(v.nullable(Birthday)),
  consents: v.optional(Consents),
  device: v.optional(Device, 'app'),
})
const LoginInput = v.object({ email: Email, password: v.pipe(v.string(), v.minLength(1), v.maxLength(200)), device: Device })
const OtpRequestInput = v.object({ phone: Phone })
const OtpVerifyInput = v.object({ phone: Phone, code: v.pipe(v.string(), v.regex(/^\d{6}$/, 'The code is 6 digits.')), device: v.optional(Device, 'app') })

/** The per-phone caps (issue 10 #4): one number, however many stores and addresses ask. */
const smsPerPhone = phoneLimit(OTP_PER_PHONE.sms)
const verifiesPerPhone = phoneLimit(OTP_PER_PHONE.verify)
const describe = (ws: readonly Window[]) => ws.map((w) => `${w.limit} per ${w.periodMs >= 3_600_000 ? `${w.periodMs / 3_600_000} hours` : `${w.periodMs / 60_000} minutes`}`).join(' and ')

const TokenSchema = { type: 'object', required: ['token', 'customer'], properties: { token: { type: 'string' }, customer: CustomerSchema, created: { type: 'boolean' } } }
/** Insert a customer and its `customer.created` event (api-v1 §6) in the caller's write. */
function insertCustomer(db: Db, store: StoreRow, c: NewCustomer, source: 'register' | 'otp', events: OutboxEvent[]): number {
  const id = customers.insert(db, store.id, c, nowIso())
  events.push(appendEvent(db, { ownerId: store.owner_id, storeId: store.id, event: 'customer.created', data: { customer_id: id, restaurant_id: store.id, source } }))
  return id
}

const signedIn = (svc: Services, customerId: number, token: string) => ({ token, customer: customerView(customers.byId(svc.db, customerId)!) })

export const register = defineOp({
  id: 'customer.auth.register', tag, access, scope: ['store'], input: RegisterInput, output: TokenSchema,
  summary: 'Create a customer account at this store; returns a token for this device',
  description: 'Body `{name, email, password (8+), phone?, birthday?, consents?, device?}`. The same email at another store is another customer. Emits `customer.created`. 10 per minute.',
  run: async (ctx, body) => {
    const store = storeOf(ctx)
    const passwordHash = await hashSecret(body.password)
    const events: OutboxEvent[] = []
    let out: { id: number; token: string }
    try {
      out = await ctx.svc.committer.write((db) => {
        const id = insertCustomer(db, store, { name: body.name, email: body.email, phone: body.phone ?? null, password_hash: passwordHash, birthday: body.birthday ?? null, consents: body.consents ?? {} }, 'register', events)
        return { id, token: issueCustomerToken(db, id, body.device) }
      })
    } catch (err) {
      if (isUniqueViolation(err)) throw new ApiError('validation_failed', undefined, { email: ['An account with this email already exists at this store.'] })
      throw err
    }
    ctx.svc.events.publish(events)
    return signedIn(ctx.svc, out.id, out.token)
  },
})

export const login = defineOp({
  id: 'customer.auth.login', tag, access, scope: ['store'], input: LoginInput, output: TokenSchema,
  summary: 'Sign in with email and password; returns `{token, customer}` for this device',
  description: 'Signing in again on the same `device` replaces that device\'s token; other devices stay signed in. Wrong credentials: 401. 10 per minute.',
  run: async (ctx, body) => {
    const row = customers.byEmail(ctx.svc.db, storeOf(ctx).id, body.email)
    const good = await verifySecret(body.password, row?.password_hash ?? await dummyHash())
    if (!row || !row.password_hash || !good) throw new ApiError('unauthenticated', 'Wrong email or password.')
    const token = await ctx.svc.committer.write((db) => issueCustomerToken(db, row.id, body.device))
    return signedIn(ctx.svc, row.id, token)
  },
})

export const requestOtp = defineOp({
  id: 'customer.auth.otp.request', tag, access, scope: ['store'], input: OtpRequestInput,
  output: { type: 'object', required: ['sent', 'expires_in'], properties: { sent: { type: 'boolean' }, expires_in: { type: 'integer' } } },
  summary: 'Send a one-time sign-in code by SMS',
  description: `The code has ${OTP.digits} digits, expires after ${OTP.ttlMs / 60_000} minutes and replaces earlier codes for the number. The answer is the same whether or not the number has an account. 6 per minute per address and store; texts per phone number across all stores: at most ${describe(OTP_PER_PHONE.sms)} (429 \`rate_limited\` with \`Retry-After\`, and no text).`,
  run: async (ctx, body) => {
    const store = storeOf(ctx)
    smsPerPhone(ctx.svc, body.phone)
    const code = newOtpCode()
    const now = Date.now()
    await ctx.svc.committer.write((db) => customerOtps.replace(db, store.id, body.phone, hashOtp(code), nowIso(now + OTP.ttlMs), nowIso(now)))
    await ctx.svc.sms.send(body.phone, `${code} is your ${store.title} sign-in code. It expires in ${OTP.ttlMs / 60_000} minutes.`)
    return { sent: true, expires_in: OTP.ttlMs / 1000 }
  },
})

type VerifyOutcome = { kind: 'ok'; customerId: number; created: boolean; token: string } | { kind: 'wrong'; left: number } | { kind: 'expired'; message: string }

export const verifyOtp = defineOp({
  id: 'customer.auth.otp.verify', tag, access, scope: ['store'], input: OtpVerifyInput, output: TokenSchema,
  summary: 'Sign in with the SMS code: finds or creates the customer for the phone, returns a token',
  description: `Wrong code: 422 \`otp_invalid\`; expired, already used, replaced, or after ${OTP.maxAttempts} wrong tries: 422 \`otp_expired\` (request a new code). A new customer emits \`customer.created\`; \`created\` says which happened. 10 per minute per address and store; checks per phone number across all stores: at most ${describe(OTP_PER_PHONE.verify)} (429 \`rate_limited\` with \`Retry-After\`).`,
  run: async (ctx, body) => {
    const store = storeOf(ctx)
    verifiesPerPhone(ctx.svc, body.phone)
    const events: OutboxEvent[] = []
    // Check and consume in one transaction: two racing verifies cannot both use one code.
    const r = await ctx.svc.committer.write((db): VerifyOutcome => {
      const now = Date.now()
      const otp = customerOtps.latest(db, store.id, body.phone)
      if (!otp || otp.used_at || Date.parse(otp.expires_at) <= now) return { kind: 'expired', message: 'The code has expired or was already used; request a new one.' }
      if (otp.attempts >= OTP.maxAttempts) return { kind: 'expired', message: 'Too many wrong codes; request a new one.' }
      if (!otpMatches(body.code, otp.code_hash)) {
        customerOtps.countWrong(db, otp.id)
        return { kind: 'wrong', left: OTP.maxAttempts - otp.attempts - 1 }
      }
      customerOtps.consume(db, otp.id, nowIso(now))
      const found = customers.idByPhone(db, store.id, body.phone)
      const customerId = found ?? insertCustomer(db, store, { name: null, email: null, phone: body.phone, password_hash: null, birthday: null, consents: {} }, 'otp', events)
      return { kind: 'ok', customerId, created: found === undefined, token: issueCustomerToken(db, customerId, body.device) }
    })
    if (r.kind === 'expired') throw invalidField('code', r.message, 'otp_expired')
    if (r.kind === 'wrong') {
      if (r.left <= 0) throw invalidField('code', 'Too many wrong codes; request a new one.', 'otp_expired')
      throw invalidField('code', `The code is wrong; ${r.left} tries left.`, 'otp_invalid')
    }
    ctx.svc.events.publish(events)
    return { ...signedIn(ctx.svc, r.customerId, r.token), created: r.created }
  },
})

export const customerAuthOps = [register, login, requestOtp, verifyOtp]
