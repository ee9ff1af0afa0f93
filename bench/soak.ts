/**
 * Soak (issue 21 item 6): `npm run soak -- --minutes M [--rate R] [--sample-seconds S] [--seed N]`.
 *
 * The real server runs in its own process with bench/lib/soak-probe.ts preloaded (heap and
 * event-loop delay, written to a file; nothing in src is involved). Its capacity for the mixed
 * load (owner orders and status changes) is measured briefly in a closed loop unless --rate is
 * given, then the load runs at half of it for M minutes together with drivers streaming positions
 * (/ws/driver), customers watching (/ws/track, a quarter reconnecting every round) and webhook
 * deliveries to a local receiver. Every S seconds: RSS (/proc/<pid>/status VmRSS), heap used and
 * event-loop delay p99 (the probe), open fds (/proc/<pid>/fd), requests, errors. Prints a table
 * over time; exits 1 when RSS, heap, fds or event-loop delay keep growing (bench/lib/growth.ts) or
 * more than 0.1 % of requests failed. Writes bench/results/<time>-soak.json.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { startApp, seedDemo } from './lib/proc.ts'
import { Receiver } from './lib/webhook-kit.ts'
import { SoakLoad } from './lib/soak-load.ts'
import { detectGrowth, type GrowthOptions, type GrowthVerdict } from './lib/growth.ts'
import { writeResult, type ScenarioOptions } from './lib/scenario.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const PROBE = fileURLToPath(new URL('./lib/soak-probe.ts', import.meta.url))

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '5' },
    rate: { type: 'string' },
    'sample-seconds': { type: 'string' },
    'calibrate-seconds': { type: 'string', default: '10' },
    seed: { type: 'string', default: '1' },
  },
})
const num = (name: string, raw: string | undefined, min: number): number => {
  const n = Number(raw)
  if (!Number.isFinite(n) || n < min) { console.error(`--${name} must be a number ≥ ${min}, got "${raw}"`); process.exit(2) }
  return n
}
const minutes = num('minutes', values.minutes, 0.1)
const givenRate = values.rate === undefined ? null : num('rate', values.rate, 1)
// About 60–180 samples whatever the length: the growth detector wants a series, not a handful.
const sampleSec = values['sample-seconds'] === undefined ? Math.min(10, Math.max(1, Math.round((minutes * 60) / 60))) : num('sample-seconds', values['sample-seconds'], 1)
const calibrateSec = num('calibrate-seconds', values['calibrate-seconds'], 1)
const seed = num('seed', values.seed, 0)
const rowSec = minutes >= 5 ? 60 : Math.max(sampleSec, 10)
// The warm-up must cover what fills up once and then stays level: order actors are passivated after
// 60 s idle (src/actors/system.ts, swept every 30 s), so memory climbs for ~90 s at any rate before
// it levels off; and V8 sizes its heap to the allocation rate. At least 150 s, at least a quarter.
const WARMUP = Math.min(0.75, Math.max(0.25, 150 / (minutes * 60)))

interface Demo { owner: { id: number; token: string }; store: { id: number }; driver: { id: number; token: string } }
interface Sample {
  t: number; rssMB: number; heapMB: number; eldP99Ms: number; fds: number; requests: number; errors: number; skipped: number; webhooks: number
  /** Requests made minus webhook deliveries answered: each request causes one event, so this is the delivery backlog (± in flight). */
  webhookLag: number
}

/** Growth limits per series: relative tolerance of the last third over the middle one, plus slack in its unit. */
const LIMITS: Record<'rssMB' | 'heapMB' | 'fds' | 'eldP99Ms' | 'webhookLag', Partial<GrowthOptions>> = {
  // Memory: the floors the GC leaves (p10 of each third), not the medians (growth.ts).
  rssMB: { tolerance: 0.1, slack: 16, level: 0.1 },
  heapMB: { tolerance: 0.15, slack: 8, level: 0.1 },
  fds: { tolerance: 0, slack: 10 },
  eldP99Ms: { tolerance: 0.5, slack: 10 },
  // A backlog that keeps growing means deliveries fall further behind for ever (rows, then memory).
  webhookLag: { tolerance: 0.5, slack: 500 },
}

const vmRssMB = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : NaN
}
const fdCount = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length
const lastProbe = (file: string): { heapUsed: number; eldP99Ms: number } | null => {
  try {
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n')
    return JSON.parse(lines.at(-1)!)
  } catch { return null }
}
const pad = (s: string | number, n: number) => String(s).padStart(n)

