/**
 * The HTTP fuzz run, shared by test/fuzz-http.test.ts (a bounded seeded sample) and `npm run fuzz`:
 * for every route of the live table, `runs` generated cases sent one at a time over real HTTP,
 * each checked against the properties of ./properties.ts.
 */
import fc from 'fast-check'
import type { TestServer } from '../server.ts'
import { liveRoutes, type Route } from '../routes.ts'
import { describeCase, httpCases, mayDestroy, routeLabel, type HttpCase } from './http.ts'
import { ANSWER_BOUND_MS, envelopeProblem, Snapshots, statusClass, subSeed, Tally } from './properties.ts'
import { buildWorld, type World } from './world.ts'

export interface RunOptions {
  seed: number
  /** Cases per route. */
  runs: number
  /** Only routes whose `METHOD /path` contains this. */
  only?: string
}

/** Routes in the order that destroys least early: reads, then writes, then deletes and sign-outs. */
function ordered(routes: Route[]): Route[] {
  const rank = (r: Route) => (r.method === 'GET' ? 0 : r.method === 'DELETE' ? 2 : /logout|rotate|revoke|cancel|suspend|pause|disable/.test(r.path) ? 3 : 1)
  return [...routes].sort((a, b) => rank(a) - rank(b))
}

export async function fuzzHttp(s: TestServer, opts: RunOptions, tally = new Tally()): Promise<Tally> {
  const snaps = new Snapshots(s.dbPath)
  let world = await buildWorld(s)
  try {
    for (const r of ordered(liveRoutes())) {
      const label = routeLabel(r)
      if (opts.only && !label.includes(opts.only)) continue
      const seed = subSeed(opts.seed, label)
      const cases = fc.sample(httpCases(r, world), { seed, numRuns: opts.runs })
      for (const c of cases) {
        const problem = await sendAndCheck(s, snaps, r, c, tally)
        if (problem) tally.failures.push(`seed ${opts.seed} (route seed ${seed}) ${label}: ${problem}\n  ${describeCase(s.site, c)}`)
      }
      if (mayDestroy(r) && !(await intact(s, world))) {
        const t0 = Date.now()
        world = await buildWorld(s)
        if (process.env.FUZZ_DEBUG) console.log(`world rebuilt after ${label} in ${Date.now() - t0} ms`)
      }
    }
  } finally {
    snaps.close()
  }
  return tally
}

/** Send one case and check it; the problem, or null. */
export async function sendAndCheck(s: TestServer, snaps: Snapshots, r: Route, c: HttpCase, tally: Tally): Promise<string | null> {
  const before = snaps.take()
  let res: Response
  let text: string
  try {
    res = await fetch(s.site + c.target, { method: c.method, headers: c.headers, body: c.body, redirect: 'manual', signal: AbortSignal.timeout(ANSWER_BOUND_MS) })
    text = await res.text()
  } catch (err) {
    const e = err as Error & { cause?: Error }
    tally.count(c.family, c.kind, e.name === 'TimeoutError' ? 'hang' : 'no-answer')
    return e.name === 'TimeoutError' ? `no answer within ${ANSWER_BOUND_MS} ms` : `no answer: ${e.message} ${e.cause?.message ?? ''}`
  }
  tally.count(c.family, c.kind, statusClass(res.status))
  if (res.status >= 500) return `${res.status}: ${text.slice(0, 300)}`
  if (res.status < 400) {
    await snaps.settle()
    return null
  }
  const type = res.headers.get('content-type')
  // A page answers its own documented errors as a page (Route.pageErrors); everything else is the envelope.
  const answering = c.method === r.method ? r : sameAddress(r, c.method)
  const pageOwn = answering?.pageErrors?.[res.status] !== undefined && type?.startsWith('text/html')
  const shape = pageOwn ? null : envelopeProblem(res.status, type, text)
  if (shape) return `${res.status}: ${shape}`
  const written = Snapshots.diff(before, snaps.take())
  if (written.length) return `${res.status} ${text.slice(0, 200)} but wrote: ${written.join('; ')}`
  return null
}

/** The route at the same address with another method (a wrong-method case may hit it). */
const sameAddress = (r: Route, method: string): Route | undefined => liveRoutes().find((x) => x.method === method && x.path === r.path && Boolean(x.site) === Boolean(r.site))

/** Whether every credential and the store of the world still work (a fuzzed DELETE or logout may have ended them). */
async function intact(s: TestServer, w: World): Promise<boolean> {
  const probes: Array<[string, Record<string, string>]> = [
    [`/api/v1/restaurants/${w.ids.store}/menu`, w.headers.owner], [`/api/v1/restaurants/${w.ids.store}/orders/${w.params.orderId}`, w.headers.owner],
    ['/api/v1/me', w.headers['owner-narrow']], ['/api/v1/staff/me', w.headers.staff], ['/api/v1/driver/me', w.headers.driver],
    ['/api/v1/customer/me', w.headers.customer], ['/api/v1/storefront/info', w.headers.storefront], ['/api/v1/me', w.headers.app],
    ['/api/v1/app/me', w.headers.shell], ['/dashboard/orders', w.headers.session], [`/api/v1/webhook-endpoints/${w.ids.endpoint}`, w.headers.owner],
    [`/api/v1/restaurants/${w.ids.store}/menu/items/${w.params.itemId}/variants/${w.params.variantId}`, w.headers.owner],
  ]
  for (const [path, headers] of probes) {
    const res = await fetch(s.site + path, { headers, redirect: 'manual' })
    const text = await res.text()
    if (process.env.FUZZ_DEBUG && res.status !== 200) console.log(`probe ${path} ${res.status} ${text.slice(0, 100)}`)
    if (res.status !== 200) return false
    // The endpoint must stay paused (see buildWorld); a fuzzed `resume` is undone by a new world.
    if (path.includes('/webhook-endpoints/') && !text.includes('"paused":true')) return false
  }
  return true
}
