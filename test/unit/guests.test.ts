/** The guest segments' pure definitions (src/domain/guests.ts; docs/operations.md "Guests and segments"). */
import t from 'tap'
import { SEGMENT_DEFINITIONS, SEGMENT_KEYS, SEGMENT_RULES, inSegment, segmentClock, segmentsOf, vipCutoff, type GuestFigures } from '../../src/domain/guests.ts'

const NOW = Date.parse('2026-06-01T12:00:00.000Z')
const DAY = 86_400_000
const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00')
const daysAgo = (d: number) => iso(NOW - d * DAY)
const guest = (g: Partial<GuestFigures>): GuestFigures => ({ visits: 0, recent_visits: 0, spend: 0, spend_rank: 99, first_visit: null, last_visit: null, no_shows: 0, ...g })

t.test('new: a first visit within 30 days, and at least one visit', async (t) => {
  t.ok(inSegment('new', guest({ visits: 1, first_visit: daysAgo(29.9), last_visit: daysAgo(1) }), NOW, 0))
  t.ok(inSegment('new', guest({ visits: 1, first_visit: daysAgo(30) }), NOW, 0), 'exactly 30 days: still new')
  t.notOk(inSegment('new', guest({ visits: 1, first_visit: daysAgo(30.01) }), NOW, 0))
  t.notOk(inSegment('new', guest({ visits: 0 }), NOW, 0), 'an account that never came is not a new guest')
})

t.test('regular: at least 3 visits within 90 days', async (t) => {
  t.ok(inSegment('regular', guest({ visits: 3, recent_visits: 3 }), NOW, 0))
  t.notOk(inSegment('regular', guest({ visits: 10, recent_visits: 2 }), NOW, 0), 'many visits, but only 2 recent')
})

t.test('vip: top 10 % of spenders (ceil, at least one), spend > 0', async (t) => {
  t.same([0, 1, 9, 10, 11, 20, 21, 100].map(vipCutoff), [0, 1, 1, 1, 2, 2, 3, 10])
  t.ok(inSegment('vip', guest({ spend: 500, spend_rank: 1 }), NOW, 5))
  t.notOk(inSegment('vip', guest({ spend: 400, spend_rank: 2 }), NOW, 5), 'second of 5 spenders')
  t.ok(inSegment('vip', guest({ spend: 400, spend_rank: 2 }), NOW, 11), 'second of 11 spenders: 2 places')
  t.notOk(inSegment('vip', guest({ spend: 0, spend_rank: 1 }), NOW, 0), 'no spend, no VIP')
})

t.test('lapsed: at least 2 visits, the latest more than 90 days ago', async (t) => {
  t.ok(inSegment('lapsed', guest({ visits: 2, last_visit: daysAgo(91) }), NOW, 0))
  t.notOk(inSegment('lapsed', guest({ visits: 2, last_visit: daysAgo(89) }), NOW, 0))
  t.notOk(inSegment('lapsed', guest({ visits: 1, last_visit: daysAgo(200) }), NOW, 0), 'one visit is not a relationship that lapsed')
  t.notOk(inSegment('lapsed', guest({ visits: 0 }), NOW, 0))
})

t.test('no_show: at least 2 no-shows', async (t) => {
  t.ok(inSegment('no_show', guest({ no_shows: 2 }), NOW, 0))
  t.notOk(inSegment('no_show', guest({ no_shows: 1 }), NOW, 0))
})

t.test('segmentsOf lists every segment a guest is in, in order; the clock matches the predicates', async (t) => {
  t.same(segmentsOf(guest({ visits: 4, recent_visits: 4, first_visit: daysAgo(10), last_visit: daysAgo(1), spend: 9, spend_rank: 1, no_shows: 3 }), NOW, 1), ['new', 'regular', 'vip', 'no_show'])
  t.same(segmentsOf(guest({}), NOW, 0), [])
  const c = segmentClock(NOW, iso)
  t.same(c, { newSince: daysAgo(SEGMENT_RULES.newDays), recentSince: daysAgo(SEGMENT_RULES.regularDays), lapsedBefore: daysAgo(SEGMENT_RULES.lapsedDays) })
  t.same(Object.keys(SEGMENT_DEFINITIONS), [...SEGMENT_KEYS], 'every segment has a definition')
})
