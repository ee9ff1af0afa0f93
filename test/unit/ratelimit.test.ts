/**
 * The per-minute rate limiter (api-v1 §8, docs/limits.md "Requests per minute") with a fake clock:
 * at most `limit` in any minute, exact `remaining` and `Retry-After`, all-or-nothing costs, per-key
 * budgets, O(1) memory per key.
 */
import t from 'tap'
import { RateLimiter, SLOTS } from '../../src/ratelimit.ts'

/** The clock starts on a whole second, like the slots. */
function clocked(limit: number, periodMs = 60_000) {
  let now = 1_000_000
  const rl = new RateLimiter(limit, periodMs, () => now)
  return { rl, advance: (ms: number) => { now += ms }, now: () => now }
}

/** The limits api-v1 §8 states per minute: the API (per token), login/register, OTP request. */
const SPEC_LIMITS = [120, 10, 6]

for (const limit of SPEC_LIMITS) {
  t.test(`${limit} per minute holds over any minute: a burst of ${limit + 5} gets ${limit}, the rest of the minute stays refused`, async (t) => {
    const { rl, advance } = clocked(limit)
    const burst = Array.from({ length: limit + 5 }, () => rl.take('k'))
    t.equal(burst.filter((d) => d.allowed).length, limit, `exactly ${limit} of the burst`)
    t.same(burst.slice(limit).map((d) => d.retryAfterSec), [61, 61, 61, 61, 61], 'the refused ones wait until the burst\'s second has left the window')
    // A token bucket (GCRA) would let one more through every 60/limit s from here on.
    let allowed = 0
    for (let ms = 0; ms < 60_000; ms += 250) {
      if (rl.take('k').allowed) allowed++
      advance(250)
    }
    t.equal(allowed, 0, 'nothing more in the minute of the burst')
    advance(1_000)
    const next = Array.from({ length: limit + 1 }, () => rl.take('k').allowed)
    t.same(next, [...Array(limit).fill(true), false], 'once the window has moved past the burst, a full budget again')
  })
}

t.test('a refusal says exactly when one more fits; refusals spend nothing', async (t) => {
  const { rl, advance } = clocked(5)
  t.same([1, 2, 3, 4, 5].map(() => rl.take('k')), [4, 3, 2, 1, 0].map((remaining) => ({ allowed: true, limit: 5, remaining, retryAfterSec: 0 })))
  advance(20_500)
  t.same(rl.take('k'), { allowed: false, limit: 5, remaining: 0, retryAfterSec: 41 }, 'the burst\'s slot leaves the window 61 s after it began')
  advance(20_000)
  t.same(rl.take('k'), { allowed: false, limit: 5, remaining: 0, retryAfterSec: 21 }, 'refusals do not spend budget; the wait shrinks')
  advance(20_499)
  t.same(rl.take('k'), { allowed: false, limit: 5, remaining: 0, retryAfterSec: 1 }, 'not a millisecond early, and Retry-After is at least 1')
  advance(1)
  t.same(rl.take('k'), { allowed: true, limit: 5, remaining: 4, retryAfterSec: 0 }, 'allowed the moment the burst\'s slot leaves the window')
})

t.test('Retry-After is exact in whole seconds: asking again that many seconds later fits, a second earlier does not', async (t) => {
  const { rl, advance } = clocked(4)
  // Four requests spread over a minute, at odd moments of their seconds.
  for (const gap of [0, 12_345, 17_777, 20_001]) { advance(gap); t.ok(rl.take('k').allowed) }
  for (const gap of [3_210, 4_999, 999, 1, 7_777]) {
    advance(gap)
    const d = rl.take('k')
    t.equal(d.allowed, false)
    advance(d.retryAfterSec * 1000 - 1000)
    t.equal(rl.take('k').allowed, false, `${d.retryAfterSec - 1} s later: still refused`)
    advance(1000)
    t.equal(rl.take('k').allowed, true, `${d.retryAfterSec} s later: fits`)
  }
})

t.test('remaining is exactly how many more fit now', async (t) => {
  const { rl, advance } = clocked(10)
  for (let i = 0; i < 4; i++) { rl.take('k'); advance(15_000) }
  advance(1_000)
  // At 61 s: the first request (at 0 s) left the window, three are still in it.
  const d = rl.take('k')
  t.equal(d.remaining, 6)
  t.equal(rl.peek('k').remaining, 6)
  let more = 0
  while (rl.take('k').allowed) more++
  t.equal(more, 6, 'and exactly that many more are allowed')
})

t.test('steady traffic: at most the limit in every minute, whatever the pace', async (t) => {
  const { rl, advance } = clocked(120)
  // 3 a second for five minutes: twice the budget.
  const admitted: number[] = []
  let clock = 0
  for (let i = 0; i < 900; i++) {
    if (rl.take('k').allowed) admitted.push(clock)
    advance(333); clock += 333
  }
  let worst = 0
  for (let i = 0, j = 0; i < admitted.length; i++) {
    while (admitted[j]! <= admitted[i]! - 60_000) j++
    worst = Math.max(worst, i - j + 1)
  }
  t.equal(worst, 120, 'the busiest minute holds exactly the limit')
  t.ok(admitted.length >= 120 * 4, `the budget is used, not starved (${admitted.length} in 5 minutes)`)
})

