/**
 * Business hours, pure (src/domain/business-hours.ts; docs/stores.md "Business hours"): the wall
 * clock of the store's IANA zone decides, across DST changes; overnight intervals; holidays close
 * whole local dates; no hours set is always open; `accepting_orders: false` is closed; the legacy
 * `{mon_sun: '11:00-22:00'}` format reads as the canonical week.
 */
import t from 'tap'
import { canonicalHours, closedNotice, isOpenAt, isoInZone, nextOpening, openStatus, weekView, zonedInstant } from '../../src/domain/business-hours.ts'

const at = (iso: string) => new Date(iso)
const week = (intervals: Array<[string, string]>) => Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, intervals]))

t.test('a store with no hours set is always open; accepting_orders false is always closed', async (t) => {
  t.ok(isOpenAt({}, at('2026-11-23T03:00:00Z')))
  t.ok(isOpenAt({ business_hours: null, timezone: 'Asia/Tokyo' }, at('2026-11-23T15:00:00Z')))
  t.same(openStatus({ accepting_orders: false }, at('2026-11-23T12:00:00Z')), { open: false, reason: 'not_accepting' })
  t.notOk(isOpenAt({ accepting_orders: false, business_hours: week([['00:00', '24:00']]) }, at('2026-11-23T12:00:00Z')))
  t.equal(nextOpening({ accepting_orders: false }, at('2026-11-23T12:00:00Z')), null, 'no known opening while the switch is off')
  const now = at('2026-11-23T12:00:00Z')
  t.equal(nextOpening({}, now), now, 'open now: the next opening is now')
})

t.test('hours are on the store\'s local clock', async (t) => {
  const ny = { timezone: 'America/New_York', business_hours: week([['11:00', '22:00']]) }
  t.ok(isOpenAt(ny, at('2026-11-23T16:00:00Z')), '11:00 EST is open')
  t.notOk(isOpenAt(ny, at('2026-11-23T15:59:00Z')), '10:59 EST is closed')
  t.notOk(isOpenAt(ny, at('2026-11-24T03:00:00Z')), '22:00 EST: the close is exclusive')
  t.ok(isOpenAt(ny, at('2026-11-24T02:59:00Z')))
  t.equal(nextOpening(ny, at('2026-11-24T03:00:00Z'))!.toISOString(), '2026-11-24T16:00:00.000Z')
  const tokyo = { timezone: 'Asia/Tokyo', business_hours: week([['11:00', '22:00']]) }
  t.ok(isOpenAt(tokyo, at('2026-11-23T03:00:00Z')), 'the same instant is 12:00 in Tokyo: open')
  t.notOk(isOpenAt(ny, at('2026-11-23T03:00:00Z')), '… and 22:00 in New York: closed')
  t.ok(isOpenAt({ business_hours: week([['11:00', '22:00']]) }, at('2026-11-23T11:00:00Z')), 'no time zone: UTC')
})

t.test('a DST change keeps the wall-clock hours', async (t) => {
  const berlin = { timezone: 'Europe/Berlin', business_hours: week([['09:00', '17:00']]) }
  // 2026-03-29: CET (+1) → CEST (+2) at 02:00 local.
  t.ok(isOpenAt(berlin, at('2026-03-28T08:00:00Z')), 'Saturday 09:00 CET = 08:00Z')
  t.ok(isOpenAt(berlin, at('2026-03-30T07:00:00Z')), 'Monday 09:00 CEST = 07:00Z: open')
  t.notOk(isOpenAt(berlin, at('2026-03-30T06:59:00Z')), 'Monday 08:59 CEST: closed')
  t.equal(nextOpening(berlin, at('2026-03-28T20:00:00Z'))!.toISOString(), '2026-03-29T07:00:00.000Z', 'Sunday after the change opens at 09:00 CEST')
  t.equal(isoInZone(Date.parse('2026-03-29T07:00:00Z'), 'Europe/Berlin'), '2026-03-29T09:00:00+02:00')
  t.equal(isoInZone(Date.parse('2026-03-28T08:00:00Z'), 'Europe/Berlin'), '2026-03-28T09:00:00+01:00')
  // A wall time in the spring-forward gap moves forward by the gap; one in the fall-back overlap is the earlier.
  t.equal(new Date(zonedInstant('America/New_York', '2026-03-08', 150)).toISOString(), '2026-03-08T07:30:00.000Z', '02:30 does not exist: 03:30 EDT')
  t.equal(new Date(zonedInstant('America/New_York', '2026-11-01', 90)).toISOString(), '2026-11-01T05:30:00.000Z', '01:30 happens twice: the EDT one')
  const gap = { timezone: 'America/New_York', business_hours: { sun: [['02:30', '05:00']] } }
  t.equal(nextOpening(gap, at('2026-03-08T05:00:00Z'))!.toISOString(), '2026-03-08T07:30:00.000Z', 'an opening inside the gap')
})