const startedAt = new Date()
const dir = mkdtempSync(join(process.env.BENCH_DB_DIR ?? tmpdir(), 'dispatch-soak-'))
const dbPath = join(dir, 'soak.db')
const probeFile = join(dir, 'probe.jsonl')
writeFileSync(probeFile, '')
const rcv = new Receiver()
let code = 0
let server: Awaited<ReturnType<typeof startApp>> | null = null
let load: SoakLoad | null = null
try {
  await rcv.start()
  const demo = await seedDemo<Demo>(dbPath, ROOT)
  server = await startApp(dbPath, ROOT, { WEBHOOK_ALLOW_LOOPBACK: '1', SOAK_PROBE_FILE: probeFile, SOAK_PROBE_MS: String(sampleSec * 1000) }, ['--import', 'tsx', '--import', PROBE])
  const pid = server.proc.pid!
  const db = new Database(dbPath, { readonly: true })
  const items = db.prepare(`SELECT id FROM menu_items m WHERE store_id = ? AND is_sold_out = 0
    AND NOT EXISTS (SELECT 1 FROM item_variants v WHERE v.item_id = m.id) ORDER BY id LIMIT 4`).pluck().all(demo.store.id) as number[]
  db.close()
  load = new SoakLoad({ url: server.url, storeId: demo.store.id, ownerToken: demo.owner.token, items }, seed)
  const sid = demo.store.id

  // Set-up through the API: the endpoint, five drivers each with a picked-up delivery to watch.
  const ep = await load.call('POST', '/webhook-endpoints', { url: `http://127.0.0.1:${rcv.port}/ep/0`, events: ['*'] })
  if (ep.status !== 201) throw new Error(`endpoint: ${ep.status} ${JSON.stringify(ep.json)}`)
  rcv.secrets[0] = ep.json.secret
  const drivers = [demo.driver]
  for (let i = 1; i < 5; i++) drivers.push((await load.call('POST', '/drivers', { name: `Soak driver ${i}`, phone: `+1555000${1000 + i}`, restaurant_id: sid })).json)
  const trackTokens: string[] = []
  for (const d of drivers) {
    const o = await load.call('POST', `/restaurants/${sid}/orders`, { type: 'delivery', address: '1 Soak Street', customer_name: 'Soak', phone: '+15550100200', items: [{ item_id: items[0], quantity: 1 }] })
    const a = await load.call('POST', `/restaurants/${sid}/orders/${o.json.id}/assign`, { driver_id: d.id })
    const p = await load.call('PUT', `/restaurants/${sid}/orders/${o.json.id}/delivery-status`, { delivery_status: 'picked_up' })
    if (o.status !== 200 || a.status !== 200 || p.status !== 200) throw new Error(`delivery set-up: ${o.status}/${a.status}/${p.status} ${JSON.stringify(p.json)}`)
    trackTokens.push(o.json.track_token as string)
  }

  let capacity: number | null = null
  let rate = givenRate
  if (rate === null) {
    await load.capacity(16, 3) // warm-up
    capacity = await load.capacity(16, calibrateSec)
    rate = Math.max(1, Math.round(capacity / 2))
    console.log(`soak: capacity ${capacity.toFixed(0)} mixed req/s (closed loop, 16 clients, ${calibrateSec} s); driving ${rate} req/s for ${minutes} min`)
  } else {
    console.log(`soak: driving ${rate} req/s (--rate) for ${minutes} min`)
  }
  const base = { requests: load.c.requests, errors: load.c.errors }
  rcv.reset()
  load.startDrivers(drivers.map((d) => d.token), 2)
  load.startTrackers(trackTokens, 4, rowSec * 1000)
  load.pace(rate)

  console.log(`sampling every ${sampleSec} s; a row every ${rowSec} s`)
  const head = `${'time'.padStart(6)} ${'RSS MB'.padStart(7)} ${'heap MB'.padStart(8)} ${'ELD p99 ms'.padStart(10)} ${'fds'.padStart(5)} ${'requests'.padStart(9)} ${'errors'.padStart(6)} ${'webhooks'.padStart(9)} ${'wh lag'.padStart(7)}`
  console.log(head)
  const samples: Sample[] = []
  const t0 = performance.now()
  const endAt = t0 + minutes * 60_000
  let nextRow = rowSec
  let eldMaxInRow = 0
  while (performance.now() < endAt) {
    await new Promise((r) => setTimeout(r, sampleSec * 1000))
    if (server.proc.exitCode !== null || server.proc.signalCode !== null) throw new Error(`the server died during the soak:\n${server.output()}`)
    const p = lastProbe(probeFile)
    const s: Sample = {
      t: Math.round((performance.now() - t0) / 1000), rssMB: vmRssMB(pid), heapMB: p ? p.heapUsed / 2 ** 20 : NaN, eldP99Ms: p?.eldP99Ms ?? NaN,
      fds: fdCount(pid), requests: load.c.requests - base.requests, errors: load.c.errors - base.errors, skipped: load.c.skipped, webhooks: rcv.ok2xx, webhookLag: 0,
    }
    s.webhookLag = s.requests - s.webhooks
    samples.push(s)
    eldMaxInRow = Math.max(eldMaxInRow, s.eldP99Ms)
    if (s.t >= nextRow || performance.now() >= endAt) {
      const time = rowSec >= 60 ? `${(s.t / 60).toFixed(0)}m` : `${s.t}s`
      console.log(`${pad(time, 6)} ${pad(s.rssMB.toFixed(1), 7)} ${pad(s.heapMB.toFixed(1), 8)} ${pad(eldMaxInRow.toFixed(1), 10)} ${pad(s.fds, 5)} ${pad(s.requests, 9)} ${pad(s.errors, 6)} ${pad(s.webhooks, 9)} ${pad(s.webhookLag, 7)}`)
      nextRow += rowSec
      eldMaxInRow = 0
    }
  }
  const counters = load.c
  await load.stop()
  load = null

  const verdicts = Object.fromEntries(Object.entries(LIMITS).map(([k, lim]) => [k, detectGrowth(samples.map((s) => s[k as keyof Sample]), { warmup: WARMUP, ...lim })])) as Record<keyof typeof LIMITS, GrowthVerdict>
  const last = samples.at(-1)!
  const seconds = minutes * 60
  const errorShare = last.requests ? last.errors / last.requests : 0
  const lines = [
    `rate: ${rate} mixed req/s offered${capacity === null ? ' (--rate)' : ` = half of the measured ${capacity.toFixed(0)} req/s`}; achieved ${(last.requests / seconds).toFixed(1)} req/s over ${minutes} min; ${last.skipped} skipped (server behind)`,
    `errors: ${last.errors} of ${last.requests} requests (${(errorShare * 100).toFixed(3)} %)${counters.firstErrors.length ? `; first: ${counters.firstErrors.slice(0, 3).join(' | ')}` : ''}`,
    `webhook deliveries answered 2xx: ${rcv.ok2xx}; driver positions sent: ${counters.positions}; track sockets opened ${counters.trackOpened}, closed ${counters.trackClosed}, frames received ${counters.trackFrames}`,
    `growth verdicts ignore the first ${(WARMUP * minutes).toFixed(1)} min (warm-up)${minutes < 10 ? '; runs under 10 min give weak verdicts: use --minutes 10 or more' : ''}`,
    ...Object.entries(verdicts).map(([k, v]) => `${k}: ${v.growing ? 'GROWING' : 'steady'} — ${v.reason}`),
  ]
  console.log(['', '== soak summary ==', ...lines].join('\n'))
  const failed = Object.entries(verdicts).filter(([, v]) => v.growing).map(([k]) => k)
  if (errorShare > 0.001) failed.push(`errors ${(errorShare * 100).toFixed(3)} %`)
  const file = writeResult({ name: 'soak', rows: [], notes: lines, loadGenerator: 'bench/lib/soak-load.ts in the driver process, same machine', ...{ soak: { minutes, rate, capacity, sampleSec, samples, verdicts, failed } } } as Parameters<typeof writeResult>[0],
    { minutes, rate, sampleSec, seed, log: () => {} } as unknown as ScenarioOptions, startedAt)
  console.log(`results: ${file}`)
  if (failed.length) { console.error(`soak FAILED: ${failed.join(', ')}`); code = 1 } else console.log('soak passed: nothing kept growing')
} catch (err) {
  console.error('soak broke:', err)
  code = 1
} finally {
  await load?.stop()
  await server?.stop()
  await rcv.close()
  rmSync(dir, { recursive: true, force: true })
}
process.exit(code)
