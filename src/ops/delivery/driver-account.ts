/**
 * Driver account operations (api-v1 §4.6, listed-only; payloads designed in docs/drivers.md): SMS
 * login (phone + code → a new device token), push devices, shifts, earnings. Identity comes only
 * from the token (`driverOf`); the login operations take no credential.
 */
import { randomInt } from 'node:crypto'
import { defineOp, type Access } from '../op.ts'
import { driverOf } from '../scope.ts'
import { analyticsRange } from '../orders/analytics-query.ts'
import {
  EarningsQuery, EarningsSchema, LoginRequestBody, LoginRequestSchema, LoginVerifyBody, LoginVerifySchema, PushDeviceSchema, PushRegisterBody,
  PushUnregisterBody, PushUnregisterSchema, ShiftBody, ShiftSchema,
} from '../schemas/delivery.ts'
import { phoneOf } from './delivery-views.ts'
import { ApiError } from '../../errors.ts'
import { earningsByDay, earningsByPeriod, LOGIN_CODE } from '../../domain/delivery.ts'
import { fromCents } from '../../domain/money.ts'
import { newToken, safeEqualHex, sha256Hex } from '../../auth/tokens.ts'
import { phoneLimit } from '../../auth/phone-limits.ts'
import { nowIso } from '../../storage/db.ts'
import { countLoginAttempt, driverView, insertLoginCode, redeemLoginCode, registerDriverDevice, unregisterDriverDevice } from '../../storage/drivers.ts'
import type { ShiftView } from '../../actors/driver.ts'

const tag = 'Driver app'
const driver: Access = { driver: true }
const anyone: Access = { public: true }

/** Per-phone limits (api-v1 §8 names 6/min for OTP requests), the same mechanism as the customer OTP's. */
const requestsPerPhone = phoneLimit([{ limit: LOGIN_CODE.requestsPerMinute, periodMs: 60_000 }])
const verifiesPerPhone = phoneLimit([{ limit: LOGIN_CODE.verifiesPerMinute, periodMs: 60_000 }])

/** The code is bound to the phone it was sent to; only this digest is stored. */
const codeHash = (phone: string, code: string) => sha256Hex(`driver-login:${phone}:${code}`)
const wrongCode = () => new ApiError('validation_failed', 'The code is wrong or has expired.', { code: ['The code is wrong or has expired.'] })

export const requestLoginCode = defineOp({
  id: 'driver.login.request', tag, summary: 'Send a login code by SMS', access: anyone, scope: [],
  description: `Sends a ${LOGIN_CODE.digits}-digit code valid for ${LOGIN_CODE.ttlSeconds / 60} minutes to a driver's phone. The answer is the same whether or not the phone belongs to a driver. At most ${LOGIN_CODE.requestsPerMinute} requests per phone per minute (429 with \`Retry-After\`).`,
  input: LoginRequestBody, output: LoginRequestSchema,
  run: async (ctx, input) => {
    const { svc } = ctx
    const phone = phoneOf(input.phone)
    requestsPerPhone(svc, phone)
    if (svc.drivers.byPhone(phone).length > 0) {
      const code = String(randomInt(0, 10 ** LOGIN_CODE.digits)).padStart(LOGIN_CODE.digits, '0')
      const now = Date.now()
      const hash = codeHash(phone, code)
      await svc.committer.write((db) => insertLoginCode(db, phone, hash, nowIso(now + LOGIN_CODE.ttlSeconds * 1000), nowIso(now)))
      // Not awaited: a slow or failing SMS provider must not make a driver's phone answer
      // differently (later, or 503) from any other number. The provider logs the failure
      // (masked); the driver asks again.
      svc.sms.send(phone, `Your driver login code is ${code}. It expires in ${LOGIN_CODE.ttlSeconds / 60} minutes. Never share it.`)
        .catch((e: unknown) => svc.log.warn({ err_code: e instanceof ApiError ? e.code : 'error' }, 'driver login code not delivered'))
    }
    return { sent: true, expires_in: LOGIN_CODE.ttlSeconds }
  },
})

