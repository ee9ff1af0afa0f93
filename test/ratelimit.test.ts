/**
 * Rate limits over HTTP (api-v1 §8), with RATE_LIMIT_PER_MINUTE=5: X-RateLimit-* on every response,
 * the 6th request is 429 `rate_limited` with Retry-After, at most the limit in any minute (the
 * default 120 too: a burst of 125 gets 120), budgets are per token, and
 * unauthenticated traffic is limited per client address — except the health probes, which are not
 * limited at all (issue 31 item 7, docs/running.md "Health and readiness").
 */
import t from 'tap'
import { startServer, type Res } from './helpers/server.ts'
import { counts, createAccount, isError, postOrder, tokenFor } from './helpers/fixtures.ts'

const hasRateHeaders = (r: Res, limit: number) =>
  r.headers.get('x-ratelimit-limit') === String(limit) && /^\d+$/.test(r.headers.get('x-ratelimit-remaining') ?? '')

t.test('per token: headers on every answer, the 6th request is 429 with Retry-After', async (t) => {
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '5' })
  t.teardown(() => s.close())
  const db = s.app.svc.db
  const acct = createAccount(db)
  const line = { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] }

  // Mixed successes and failures all spend the same token's budget.
  const answers = [
    await s.req('GET', '/me', { token: acct.token }),
    await postOrder(s, acct.token, acct.storeId, line),
    await s.req('GET', `/restaurants/${acct.storeId}/orders/999999`, { token: acct.token }),
    await postOrder(s, acct.token, acct.storeId, { type: 'bogus' }),
    await s.req('GET', `/restaurants/${acct.storeId}/orders?page=0`, { token: acct.token }),
  ]
  t.same(answers.map((r) => r.status), [200, 200, 404, 422, 422])
  t.same(answers.map((r) => r.headers.get('x-ratelimit-limit')), ['5', '5', '5', '5', '5'], 'X-RateLimit-Limit on successes and errors')
  t.same(answers.map((r) => r.headers.get('x-ratelimit-remaining')), ['4', '3', '2', '1', '0'], 'X-RateLimit-Remaining counts down')

  const before = counts(db)
  const limited = await postOrder(s, acct.token, acct.storeId, line)
  isError(t, limited, 429, 'rate_limited', 'the 6th request')
  const retry = Number(limited.headers.get('retry-after'))
  t.ok(Number.isInteger(retry) && retry >= 59 && retry <= 61, `Retry-After is whole seconds until the first request leaves the minute (${retry})`)
  t.equal(limited.headers.get('x-ratelimit-limit'), '5')
  t.equal(limited.headers.get('x-ratelimit-remaining'), '0')
  t.same(counts(db), before, 'a limited request does nothing')
  isError(t, await s.req('GET', '/me', { token: acct.token }), 429, 'rate_limited', 'still limited')

  const other = tokenFor(db, acct.ownerId, ['*'])
  const fresh = await s.req('GET', '/me', { token: other })
  t.equal(fresh.status, 200, "another token of the same owner has its own budget")
  t.equal(fresh.headers.get('x-ratelimit-remaining'), '4')
  const viaQuery = await s.req('GET', `/me?api_token=${encodeURIComponent(other)}`)
  t.equal(viaQuery.headers.get('x-ratelimit-remaining'), '3', 'the budget follows the token however it is sent')
  const pub = await s.req('GET', `/menu/${acct.storeId}`)
  t.equal(pub.status, 200, 'the address budget is separate from token budgets')
})