t.test('overnight intervals run into the next day', async (t) => {
  // 2026-11-27 is a Friday.
  const bar = { timezone: 'Europe/Berlin', business_hours: { fri: [['22:00', '02:00']] } }
  t.notOk(isOpenAt(bar, at('2026-11-27T20:59:00Z')), 'Friday 21:59: closed')
  t.ok(isOpenAt(bar, at('2026-11-27T21:00:00Z')), 'Friday 22:00: open')
  t.ok(isOpenAt(bar, at('2026-11-28T00:30:00Z')), 'Saturday 01:30: still Friday night')
  t.notOk(isOpenAt(bar, at('2026-11-28T01:00:00Z')), 'Saturday 02:00: closed')
  t.notOk(isOpenAt(bar, at('2026-11-26T23:30:00Z')), 'Friday 00:30 belongs to Thursday night, which has no hours')
  t.equal(nextOpening(bar, at('2026-11-28T01:00:00Z'))!.toISOString(), '2026-12-04T21:00:00.000Z', 'next Friday 22:00')
  const twice = { business_hours: { mon: [['08:00', '11:00'], ['17:00', '23:00']] } }
  t.notOk(isOpenAt(twice, at('2026-11-23T12:00:00Z')), 'between two intervals: closed')
  t.equal(nextOpening(twice, at('2026-11-23T12:00:00Z'))!.toISOString(), '2026-11-23T17:00:00.000Z', 'the same day\'s second interval')
  t.ok(isOpenAt({ business_hours: { mon: [['00:00', '24:00']] } }, at('2026-11-23T23:59:00Z')), '24:00 closes at midnight')
})

t.test('holidays close whole local dates', async (t) => {
  const s = { timezone: 'America/New_York', business_hours: week([['11:00', '22:00']]), holidays: [{ date: '2026-12-25', note: 'Christmas' }, { from: '2026-12-31', to: '2027-01-02' }] }
  t.same(openStatus(s, at('2026-12-25T17:00:00Z')), { open: false, reason: 'holiday' })
  t.ok(isOpenAt(s, at('2026-12-24T17:00:00Z')), 'the day before is a normal day')
  t.equal(nextOpening(s, at('2026-12-25T17:00:00Z'))!.toISOString(), '2026-12-26T16:00:00.000Z')
  t.notOk(isOpenAt(s, at('2027-01-01T17:00:00Z')), 'inside a range')
  t.equal(nextOpening(s, at('2026-12-31T17:00:00Z'))!.toISOString(), '2027-01-03T16:00:00.000Z', 'after the range')
  const bar = { business_hours: { thu: [['22:00', '02:00']], fri: [['22:00', '02:00']] }, holidays: [{ date: '2026-11-27' }] }
  t.notOk(isOpenAt(bar, at('2026-11-27T01:00:00Z')), 'the after-midnight part of the night before a holiday is closed')
  t.notOk(isOpenAt(bar, at('2026-11-28T01:00:00Z')), 'an interval starting on a holiday never opens')
  t.ok(isOpenAt(bar, at('2026-11-26T23:00:00Z')), 'the evening before the holiday is open')
  const only = { holidays: [{ date: '2026-12-25' }] }
  t.notOk(isOpenAt(only, at('2026-12-25T12:00:00Z')), 'holidays close a store that sets no hours')
  t.equal(nextOpening(only, at('2026-12-25T12:00:00Z'))!.toISOString(), '2026-12-26T00:00:00.000Z')
})

t.test('the closed notice says when the store opens next, in its zone', async (t) => {
  const s = { timezone: 'America/New_York', business_hours: week([['11:00', '22:00']]) }
  t.equal(closedNotice(s, at('2026-11-23T16:00:00Z')), null)
  const n = closedNotice(s, at('2026-11-23T12:00:00Z'))!
  t.match(n, { reason: 'hours', opens_at: '2026-11-23T11:00:00-05:00' })
  t.match(n.message, /opens next at 2026-11-23T11:00:00-05:00/)
  t.same(closedNotice({ business_hours: { mon: [] } }, at('2026-11-23T12:00:00Z'))!.opens_at, null, 'never opens: no time')
})

t.test('the legacy format reads as the canonical week', async (t) => {
  const h = canonicalHours({ mon_sun: '11:00-22:00' })!
  t.same(Object.keys(h), ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'])
  t.same(h.wed, [['11:00', '22:00']])
  t.same(canonicalHours({ mon_fri: '09:00-12:00, 13:00-18:00', sat: 'closed' }), {
    mon: [['09:00', '12:00'], ['13:00', '18:00']], tue: [['09:00', '12:00'], ['13:00', '18:00']], wed: [['09:00', '12:00'], ['13:00', '18:00']],
    thu: [['09:00', '12:00'], ['13:00', '18:00']], fri: [['09:00', '12:00'], ['13:00', '18:00']], sat: [],
  })
  t.same(canonicalHours({ fri_mon: '18:00-23:00' }), { fri: [['18:00', '23:00']], sat: [['18:00', '23:00']], sun: [['18:00', '23:00']], mon: [['18:00', '23:00']] }, 'a range may wrap the week')
  t.equal(canonicalHours({ funday: '11:00-22:00' }), null)
  t.equal(canonicalHours({ mon: '25:00-26:00' }), null)
  t.ok(isOpenAt({ business_hours: { mon_sun: '11:00-22:00' } }, at('2026-11-23T12:00:00Z')), 'a store still on the legacy format keeps its hours')
  t.notOk(isOpenAt({ business_hours: { mon_sun: '11:00-22:00' } }, at('2026-11-23T10:00:00Z')))
})

t.test('weekView: every day Monday first, closed days and whole days in words', async (t) => {
  t.equal(weekView(null), null, 'no hours: always open, no week to show')
  const week = weekView({ tue: [['09:00', '14:00'], ['17:00', '22:00']], sat: [['00:00', '24:00']], sun: [] })!
  t.same(week.map((d) => d.day), ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'])
  t.same(week.map((d) => d.text), ['Closed', '09:00–14:00, 17:00–22:00', 'Closed', 'Closed', 'Closed', 'Open 24 hours', 'Closed'])
  t.same(week.map((d) => d.closed), [true, false, true, true, true, false, true])
  t.same(week.map((d) => d.all_day), [false, false, false, false, false, true, false])
})
