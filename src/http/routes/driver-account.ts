/**
 * Driver account routes (api-v1 §4.6, listed-only; payloads designed in docs/drivers.md): SMS login
 * (phone + code → a new device token), push devices, shifts, earnings.
 */
import * as v from 'valibot'
import { randomInt } from 'node:crypto'
import { route } from '../route.ts'
import { AnalyticsQuery, analyticsRange } from '../analytics-query.ts'
import { RateLimiter } from '../ratelimit.ts'
import {
  EarningsSchema, LoginRequestBody, LoginRequestSchema, LoginVerifyBody, LoginVerifySchema, PushDeviceSchema, PushRegisterBody,
  PushUnregisterBody, PushUnregisterSchema, ShiftBody, ShiftSchema,
} from '../delivery-schemas.ts'
import { ApiError } from '../../errors.ts'
import { EARNING_PERIODS, earningsByDay, earningsByPeriod, LOGIN_CODE } from '../../domain/delivery.ts'
import { fromCents } from '../../domain/money.ts'
import { newToken, safeEqualHex, sha256Hex } from '../../auth/tokens.ts'
import { nowIso } from '../../storage/db.ts'
import { driverView } from '../../storage/drivers.ts'
import type { ShiftView } from '../../actors/driver.ts'
import type { Services } from '../../services.ts'
import { phoneOf } from './drivers.ts'

/** Earnings: the analytics date range plus the grouping period. */
const EarningsQuery = v.object({ ...AnalyticsQuery.entries, period: v.optional(v.picklist(EARNING_PERIODS, 'Use day, week or month.')) })

const tag = 'Driver app'

/** Per-phone limits (api-v1 §8 names 6/min for OTP requests); one set per server. */
const limiters = new WeakMap<Services, { request: RateLimiter; verify: RateLimiter }>()
function limitsOf(svc: Services) {
  let l = limiters.get(svc)
  if (!l) limiters.set(svc, (l = { request: new RateLimiter(LOGIN_CODE.requestsPerMinute), verify: new RateLimiter(LOGIN_CODE.verifiesPerMinute) }))
  return l
}
function take(limiter: RateLimiter, key: string): void {
  const d = limiter.take(key)
  if (!d.allowed) throw new ApiError('rate_limited', `Too many attempts for this phone; retry in ${d.retryAfterSec} s.`, undefined, { 'Retry-After': String(d.retryAfterSec) })
}

/** The code is bound to the phone it was sent to; only this digest is stored. */
const codeHash = (phone: string, code: string) => sha256Hex(`driver-login:${phone}:${code}`)
const wrongCode = () => new ApiError('validation_failed', 'The code is wrong or has expired.', { code: ['The code is wrong or has expired.'] })