t.test('per address: unauthenticated calls, failed logins and unknown routes share one budget', async (t) => {
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '5' })
  t.teardown(() => s.close())
  const acct = createAccount(s.app.svc.db)
  const answers = [
    await s.req('GET', `/menu/${acct.storeId}`),
    await s.req('GET', '/me', { token: 'dso_wrong' }),
    await s.req('GET', '/nope'),
    await s.req('PATCH', '/restaurants'),
    await s.req('GET', '/openapi.json'),
  ]
  t.same(answers.map((r) => r.status), [200, 401, 404, 405, 200])
  t.ok(answers.every((r) => hasRateHeaders(r, 5)), 'headers on every answer')
  t.same(answers.map((r) => r.headers.get('x-ratelimit-remaining')), ['4', '3', '2', '1', '0'])
  const limited = await s.req('GET', `/menu/${acct.storeId}`)
  isError(t, limited, 429, 'rate_limited', 'the 6th unauthenticated request')
  t.ok(Number(limited.headers.get('retry-after')) >= 1)
  isError(t, await s.req('GET', '/me', { token: 'dso_wrong' }), 429, 'rate_limited', 'guessing tokens is limited too')
  const pre = await s.req('OPTIONS', '/restaurants', { headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } })
  t.equal(pre.status, 204, 'a preflight is answered even when the address is out of budget')
  t.ok(hasRateHeaders(pre, 5), 'and carries the headers')
  t.equal(pre.headers.get('x-ratelimit-remaining'), '0')
  const authed = await s.req('GET', '/me', { token: acct.token })
  t.equal(authed.status, 200, 'a valid token is not held back by its address')
})

t.test('the default is 120 per minute', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const r = await s.req('GET', '')
  t.equal(r.headers.get('x-ratelimit-limit'), '120')
  t.equal(r.headers.get('x-ratelimit-remaining'), '119')
})

t.test('120 per minute holds over the first minute too: a burst of 125 gets exactly 120, and the rest of the minute stays refused', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const acct = createAccount(s.app.svc.db)
  const burst = await Promise.all(Array.from({ length: 125 }, () => s.req('GET', '/me', { token: acct.token })))
  t.equal(burst.filter((r) => r.status === 200).length, 120, '120 answered')
  const refused = burst.filter((r) => r.status === 429)
  t.equal(refused.length, 5, 'five refused')
  t.ok(refused.every((r) => r.headers.get('x-ratelimit-remaining') === '0'), 'with nothing remaining')
  t.ok(refused.every((r) => Number(r.headers.get('retry-after')) >= 59), 'and Retry-After until the burst leaves the minute')
  // A token bucket refills one request every 500 ms here, which would be a 121st answer in the minute.
  await new Promise((resolve) => setTimeout(resolve, 1_100))
  const later = await s.req('GET', '/me', { token: acct.token })
  isError(t, later, 429, 'rate_limited', 'a second later: still refused')
  t.ok(Number(later.headers.get('retry-after')) >= 58, `Retry-After ${later.headers.get('retry-after')}`)
})

t.test('health probes are never limited: 500 each from one address answer 200, other calls still 429', async (t) => {
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '5' })
  t.teardown(() => s.close())
  const acct = createAccount(s.app.svc.db)
  /** `n` GETs of `path`, 50 at a time; the statuses seen, with how often. */
  const poll = async (path: string, n: number) => {
    const seen: Record<number, number> = {}
    for (let i = 0; i < n; i += 50) {
      for (const r of await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => fetch(s.site + path).then(async (r) => { await r.arrayBuffer(); return r })))) {
        seen[r.status] = (seen[r.status] ?? 0) + 1
      }
    }
    return seen
  }
  t.same(await poll('/healthz', 500), { 200: 500 }, '/healthz: 500 answers, all 200')
  t.same(await poll('/readyz', 500), { 200: 500 }, '/readyz: 500 answers, all 200')
  const first = await s.req('GET', `/menu/${acct.storeId}`)
  t.equal(first.status, 200)
  t.equal(first.headers.get('x-ratelimit-remaining'), '4', 'the probes spent none of the address\'s budget')
  const rest = await Promise.all([1, 2, 3, 4].map(() => s.req('GET', `/menu/${acct.storeId}`)))
  t.same(rest.map((r) => r.status), [200, 200, 200, 200])
  isError(t, await s.req('GET', `/menu/${acct.storeId}`), 429, 'rate_limited', 'another unauthenticated route, over the budget')
  isError(t, await s.req('GET', s.site + '/nope'), 429, 'rate_limited', 'an unknown address')
  const probe = await s.req('GET', s.site + '/healthz')
  t.equal(probe.status, 200, 'a probe from the same address, out of budget: still 200')
  t.equal(probe.headers.get('x-ratelimit-remaining'), '0', 'it shows the address\'s budget without spending it')
  t.equal((await s.req('GET', s.site + '/readyz')).status, 200)
})
