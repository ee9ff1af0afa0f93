/**
 * Customer sign-in (api-v1 §4.5, §5, §8; docs/customers.md): customers are per store, so auth
 * lives under the store path. Register and login are limited to 10 per minute, OTP requests to 6
 * per minute (per address and store); SMS codes are single-use, expire, and burn after 5 wrong tries.
 */
import * as v from 'valibot'
import { route, Reply } from '../route.ts'
import { ApiError, notFound } from '../../errors.ts'
import { hashSecret, hashSecretSync, verifySecret } from '../../auth/passwords.ts'
import { OTP, hashOtp, issueCustomerToken, newOtpCode, otpMatches } from '../../auth/customer.ts'
import { normalizePhone } from '../../domain/delivery.ts'
import type { Services } from '../../services.ts'
import type { Db } from '../../storage/db.ts'
import { nowIso } from '../../storage/db.ts'
import { appendEvent, type OutboxEvent } from '../../storage/outbox.ts'
import { CustomerSchema, Consents, Birthday, customerView, type CustomerRow } from './customer-view.ts'

const tag = 'Customer app'
const LOGIN_RATE = { perMinute: 10 }
const OTP_RATE = { perMinute: 6 }

const Email = v.pipe(v.string(), v.trim(), v.toLowerCase(), v.email(), v.maxLength(254))
const Device = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(80))
const Phone = v.pipe(v.string(), v.maxLength(40), v.transform((s) => normalizePhone(s) ?? ''), v.minLength(1, 'Not a phone number.'))

const RegisterBody = v.object({
  name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(120)),
  email: Email,
  password: v.pipe(v.string(), v.minLength(8, 'Use at least 8 characters.'), v.maxLength(200)),
  phone: v.optional(v.nullable(Phone)),
  birthday: v.optional(v.nullable(Birthday)),
  consents: v.optional(Consents),
  device: v.optional(Device, 'app'),
})
const LoginBody = v.object({ email: Email, password: v.pipe(v.string(), v.minLength(1), v.maxLength(200)), device: Device })
const OtpRequestBody = v.object({ phone: Phone })
const OtpVerifyBody = v.object({ phone: Phone, code: v.pipe(v.string(), v.regex(/^\d{6}$/, 'The code is 6 digits.')), device: v.optional(Device, 'app') })

const TokenSchema = { type: 'object', required: ['token', 'customer'], properties: { token: { type: 'string' }, customer: CustomerSchema, created: { type: 'boolean' } } }
const DUMMY_HASH = hashSecretSync('not-a-real-password')

const storeOf = (svc: Services, id: string | undefined) => {
  const s = svc.stores.byId(Number(id))
  if (!s) throw notFound('restaurant')
  return s
}
const customerRow = (svc: Services, id: number) => svc.db.prepare<[number], CustomerRow>('SELECT * FROM customers WHERE id = ?').get(id)!

