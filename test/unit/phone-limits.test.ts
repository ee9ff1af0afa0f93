/**
 * The per-phone sliding-window limiter (src/auth/phone-limits.ts; docs/customers.md "Limits per
 * phone") with a fake clock: never more than `limit` in any window, exact Retry-After, refusals
 * spend nothing, several windows at once, keys independent.
 */
import t from 'tap'
import { SlidingWindowLimiter } from '../../src/auth/phone-limits.ts'

const MIN = 60_000
function clocked() {
  let now = 1_000_000_000
  const rl = new SlidingWindowLimiter([{ limit: 3, periodMs: 10 * MIN }, { limit: 10, periodMs: 24 * 60 * MIN }], () => now)
  return { rl, advance: (ms: number) => { now += ms } }
}

t.test('3 per 10 minutes: then refused until the oldest leaves the window', async (t) => {
  const { rl, advance } = clocked()
  t.equal(rl.take('p'), 0)
  advance(MIN)
  t.equal(rl.take('p'), 0)
  advance(MIN)
  t.equal(rl.take('p'), 0)
  t.equal(rl.take('p'), 480, 'Retry-After: the first of the three leaves the window in 8 minutes')
  advance(3 * MIN)
  t.equal(rl.take('p'), 300, 'refusals spend nothing; the wait shrinks')
  advance(5 * MIN - 1)
  t.equal(rl.take('p'), 1, 'not a millisecond early, and at least 1 s')
  advance(1)
  t.equal(rl.take('p'), 0, 'allowed when Retry-After said')
  t.equal(rl.take('p'), 60, 'and only one slot came back: the second leaves a minute later')
  t.equal(rl.take('q'), 0, 'another phone has its own budget')
})

t.test('never more than 3 in any 10 minutes, however the attempts are spread (unlike a token bucket)', async (t) => {
  let clock = 0
  const rl = new SlidingWindowLimiter([{ limit: 3, periodMs: 10 * MIN }], () => clock)
  const allowedAt: number[] = []
  for (let i = 0; i < 120; i++) {
    if (rl.take('p') === 0) allowedAt.push(clock)
    clock += 20_000
  }
  for (const start of allowedAt) t.ok(allowedAt.filter((x) => x >= start && x < start + 10 * MIN).length <= 3, `window from ${start / 1000} s`)
  t.equal(allowedAt.length, 12, '40 minutes: 3 per 10 minutes')
})

t.test('10 per 24 hours on top: the daily window holds after the short one has refilled', async (t) => {
  const { rl, advance } = clocked()
  let sent = 0
  for (let i = 0; i < 24; i++) {
    while (rl.take('p') === 0) sent++
    advance(30 * MIN)
  }
  t.equal(sent, 10, '10 in the first 12 hours (3 + 3 + 3 + 1), then nothing')
  t.equal(rl.take('p'), 12 * 3600, 'Retry-After: the first text leaves the day window in 12 hours')
  advance(12 * 3600 * 1000)
  t.equal(rl.take('p'), 0, 'allowed again then')
})
