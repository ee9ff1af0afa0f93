/** The retry policy of the real providers (docs/providers.md "Retries"): pure parts of src/providers/retry.ts. */
import t from 'tap'
import { BACKGROUND, INTERACTIVE, httpFailure, isTransientStatus, networkFailure, nextDelay, parseRetryAfter } from '../../src/providers/retry.ts'
import { maskEmail, maskPhone, maskToken } from '../../src/providers/delivery.ts'

const mid = () => 0.5

t.test('back-off grows and stops after the listed retries', async (t) => {
  t.same([1, 2, 3, 4].map((n) => nextDelay(BACKGROUND, n, 0, undefined, mid)), [1000, 4000, 16_000, null])
  t.same([1, 2].map((n) => nextDelay(INTERACTIVE, n, 0, undefined, mid)), [500, null], 'one quick retry while the caller waits')
})

t.test('jitter stays within its fraction', async (t) => {
  t.equal(nextDelay(BACKGROUND, 1, 0, undefined, () => 0), 800)
  t.equal(nextDelay(BACKGROUND, 1, 0, undefined, () => 1), 1200)
})

t.test('Retry-After is honoured up to the policy limit, and the deadline bounds the total', async (t) => {
  t.equal(nextDelay(BACKGROUND, 1, 0, 30_000, mid), 30_000, 'a longer pause asked for is waited')
  t.equal(nextDelay(BACKGROUND, 1, 0, 10, mid), 1000, 'a shorter one does not shorten the back-off')
  t.equal(nextDelay(BACKGROUND, 1, 0, 61_000, mid), null, 'beyond maxRetryAfterMs: give up')
  t.equal(nextDelay(INTERACTIVE, 1, 0, 5000, mid), null, 'a waiting caller is not held for a long pause')
  t.equal(nextDelay(BACKGROUND, 3, 110_000, undefined, mid), null, 'the wait would cross the deadline')
})

t.test('Retry-After parses seconds and HTTP dates', async (t) => {
  t.equal(parseRetryAfter('7'), 7000)
  t.equal(parseRetryAfter(new Date(Date.UTC(2030, 0, 1, 0, 0, 10)).toUTCString(), Date.UTC(2030, 0, 1)), 10_000)
  t.equal(parseRetryAfter(null), undefined)
  t.equal(parseRetryAfter('soon'), undefined)
})

t.test('timeouts, throttling and server errors are transient; other refusals are permanent', async (t) => {
  for (const s of [408, 429, 500, 502, 503]) t.ok(isTransientStatus(s), String(s))
  for (const s of [400, 401, 403, 404, 410, 413, 422]) t.notOk(isTransientStatus(s), String(s))
  t.match(httpFailure(429, 'x', '3'), { ok: false, transient: true, retryAfterMs: 3000 })
  t.match(httpFailure(404, 'x', null, true), { ok: false, transient: false, dead: true })
  t.match(networkFailure(Object.assign(new Error('t'), { name: 'TimeoutError' })), { transient: true, reason: 'timeout' })
  t.match(networkFailure(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })), { transient: true, reason: 'connection: ECONNREFUSED' })
})

t.test('recipients are masked in logs', async (t) => {
  t.equal(maskPhone('+15551234567'), '+1555•••67')
  t.equal(maskEmail('olga@example.test'), 'o•••@example.test')
  t.match(maskToken('fcm-token-abc'), /^sha256:[0-9a-f]{12}$/)
  t.notMatch(maskToken('fcm-token-abc'), /fcm-token/)
})