/** Insert a customer and its `customer.created` event (api-v1 §6) in the caller's transaction. */
function insertCustomer(db: Db, store: { id: number; owner_id: number }, c: { name: string | null; email: string | null; phone: string | null; password_hash: string | null; birthday: string | null; consents: Record<string, boolean> }, source: string, events: OutboxEvent[]): number {
  const now = nowIso()
  const id = Number(db.prepare('INSERT INTO customers (store_id, name, email, phone, password_hash, birthday, consents, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
    .run(store.id, c.name, c.email, c.phone, c.password_hash, c.birthday, JSON.stringify(c.consents), now, now).lastInsertRowid)
  events.push(appendEvent(db, { ownerId: store.owner_id, storeId: store.id, event: 'customer.created', data: { customer_id: id, restaurant_id: store.id, source } }))
  return id
}

type VerifyOutcome = { kind: 'ok'; customerId: number; created: boolean; token: string } | { kind: 'wrong'; left: number } | { kind: 'expired'; message: string }

export const customerAuthRoutes = [
  route({
    method: 'POST', path: '/restaurants/{id}/customer/register', tag, auth: 'none', body: RegisterBody, status: 201, rateLimit: LOGIN_RATE, response: TokenSchema,
    summary: 'Create a customer account at this store; returns a token for this device',
    description: 'Body `{name, email, password (8+), phone?, birthday?, consents?, device?}`. The same email at another store is another customer. Emits `customer.created`. 10 per minute.',
    handler: async ({ svc, params, body }) => {
      const store = storeOf(svc, params.id)
      const passwordHash = await hashSecret(body.password)
      const events: OutboxEvent[] = []
      let out: { id: number; token: string }
      try {
        out = await svc.committer.write((db) => {
          const id = insertCustomer(db, store, { name: body.name, email: body.email, phone: body.phone ?? null, password_hash: passwordHash, birthday: body.birthday ?? null, consents: body.consents ?? {} }, 'register', events)
          return { id, token: issueCustomerToken(db, id, body.device) }
        })
      } catch (err) {
        if (err instanceof Error && /UNIQUE constraint failed/.test(err.message)) throw new ApiError('validation_failed', undefined, { email: ['An account with this email already exists at this store.'] })
        throw err
      }
      svc.events.publish(events)
      return new Reply(201, { token: out.token, customer: customerView(customerRow(svc, out.id)) })
    },
  }),
  route({
    method: 'POST', path: '/restaurants/{id}/customer/login', tag, auth: 'none', body: LoginBody, rateLimit: LOGIN_RATE, response: TokenSchema,
    summary: 'Sign in with email and password; returns `{token, customer}` for this device',
    description: 'Signing in again on the same `device` replaces that device\'s token; other devices stay signed in. Wrong credentials: 401. 10 per minute.',
    handler: async ({ svc, params, body }) => {
      const store = storeOf(svc, params.id)
      const row = svc.db.prepare<[number, string], CustomerRow & { password_hash: string | null }>('SELECT * FROM customers WHERE store_id = ? AND email = ? COLLATE NOCASE').get(store.id, body.email)
      const good = await verifySecret(body.password, row?.password_hash ?? DUMMY_HASH)
      if (!row || !row.password_hash || !good) throw new ApiError('unauthenticated', 'Wrong email or password.')
      const token = await svc.committer.write((db) => issueCustomerToken(db, row.id, body.device))
      return { token, customer: customerView(customerRow(svc, row.id)) }
    },
  }),
  route({
    method: 'POST', path: '/restaurants/{id}/customer/otp/request', tag, auth: 'none', body: OtpRequestBody, rateLimit: OTP_RATE,
    summary: 'Send a one-time sign-in code by SMS',
    description: `The code has ${OTP.digits} digits, expires after ${OTP.ttlMs / 60_000} minutes and replaces earlier codes for the number. The answer is the same whether or not the number has an account. 6 per minute.`,
    response: { type: 'object', required: ['sent', 'expires_in'], properties: { sent: { type: 'boolean' }, expires_in: { type: 'integer' } } },
    handler: async ({ svc, params, body }) => {
      const store = storeOf(svc, params.id)
      const code = newOtpCode()
      const now = Date.now()
      await svc.committer.write((db) => {
        db.prepare('UPDATE customer_otps SET expires_at = ? WHERE store_id = ? AND phone = ? AND used_at IS NULL AND expires_at > ?').run(nowIso(now), store.id, body.phone, nowIso(now))
        db.prepare('INSERT INTO customer_otps (store_id, phone, code_hash, expires_at, created_at) VALUES (?, ?, ?, ?, ?)').run(store.id, body.phone, hashOtp(code), nowIso(now + OTP.ttlMs), nowIso(now))
      })
      await svc.sms.send(body.phone, `${code} is your ${store.title} sign-in code. It expires in ${OTP.ttlMs / 60_000} minutes.`)
      return { sent: true, expires_in: OTP.ttlMs / 1000 }
    },
  }),
  route({
    method: 'POST', path: '/restaurants/{id}/customer/otp/verify', tag, auth: 'none', body: OtpVerifyBody, rateLimit: LOGIN_RATE, response: TokenSchema,
    summary: 'Sign in with the SMS code: finds or creates the customer for the phone, returns a token',
    description: `Wrong code: 422 \`otp_invalid\`; expired, already used, replaced, or after ${OTP.maxAttempts} wrong tries: 422 \`otp_expired\` (request a new code). A new customer emits \`customer.created\`; \`created\` says which happened.`,
    handler: async ({ svc, params, body }) => {
      const store = storeOf(svc, params.id)
      const events: OutboxEvent[] = []
      // Check and consume in one transaction: two racing verifies cannot both use one code.
      const r = await svc.committer.write((db): VerifyOutcome => {
        const now = Date.now()
        const otp = db.prepare<[number, string], { id: number; code_hash: string; attempts: number; expires_at: string; used_at: string | null }>(
          'SELECT id, code_hash, attempts, expires_at, used_at FROM customer_otps WHERE store_id = ? AND phone = ? ORDER BY id DESC LIMIT 1').get(store.id, body.phone)
        if (!otp || otp.used_at || Date.parse(otp.expires_at) <= now) return { kind: 'expired', message: 'The code has expired or was already used; request a new one.' }
        if (otp.attempts >= OTP.maxAttempts) return { kind: 'expired', message: 'Too many wrong codes; request a new one.' }
        if (!otpMatches(body.code, otp.code_hash)) {
          db.prepare('UPDATE customer_otps SET attempts = attempts + 1 WHERE id = ?').run(otp.id)
          return { kind: 'wrong', left: OTP.maxAttempts - otp.attempts - 1 }
        }
        db.prepare('UPDATE customer_otps SET used_at = ? WHERE id = ?').run(nowIso(now), otp.id)
        const found = db.prepare<[number, string], { id: number }>('SELECT id FROM customers WHERE store_id = ? AND phone = ? ORDER BY id LIMIT 1').get(store.id, body.phone)
        const customerId = found?.id ?? insertCustomer(db, store, { name: null, email: null, phone: body.phone, password_hash: null, birthday: null, consents: {} }, 'otp', events)
        return { kind: 'ok', customerId, created: !found, token: issueCustomerToken(db, customerId, body.device) }
      })
      if (r.kind === 'expired') throw new ApiError('otp_expired', r.message)
      if (r.kind === 'wrong') {
        if (r.left <= 0) throw new ApiError('otp_expired', 'Too many wrong codes; request a new one.')
        throw new ApiError('otp_invalid', `The code is wrong; ${r.left} tries left.`)
      }
      svc.events.publish(events)
      return { token: r.token, customer: customerView(customerRow(svc, r.customerId)), created: r.created }
    },
  }),
]
