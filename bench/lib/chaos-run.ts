/**
 * Crash cycles (issue 21 item 3), shared by `npm run chaos` (bench/chaos.ts) and the CI test
 * (test/chaos.test.ts): the real server in its own process on one SQLite file, a webhook receiver
 * here, mixed load (bench/lib/chaos-load.ts), SIGKILL at a seeded random moment, the file checked
 * read-only, restart on the same file, the restarted server and the receiver checked; N times.
 */
import Database from 'better-sqlite3'
import { dirname } from 'node:path'
import { clusterDeployment, singleDeployment, type Deployment } from './chaos-deploy.ts'
import { rng } from './rng.ts'
import { Ledger } from './chaos-ledger.ts'
import { Life, type Target } from './chaos-load.ts'
import { ChaosReceiver } from './chaos-receiver.ts'
import { afterKill, retryIdempotent, servedAfterRestart, webhooksDelivered, type Poster } from './chaos-checks.ts'

export interface ChaosOptions {
  cycles: number
  seed: number
  dbPath: string
  cwd: string
  log: (line: string) => void
  /** The kill lands this long after the load starts: uniform in [min, max] ms (seeded). */
  killAfterMs?: [number, number]
  /** How long the restarted server gets to deliver the events committed before the kill. */
  webhookWaitMs?: number
  /**
   * Cluster mode (bench/lib/chaos-deploy.ts): two nodes on three nats-servers; the primary is killed,
   * the other node's file is checked while it serves, the killed node rejoins as a replica.
   */
  cluster?: boolean
  /** More settings for the servers (the CI test lengthens the cluster's lease for a loaded machine). */
  env?: Record<string, string>
}

export interface CycleRecord {
  cycle: number
  killAfterMs: number
  /** Single: the restart; cluster: from the kill until the other node served as primary. */
  restartMs: number
  requests: number
  ordersAcked: number
  statusChangesAcked: number
  bumpsAcked: number
  positionsAcked: number
  /** Events committed in this life (before the kill) that the receiver had not confirmed yet. */
  eventsAtKill: number
  webhooksConfirmed: number
  idempotentRetries: number
  /** Order creates unanswered at the kill, and how many of them had committed. */
  inFlightOrders: number
  inFlightCommitted: number
  violations: string[]
}

export interface ChaosSummary {
  seed: number
  cycles: number
  survived: number
  acknowledgedWritesChecked: number
  acknowledgedOrders: number
  idempotentRetries: number
  webhooksVerified: number
  receiverRequests: number
  failures: string[]
  records: CycleRecord[]
}

interface Demo { owner: { id: number; token: string }; store: { id: number }; driver: { id: number; token: string }; staff: Array<{ role: string; pin: string }> }

// Loopback receiver; retries due half a second after a failure; the breaker must not hold the
// catch-up (the receiver fails a tenth of the requests on purpose).
const ENV = { WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_RETRY_SCHEDULE: '0.5', WEBHOOK_CIRCUIT_FAILURES: '1000' }
const MIX = { plain: 3, idempotent: 2, status: 2, kds: 2 }

async function json(url: string, method: string, token: string | null, body?: unknown): Promise<any> {
  const r = await fetch(url, { method, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await r.text()
  if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${text}`)
  return text ? JSON.parse(text) : null
}

/** Set up the account once: a cook signed in on an enrolled device, a second driver, the endpoint. */
async function setUp(server: { url: string }, dbPath: string, demo: Demo, rcv: ChaosReceiver, ledger: Ledger): Promise<{ target: Omit<Target, 'url'>; endpointId: number; outboxAfter: number }> {
  const base = `${server.url}/api/v1`
  const sid = demo.store.id
  const { key } = await json(`${base}/restaurants/${sid}/pin-devices`, 'POST', demo.owner.token, { name: 'chaos-kitchen' })
  // The waiter bumps: bound to no station, it may move every line (the demo's kitchen member works
  // the oven only, and these orders are salads and drinks; docs/kds.md "Who may bump").
  const pin = demo.staff.find((s) => s.role === 'waiter')!.pin
  const { token: kitchenToken } = await json(`${base}/restaurants/${sid}/staff/pin`, 'POST', null, { pin, device: key })
  const second = await json(`${base}/drivers`, 'POST', demo.owner.token, { name: 'Chaos driver', phone: '+15550001234', restaurant_id: sid })
  for (const d of [demo.driver, second]) ledger.drivers.push({ id: d.id, token: d.token, nextSeq: 0, ackedSeq: -1 })
  const ep = await json(`${base}/webhook-endpoints`, 'POST', demo.owner.token, { url: `${rcv.url}/hook`, events: ['*'] })
  rcv.secret = ep.secret
  const db = new Database(dbPath, { readonly: true })
  try {
    const items = db.prepare(`SELECT id FROM menu_items m WHERE store_id = ? AND is_sold_out = 0
      AND NOT EXISTS (SELECT 1 FROM item_variants v WHERE v.item_id = m.id) ORDER BY id LIMIT 4`).pluck().all(sid) as number[]
    const outboxAfter = (db.prepare('SELECT COALESCE(MAX(id), 0) FROM outbox').pluck().get() as number)
    return { target: { storeId: sid, ownerToken: demo.owner.token, kitchenToken, items }, endpointId: ep.id, outboxAfter }
  } finally {
    db.close()
  }
}

function poster(url: string, token: string): Poster {
  return async (path, body, key) => {
    const r = await fetch(`${url}/api/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key }, body })
    const text = await r.text()
    let id: number | undefined
    try { id = (JSON.parse(text) as { id?: number }).id } catch { /* reported by status */ }
    return { status: r.status, replayed: r.headers.get('idempotent-replayed') ?? undefined, id, body: text }
  }
}