t.test('random traffic and costs: never more than the limit in any 60 s (a sliding log checks)', async (t) => {
  let seed = 42
  const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31)
  for (const limit of SPEC_LIMITS) {
    const { rl, advance, now } = clocked(limit)
    const admitted: Array<[number, number]> = []
    let refusedWithRoom = 0
    let remainingOff = 0
    for (let i = 0; i < 20_000; i++) {
      advance(Math.floor(rand() * rand() * 4_000))
      const cost = rand() < 0.1 ? 1 + Math.floor(rand() * 4) : 1
      const before = rl.peek('k').remaining
      const d = rl.take('k', cost)
      if (d.allowed) {
        admitted.push([now(), cost])
        if (d.remaining !== before - cost) remainingOff++
      } else if (before >= cost) refusedWithRoom++
    }
    t.equal(remainingOff, 0, `${limit}/min: remaining falls by each admitted cost`)
    t.equal(refusedWithRoom, 0, `${limit}/min: never refused while remaining said it fit`)
    let worst = 0
    for (let i = 0, j = 0, inWindow = 0; i < admitted.length; i++) {
      inWindow += admitted[i]![1]
      while (admitted[j]![0] <= admitted[i]![0] - 60_000) inWindow -= admitted[j++]![1]
      worst = Math.max(worst, inWindow)
    }
    t.ok(worst <= limit, `${limit}/min: the busiest 60 s held ${worst}`)
  }
})

t.test('a cost spends several at once, or nothing', async (t) => {
  const { rl, advance } = clocked(10)
  t.same(rl.take('k', 6), { allowed: true, limit: 10, remaining: 4, retryAfterSec: 0 })
  advance(30_000)
  const refused = rl.take('k', 5)
  t.same(refused, { allowed: false, limit: 10, remaining: 4, retryAfterSec: 31 }, 'five do not fit in the four left; the six leave the window in 31 s')
  t.equal(rl.take('k', 4).remaining, 0, 'the refusal spent nothing: four still fit')
  advance(31_000)
  t.equal(rl.take('k', 5).allowed, true, 'when Retry-After said')
  t.same(rl.take('k', 11), { allowed: false, limit: 10, remaining: 1, retryAfterSec: 60 }, 'more than the whole budget never fits')
})

t.test('keys are independent', async (t) => {
  const { rl } = clocked(2)
  rl.take('a'); rl.take('a')
  t.equal(rl.take('a').allowed, false)
  t.same(rl.take('b'), { allowed: true, limit: 2, remaining: 1, retryAfterSec: 0 })
})

type Internals = { windows: Map<string, { counts: ArrayLike<number> }> }

t.test('memory: a fixed ring per key, whatever the limit and the traffic; idle keys are forgotten', async (t) => {
  const big = clocked(1_000_000)
  for (let i = 0; i < 100_000; i++) { big.rl.take('k'); big.advance(7) }
  const windows = (big.rl as unknown as Internals).windows
  t.equal(windows.size, 1)
  t.equal(windows.get('k')!.counts.length, SLOTS + 1, `${SLOTS + 1} counters for 100,000 requests`)
  t.ok(windows.get('k')!.counts instanceof Uint32Array, 'counters as narrow as the limit allows')

  const { rl, advance } = clocked(3)
  for (let i = 0; i < 1000; i++) rl.take(`client-${i}`)
  t.ok((rl as unknown as Internals).windows.get('client-0')!.counts instanceof Uint16Array)
  advance(61_000)
  rl.take('trigger')
  t.equal((rl as unknown as Internals).windows.size, 1, 'keys with nothing left in the window are forgotten (memory follows recent clients)')
  t.equal(rl.take('client-1').remaining, 2, 'a forgotten key starts with a full budget')
})

t.test('peek reports the budget without spending it', async (t) => {
  const { rl, advance } = clocked(5)
  t.same(rl.peek('k'), { allowed: true, limit: 5, remaining: 5, retryAfterSec: 0 }, 'a new key has the whole budget')
  t.equal((rl as unknown as Internals).windows.size, 0, 'and peeking it keeps nothing')
  rl.take('k'); rl.take('k')
  t.equal(rl.peek('k').remaining, 3)
  t.equal(rl.peek('k').remaining, 3, 'peeking twice costs nothing')
  rl.take('k'); rl.take('k'); rl.take('k')
  t.equal(rl.peek('k').remaining, 0)
  t.equal(rl.take('k').allowed, false)
  advance(61_000)
  t.equal(rl.peek('k').remaining, 5, 'the window moves for peeks too')
})

t.test('a clock that goes back keeps counting', async (t) => {
  const { rl, advance } = clocked(3)
  rl.take('k'); rl.take('k')
  advance(-5_000)
  t.equal(rl.take('k').remaining, 0)
  t.equal(rl.take('k').allowed, false)
})

t.test('a clock near the epoch (fake clocks starting at 0) still says when', async (t) => {
  let now = 0
  const rl = new RateLimiter(2, 60_000, () => now)
  rl.take('k'); rl.take('k')
  now = 5_500
  t.same(rl.take('k'), { allowed: false, limit: 2, remaining: 0, retryAfterSec: 56 })
})
