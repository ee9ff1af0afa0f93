/** GCRA rate limiter (api-v1 §8) with a fake clock: exact `remaining`, `Retry-After`, per-key budgets. */
import t from 'tap'
import { RateLimiter } from '../../src/ratelimit.ts'

function clocked(limit: number, periodMs = 60_000) {
  let now = 1_000_000
  const rl = new RateLimiter(limit, periodMs, () => now)
  return { rl, advance: (ms: number) => { now += ms } }
}

t.test('a full burst of `limit` requests, then refusals with an exact Retry-After', async (t) => {
  const { rl, advance } = clocked(5)
  t.same([1, 2, 3, 4, 5].map(() => rl.take('k')), [4, 3, 2, 1, 0].map((remaining) => ({ allowed: true, limit: 5, remaining, retryAfterSec: 0 })))
  t.same(rl.take('k'), { allowed: false, limit: 5, remaining: 0, retryAfterSec: 12 }, 'one token every 12 s')
  advance(6_000)
  t.same(rl.take('k'), { allowed: false, limit: 5, remaining: 0, retryAfterSec: 6 }, 'refusals do not spend budget; the wait shrinks')
  advance(5_999)
  t.equal(rl.take('k').allowed, false, 'not a millisecond early')
  t.equal(rl.take('k').retryAfterSec, 1, 'Retry-After is at least 1')
  advance(1)
  t.same(rl.take('k'), { allowed: true, limit: 5, remaining: 0, retryAfterSec: 0 }, 'allowed exactly when Retry-After said')
  t.equal(rl.take('k').allowed, false)
})

t.test('the budget refills continuously and caps at the limit', async (t) => {
  const { rl, advance } = clocked(5)
  for (let i = 0; i < 5; i++) rl.take('k')
  advance(24_000)
  t.equal(rl.take('k').remaining, 1, 'two slots back after 24 s; one spent now')
  advance(10 * 60_000)
  t.equal(rl.take('k').remaining, 4, 'after a long idle the budget is full, not more')
  let allowed = 0
  while (rl.take('k').allowed) allowed++
  t.equal(allowed, 4)
})

t.test('keys are independent', async (t) => {
  const { rl } = clocked(2)
  rl.take('a'); rl.take('a')
  t.equal(rl.take('a').allowed, false)
  t.same(rl.take('b'), { allowed: true, limit: 2, remaining: 1, retryAfterSec: 0 })
})

t.test('120 per minute: a burst of 120, then one every half second', async (t) => {
  const { rl, advance } = clocked(120)
  let n = 0
  while (rl.take('k').allowed) n++
  t.equal(n, 120)
  t.equal(rl.take('k').retryAfterSec, 1)
  advance(500)
  t.equal(rl.take('k').allowed, true)
  t.equal(rl.take('k').allowed, false)
})

t.test('long quiet periods sweep old keys and keep their budget full', async (t) => {
  const { rl, advance } = clocked(3)
  for (let i = 0; i < 1000; i++) rl.take(`client-${i}`)
  advance(61_000)
  rl.take('trigger')
  t.equal((rl as unknown as { tat: Map<string, number> }).tat.size, 1, 'drained keys are forgotten (memory follows recent clients)')
  t.equal(rl.take('client-1').remaining, 2, 'a forgotten key starts with a full budget')
})

t.test('peek reports the budget without spending it', async (t) => {
  const { rl } = clocked(5)
  t.same(rl.peek('k'), { allowed: true, limit: 5, remaining: 5, retryAfterSec: 0 }, 'a new key has the whole budget')
  rl.take('k'); rl.take('k')
  t.equal(rl.peek('k').remaining, 3)
  t.equal(rl.peek('k').remaining, 3, 'peeking twice costs nothing')
  rl.take('k'); rl.take('k'); rl.take('k')
  t.equal(rl.peek('k').remaining, 0)
  t.equal(rl.take('k').allowed, false)
})