export async function runChaos(o: ChaosOptions): Promise<ChaosSummary> {
  const rand = rng(o.seed)
  const [minKill, maxKill] = o.killAfterMs ?? [300, 2500]
  const ledger = new Ledger(`chaos${o.seed}`)
  const rcv = new ChaosReceiver(0.1, rng(o.seed ^ 0x5eed))
  await rcv.start()
  const env = { ...ENV, ...o.env }
  const deployment: Deployment<Demo> = o.cluster ? clusterDeployment(dirname(o.dbPath), o.cwd, env) : singleDeployment(o.dbPath, o.cwd, env)
  const demo = await deployment.start()
  const summary: ChaosSummary = { seed: o.seed, cycles: o.cycles, survived: 0, acknowledgedWritesChecked: 0, acknowledgedOrders: 0, idempotentRetries: 0, webhooksVerified: 0, receiverRequests: 0, failures: [], records: [] }
  const reported = new Set<string>()
  try {
    const { target, endpointId, outboxAfter } = await setUp(deployment, deployment.dbPath, demo, rcv, ledger)
    const confirmed = new Set<number>()
    for (let cycle = 1; cycle <= o.cycles; cycle++) {
      const violations: string[] = []
      const life = new Life({ ...target, url: deployment.url }, ledger, cycle, rand)
      const killAfterMs = Math.round(minKill + rand() * (maxKill - minKill))
      const load = life.run(MIX)
      await new Promise((r) => setTimeout(r, killAfterMs))
      life.expectDeath()
      await deployment.kill()
      life.stop()
      await load
      await life.close()
      violations.push(...life.unexpected)

      const inFlight = ledger.orders.filter((x) => x.cycle === cycle && x.id === null)
      const checked = await deployment.fileToCheck()
      const snap = afterKill(checked, ledger, demo.owner.id, outboxAfter, violations)
      const restartMs = await deployment.recover()

      // Every in-flight idempotent create of this cycle, and the last few acknowledged ones.
      const mine = ledger.orders.filter((x) => x.cycle === cycle && x.key !== null)
      const retry = [...mine.filter((x) => x.id === null), ...mine.filter((x) => x.id !== null).slice(-3)]
      const retries = await retryIdempotent(poster(deployment.url, demo.owner.token), target.storeId, retry, snap, violations)
      await servedAfterRestart(deployment.url, demo.owner.token, target.storeId, ledger, rand, 10, violations)
      const fresh = snap.outboxIds.filter((id) => !confirmed.has(id))
      const delivered = await webhooksDelivered(deployment.dbPath, endpointId, fresh, rcv, o.webhookWaitMs ?? 60_000, violations)
      for (const id of fresh) confirmed.add(id) // a missing one is reported once, not again every cycle

      const inFlightCommitted = inFlight.filter((x) => snap.byNote.has(x.note)).length
      const news = violations.filter((v) => !reported.has(v))
      for (const v of news) reported.add(v)
      const rec: CycleRecord = {
        cycle, killAfterMs, restartMs, requests: life.stats.requests, ordersAcked: life.stats.orders, statusChangesAcked: life.stats.statusChanges,
        bumpsAcked: life.stats.bumps, positionsAcked: life.stats.positionsAcked, eventsAtKill: fresh.length, webhooksConfirmed: delivered,
        idempotentRetries: retries, inFlightOrders: inFlight.length, inFlightCommitted, violations: news,
      }
      summary.records.push(rec)
      summary.acknowledgedWritesChecked += snap.checkedWrites
      summary.idempotentRetries += retries
      summary.webhooksVerified += delivered
      summary.failures.push(...news.map((v) => `cycle ${cycle}: ${v}`))
      if (news.length === 0) summary.survived++
      o.log(`cycle ${String(cycle).padStart(3)}/${o.cycles}: killed at ${killAfterMs} ms after ${life.stats.requests} requests ` +
        `(+${rec.ordersAcked} orders, +${rec.statusChangesAcked} status, +${rec.bumpsAcked} bumps, ${rec.positionsAcked} position acks; ${inFlight.length} creates in flight, ${inFlightCommitted} of them committed); ` +
        `integrity ${snap.integrity}; ${snap.checkedWrites} acknowledged writes checked; ${retries} idempotent retries; ` +
        `webhooks ${delivered}/${fresh.length} new events delivered; ${o.cluster ? 'failover' : 'restart'} ${restartMs} ms; ${news.length ? `${news.length} VIOLATIONS: ${news.slice(0, 3).join(' | ')}` : 'ok'}`)
    }
    summary.acknowledgedOrders = ledger.acknowledged().length
    summary.receiverRequests = rcv.requests
    return summary
  } finally {
    await deployment.stop()
    await rcv.close()
  }
}

