/**
 * Driver SMS login and earnings (api-v1 §4.6 listed-only, docs/drivers.md): the code arrives
 * through the SMS provider, is single-use with limited attempts, requests are rate limited, the
 * answer never reveals whether a phone is known; earnings group delivered orders by day.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { assign, createFleet, deliveryOrder, driverStatus, randomPhone } from './helpers/delivery.ts'
import type { RecordingSmsProvider } from '../src/providers/sms.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const sms = s.app.svc.sms as RecordingSmsProvider
const f = createFleet(db, { driverFee: 4 })
const other = createFleet(db)

const codeFor = (phone: string) => /\b(\d{6})\b/.exec(sms.lastTo(phone)?.body ?? '')?.[1]
const request = (phone: string) => s.req('POST', '/driver/login/request', { body: { phone } })
const verify = (body: Record<string, unknown>) => s.req('POST', '/driver/login/verify', { body })

t.test('phone + SMS code → a new device token; the owner-issued token keeps working', async (t) => {
  const d = f.addDriver()
  const r = await request(d.phone.replace('+1555', '+1 555 '))
  t.equal(r.status, 200)
  t.same(r.body, { sent: true, expires_in: 300 })
  const code = codeFor(d.phone)
  t.match(code, /^\d{6}$/, 'the development provider recorded the SMS')
  const v = await verify({ phone: d.phone, code, device: 'Pixel 8' })
  t.equal(v.status, 200)
  t.match(v.body, { token: /^dsd_/, driver: { id: d.id, phone: d.phone } })
  t.equal((await s.req('GET', '/driver/me', { token: v.body.token })).body.id, d.id)
  t.equal((await s.req('GET', '/driver/me', { token: d.token })).status, 200)
  t.equal(db.prepare('SELECT device FROM driver_tokens WHERE driver_id = ?').pluck().get(d.id), 'Pixel 8')
  const reuse = await verify({ phone: d.phone, code })
  t.equal(reuse.status, 422, 'a code is single-use')

  const rot = await s.req('POST', `/drivers/${d.id}/rotate-token`, { token: f.ownerToken })
  t.equal(rot.status, 200)
  t.equal((await s.req('GET', '/driver/me', { token: v.body.token })).status, 401, 'rotation revokes device tokens too')
})

t.test('unknown phones get the same answer and no SMS', async (t) => {
  const phone = randomPhone()
  const r = await request(phone)
  t.same(r.body, { sent: true, expires_in: 300 })
  t.equal(sms.lastTo(phone), undefined)
  const v = await verify({ phone, code: '123456' })
  t.equal(v.status, 422)
  t.ok(v.body.errors.code)
})

t.test('wrong codes are limited to 5 attempts', async (t) => {
  const d = f.addDriver()
  await request(d.phone)
  const code = codeFor(d.phone)!
  const wrong = code === '000000' ? '000001' : '000000'
  for (let i = 0; i < 5; i++) t.equal((await verify({ phone: d.phone, code: wrong })).status, 422)
  const right = await verify({ phone: d.phone, code })
  t.equal(right.status, 422, 'even the right code is refused after 5 wrong ones')
})

t.test('requests are rate limited per phone (6 a minute, 429 + Retry-After)', async (t) => {
  const d = f.addDriver()
  const statuses: number[] = []
  for (let i = 0; i < 7; i++) statuses.push((await request(d.phone)).status)
  t.same(statuses, [200, 200, 200, 200, 200, 200, 429])
  const r = await request(d.phone)
  t.equal(r.body.code, 'rate_limited')
  t.match(r.headers.get('retry-after'), /^\d+$/)
})

t.test('verify attempts are rate limited per phone (10 a minute, 429 + Retry-After)', async (t) => {
  const d = f.addDriver()
  await request(d.phone)
  const statuses: number[] = []
  for (let i = 0; i < 11; i++) statuses.push((await verify({ phone: d.phone, code: '999999' })).status)
  t.same(statuses, [...Array(10).fill(422), 429], 'guessing stops at the limit whatever the code')
  const r = await verify({ phone: d.phone, code: codeFor(d.phone) })
  t.equal(r.status, 429)
  t.equal(r.body.code, 'rate_limited')
  t.match(r.headers.get('retry-after'), /^\d+$/)
})

t.test('one phone, several fleets: choose the profile with driver_id', async (t) => {
  const phone = randomPhone()
  const mine = f.addDriver({ phone })
  const theirs = other.addDriver({ phone })
  await request(phone)
  const code = codeFor(phone)!
  const ask = await verify({ phone, code })
  t.equal(ask.status, 422)
  t.match(ask.body.errors.driver_id, [new RegExp(`${mine.id}.*${theirs.id}`)])
  const pick = await verify({ phone, code, driver_id: theirs.id })
  t.equal(pick.status, 200, 'the code stayed valid for the choice')
  t.equal(pick.body.driver.id, theirs.id)
})

t.test('earnings: delivered orders by day, with fees and tips', async (t) => {
  const d = f.addDriver()
  const tips = [2, 0.5, 3]
  for (const tip of tips) {
    const o = await deliveryOrder(s, f, { tip_amount: tip })
    await assign(s, f, o.id, d.id)
    await driverStatus(s, d, o.id, tip === 3 ? 'failed' : 'delivered')
  }
  const today = new Date().toISOString().slice(0, 10)
  const r = await s.req('GET', '/driver/earnings', { token: d.token })
  t.equal(r.status, 200)
  t.match(r.body, { range: { to: today }, deliveries: 2, fees: 8, tips: 2.5, total: 10.5 })
  t.same(r.body.days, [{ date: today, deliveries: 2, fees: 8, tips: 2.5, total: 10.5 }], 'failed deliveries earn nothing')
  t.equal(r.body.period, 'day', 'day is the default period')
  t.same(r.body.periods, [{ start: today, deliveries: 2, fees: 8, tips: 2.5, total: 10.5 }])
  const monthly = await s.req('GET', '/driver/earnings?period=month', { token: d.token })
  t.match(monthly.body, { period: 'month', periods: [{ start: `${today.slice(0, 7)}-01`, deliveries: 2, total: 10.5 }] })
  const bad = await s.req('GET', '/driver/earnings?period=year', { token: d.token })
  t.equal(bad.status, 422)
  t.ok(bad.body.errors?.period, 'an unknown period is a validation error on `period`')
  const past = await s.req('GET', '/driver/earnings?from=2020-01-01&to=2020-01-31', { token: d.token })
  t.match(past.body, { deliveries: 0, total: 0, days: [] })
  t.equal((await s.req('GET', '/driver/earnings?from=2020-02-30', { token: d.token })).status, 422)
  t.equal((await s.req('GET', '/driver/earnings', { token: f.drivers[0]!.token })).body.deliveries, 0, 'only the token\'s driver')
})