export const verifyLoginCode = defineOp({
  id: 'driver.login.verify', tag, summary: 'Exchange phone + code for a driver token', access: anyone, scope: [],
  description: `Returns a new device token (shown once) and the driver. A code allows ${LOGIN_CODE.maxAttempts} attempts and is single-use. When one phone belongs to several driver profiles (several fleets), the first answer is 422 with \`errors.driver_id\` listing them; repeat with \`driver_id\` (the code stays valid). \`device\` labels the token.`,
  input: LoginVerifyBody, output: LoginVerifySchema,
  run: async (ctx, input) => {
    const { svc } = ctx
    const phone = phoneOf(input.phone)
    verifiesPerPhone(svc, phone)
    const now = nowIso()
    const row = svc.drivers.openLoginCode(phone, now)
    if (!row || row.attempts >= LOGIN_CODE.maxAttempts) throw wrongCode()
    if (!safeEqualHex(row.code_hash, codeHash(phone, input.code))) {
      await svc.committer.write((db) => countLoginAttempt(db, row.id))
      throw wrongCode()
    }
    const drivers = svc.drivers.byPhone(phone)
    const chosen = input.driver_id === undefined ? (drivers.length === 1 ? drivers[0] : undefined) : drivers.find((d) => d.id === input.driver_id)
    if (!chosen) {
      const list = drivers.map((d) => `${d.id} (${d.name})`).join(', ')
      throw new ApiError('validation_failed', undefined, { driver_id: [drivers.length === 0 ? 'No driver has this phone.' : `Choose one of: ${list}.`] })
    }
    const token = newToken('driver')
    const hash = sha256Hex(token)
    await svc.committer.write((db) => redeemLoginCode(db, row.id, chosen.id, hash, input.device ?? null, now))
    return { token, driver: driverView(chosen) }
  },
})

export const registerDevice = defineOp({
  id: 'driver.push.register', tag, summary: 'Register a device for push notifications', access: driver, scope: [],
  description: 'Offers are pushed to registered devices. A device token belongs to one driver: registering it again moves it.',
  input: PushRegisterBody, output: PushDeviceSchema,
  run: async (ctx, input) => {
    const { driverId } = driverOf(ctx)
    const now = nowIso()
    await ctx.svc.committer.write((db) => registerDriverDevice(db, driverId, input.device_token, input.platform, now))
    return { device_token: input.device_token, platform: input.platform, registered: true }
  },
})

export const unregisterDevice = defineOp({
  id: 'driver.push.unregister', tag, summary: 'Stop push notifications to a device', access: driver, scope: [],
  description: '`unregistered` is false when the device was not registered to this driver.',
  input: PushUnregisterBody, output: PushUnregisterSchema,
  run: async (ctx, input) => {
    const { driverId } = driverOf(ctx)
    return { unregistered: await ctx.svc.committer.write((db) => unregisterDriverDevice(db, driverId, input.device_token)) }
  },
})

export const setShift = defineOp({
  id: 'driver.shift.set', tag, summary: 'Start or end a shift', access: driver, scope: [],
  description: '`{"action": "start" | "end"}`. Drivers off shift get no offers and cannot claim or accept deliveries. Repeating the current state is a no-op.',
  input: ShiftBody, output: ShiftSchema,
  run: (ctx, input) =>
    ctx.svc.actors.drivers.ask<ShiftView>(driverOf(ctx).driverId, (replyTo) => ({ type: 'shift', onShift: input.action === 'start', replyTo })),
})

export const getEarnings = defineOp({
  id: 'driver.earnings.get', tag, summary: 'Earnings by period: deliveries, fees, tips', access: driver, scope: [],
  description: 'Delivered orders by the day they were delivered (UTC), `from`/`to` as `YYYY-MM-DD` (default: the last 30 days), summed per `period` (`day` (default), `week` (ISO weeks, starting Monday) or `month`) in `periods`, each named by its first day; `days` always lists the single days. `fee` is fixed when the delivery is assigned; tips are the order tips.',
  input: EarningsQuery, output: EarningsSchema,
  run: (ctx, query) => {
    const range = analyticsRange(query)
    const toExclusive = new Date(Date.parse(`${range.to}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
    const sum = earningsByDay(ctx.svc.drivers.earnings(driverOf(ctx).driverId, `${range.from}T00:00:00`, `${toExclusive}T00:00:00`))
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
})

export const driverAccountOps = [requestLoginCode, verifyLoginCode, registerDevice, unregisterDevice, setShift, getEarnings]