export const driverAccountRoutes = [
  route({
    method: 'POST', path: '/driver/login/request', tag, summary: 'Send a login code by SMS', auth: 'none', body: LoginRequestBody,
    response: LoginRequestSchema, rateLimit: { perMinute: 30 },
    description: `Sends a ${LOGIN_CODE.digits}-digit code valid for ${LOGIN_CODE.ttlSeconds / 60} minutes to a driver's phone. The answer is the same whether or not the phone belongs to a driver. At most ${LOGIN_CODE.requestsPerMinute} requests per phone per minute (429 with \`Retry-After\`).`,
    handler: async ({ svc, body }) => {
      const phone = phoneOf(body.phone)
      take(limitsOf(svc).request, phone)
      if (svc.drivers.byPhone(phone).length > 0) {
        const code = String(randomInt(0, 10 ** LOGIN_CODE.digits)).padStart(LOGIN_CODE.digits, '0')
        const now = Date.now()
        await svc.committer.write((db) => db.prepare('INSERT INTO driver_login_codes (phone, code_hash, expires_at, created_at) VALUES (?, ?, ?, ?)')
          .run(phone, codeHash(phone, code), nowIso(now + LOGIN_CODE.ttlSeconds * 1000), nowIso(now)))
        await svc.sms.send(phone, `Your driver login code is ${code}. It expires in ${LOGIN_CODE.ttlSeconds / 60} minutes. Never share it.`)
      }
      return { sent: true, expires_in: LOGIN_CODE.ttlSeconds }
    },
  }),
  route({
    method: 'POST', path: '/driver/login/verify', tag, summary: 'Exchange phone + code for a driver token', auth: 'none', body: LoginVerifyBody,
    response: LoginVerifySchema, rateLimit: { perMinute: 30 },
    description: `Returns a new device token (shown once) and the driver. A code allows ${LOGIN_CODE.maxAttempts} attempts and is single-use. When one phone belongs to several driver profiles (several fleets), the first answer is 422 with \`errors.driver_id\` listing them; repeat with \`driver_id\` (the code stays valid). \`device\` labels the token.`,
    handler: async ({ svc, body }) => {
      const phone = phoneOf(body.phone)
      take(limitsOf(svc).verify, phone)
      const now = nowIso()
      const row = svc.db.prepare<[string, string], { id: number; code_hash: string; attempts: number }>(
        'SELECT id, code_hash, attempts FROM driver_login_codes WHERE phone = ? AND used_at IS NULL AND expires_at > ? ORDER BY id DESC LIMIT 1',
      ).get(phone, now)
      if (!row || row.attempts >= LOGIN_CODE.maxAttempts) throw wrongCode()
      if (!safeEqualHex(row.code_hash, codeHash(phone, body.code))) {
        await svc.committer.write((db) => db.prepare('UPDATE driver_login_codes SET attempts = attempts + 1 WHERE id = ?').run(row.id))
        throw wrongCode()
      }
      const drivers = svc.drivers.byPhone(phone)
      const chosen = body.driver_id === undefined ? (drivers.length === 1 ? drivers[0] : undefined) : drivers.find((d) => d.id === body.driver_id)
      if (!chosen) {
        const list = drivers.map((d) => `${d.id} (${d.name})`).join(', ')
        throw new ApiError('validation_failed', undefined, { driver_id: [drivers.length === 0 ? 'No driver has this phone.' : `Choose one of: ${list}.`] })
      }
      const token = newToken('driver')
      await svc.committer.write((db) => {
        db.prepare('UPDATE driver_login_codes SET used_at = ? WHERE id = ?').run(now, row.id)
        db.prepare('INSERT INTO driver_tokens (driver_id, token_hash, device, created_at) VALUES (?, ?, ?, ?)').run(chosen.id, sha256Hex(token), body.device ?? null, now)
      })
      return { token, driver: driverView(chosen) }
    },
  }),
  route({
    method: 'POST', path: '/driver/push/register-device', tag, summary: 'Register a device for push notifications', auth: 'driver',
    body: PushRegisterBody, response: PushDeviceSchema,
    description: 'Offers are pushed to registered devices. A device token belongs to one driver: registering it again moves it.',
    handler: async ({ svc, principal, body }) => {
      const now = nowIso()
      await svc.committer.write((db) => db.prepare(`INSERT INTO driver_devices (driver_id, device_token, platform, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT(device_token) DO UPDATE SET driver_id = excluded.driver_id, platform = excluded.platform, updated_at = excluded.updated_at`)
        .run(principal.driverId, body.device_token, body.platform, now, now))
      return { device_token: body.device_token, platform: body.platform, registered: true }
    },
  }),
  route({
    method: 'POST', path: '/driver/push/unregister-device', tag, summary: 'Stop push notifications to a device', auth: 'driver',
    body: PushUnregisterBody, response: PushUnregisterSchema, description: '`unregistered` is false when the device was not registered to this driver.',
    handler: async ({ svc, principal, body }) => {
      const changes = await svc.committer.write((db) => db.prepare('DELETE FROM driver_devices WHERE device_token = ? AND driver_id = ?').run(body.device_token, principal.driverId).changes)
      return { unregistered: changes > 0 }
    },
  }),
  route({
    method: 'POST', path: '/driver/shift', tag, summary: 'Start or end a shift', auth: 'driver', body: ShiftBody, response: ShiftSchema,
    description: '`{"action": "start" | "end"}`. Drivers off shift get no offers and cannot claim or accept deliveries. Repeating the current state is a no-op.',
    handler: ({ svc, principal, body }) =>
      svc.actors.drivers.ask<ShiftView>(principal.driverId, (replyTo) => ({ type: 'shift', onShift: body.action === 'start', replyTo })),
  }),
  route({
    method: 'GET', path: '/driver/earnings', tag, summary: 'Earnings by period: deliveries, fees, tips', auth: 'driver', query: EarningsQuery,
    response: EarningsSchema,
    description: 'Delivered orders by the day they were delivered (UTC), `from`/`to` as `YYYY-MM-DD` (default: the last 30 days), summed per `period` (`day` (default), `week` (ISO weeks, starting Monday) or `month`) in `periods`, each named by its first day; `days` always lists the single days. `fee` is fixed when the delivery is assigned; tips are the order tips.',
    handler: ({ svc, principal, query }) => {
      const range = analyticsRange(query)
      const toExclusive = new Date(Date.parse(`${range.to}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
      const sum = earningsByDay(svc.drivers.earnings(principal.driverId, `${range.from}T00:00:00`, `${toExclusive}T00:00:00`))
      const money = (c: number) => fromCents(c)
      const period = query.period ?? 'day'
      return {
        range,
        period,
        deliveries: sum.deliveries, fees: money(sum.fees), tips: money(sum.tips), total: money(sum.total),
        periods: earningsByPeriod(sum.days, period).map((p) => ({ start: p.start, deliveries: p.deliveries, fees: money(p.fees), tips: money(p.tips), total: money(p.total) })),
        days: sum.days.map((d) => ({ date: d.date, deliveries: d.deliveries, fees: money(d.fees), tips: money(d.tips), total: money(d.total) })),
      }
    },
  }),
]
