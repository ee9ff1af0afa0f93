/**
 * Live GPS tracking (issue 3 item 9): D drivers stream positions over `/ws/driver` and W customers
 * watch their orders over `/ws/track/{token}`, against the real server in its own process
 * (`node dist/src/main.js`, as `npm start`), and the same relay on a conventional stack (Socket.IO,
 * bench/baseline/socketio-server.ts) in the same run. This server runs twice: drivers streaming
 * plain positions (`uws`, the same relay as the baseline) and numbered ones that it also
 * acknowledges once stored (`uws-acks`).
 *
 * Per stack:
 *   1. memory: idle tracking sockets opened on a fresh server; server RSS delta / sockets (each
 *      reading taken after the server has been idle for a while, so V8 has collected);
 *   2. scale: D = W rising at 1 Hz per driver (each driver's order watched by one customer) up to
 *      what the server's file-descriptor limit allows; the largest D = W whose driver → watcher p99
 *      stays under 50 ms (a miss is measured twice) is the fleet it holds;
 *   3. rate: at the top D = W, the same for every stack, positions per driver per second rising
 *      until the server stops keeping up (relayed < 90% of offered, or p99 > 1 s).
 *
 * "Processed" counts positions relayed to their watcher within the measured window (this server
 * also validated, stored and, in the acked run, acknowledged each; acknowledgements are reported
 * too). Under overload this server coalesces each driver's positions per event-loop turn (the
 * latest wins), so relayed/s stops growing instead of a backlog forming. Latency is from just before
 * the driver's frame is written until the watcher has read that position, on one clock (a driver
 * and its watcher live in the same client process).
 *
 * The clients (bench/tracking-client.ts: raw RFC 6455 over `net`, the same code for both stacks)
 * run in TRACKING_WORKERS child processes on this same machine, sharing its cores with the server.
 *
 * Knobs (environment; `--quick`, `--duration`, `--warmup`, `--only uws,uws-acks,socketio` as for every scenario;
 * `--quick`, or any `--duration` of 3 s or less, selects the small defaults in brackets):
 *   TRACKING_LEVELS   D = W levels at 1 Hz, comma-separated; `max` = what the server's fd limit allows
 *                     (default 1000,2500,5000,7500,max [250,1000])
 *   TRACKING_RATES    per-driver Hz for the rate stage (default 1.5,2,2.5,3,4,6,8,10 [5])
 *   TRACKING_IDLE     idle tracking sockets for the memory stage (default 10000 [2000])
 *   TRACKING_WORKERS  client processes (default 2)
 *   TRACKING_NODE_ARGS extra node flags for this server, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`
 *   TRACKING_SERVER_ROOT run this server (its build, the seed CLI) from another checkout of the
 *                     repository, e.g. an untouched copy of an earlier commit: before/after in one run
 *                     with the same clients (default: this checkout)
 */
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { Pool } from 'undici'
import type { BenchRow, Scenario, ScenarioOptions, ScenarioResult } from './lib/scenario.ts'
import { appArgs, cpuSeconds, cpuSplit, freePort, runNode, startServer, type Server, LOAD_TEST_LIMITS } from './lib/proc.ts'
import { quantile } from './lib/load.ts'
import type { ClientPair, Mode, ParentMsg, WorkerMsg } from './tracking-client.ts'
import { unlimitedPlan } from './lib/unlimited-plan.ts'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** Where this server's code runs from (TRACKING_SERVER_ROOT: another checkout, for before/after runs). */
export const SERVER_ROOT = process.env.TRACKING_SERVER_ROOT ?? ROOT
const CLIENT = fileURLToPath(new URL('./tracking-client.ts', import.meta.url))
/** Source addresses for the clients' connections: each has its own ephemeral port range. */
export const LOCAL_ADDRESSES = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`)
/** File descriptors a server keeps for itself (listen socket, database, WAL, epoll, stdio, …) plus margin. */
export const FD_MARGIN = 24
const P99_LIMIT_MS = 50

interface Stack { key: string; mode: Mode; acks: boolean; label: string }
const STACKS: Stack[] = [
  // Drivers stream positions without `seq` (fire-and-forget, as a tracking app does): the same relay
  // as the baseline, plus validation, a driver actor and a durable row per driver.
  { key: 'uws', mode: 'uws', acks: false, label: 'uws+actors' },
  // Numbered positions: each is also acknowledged to its driver once stored (one more frame each).
  { key: 'uws-acks', mode: 'uws', acks: true, label: 'uws+actors, acked' },
  { key: 'socketio', mode: 'socketio', acks: false, label: 'socket.io baseline' },
]

export const envList = (name: string, fallback: string): string[] => (process.env[name] ?? fallback).split(',').map((s) => s.trim()).filter(Boolean)
export const envInt = (name: string, fallback: number): number => {
  const n = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`)
  return n
}

// ---- server facts from /proc ------------------------------------------------------------------

export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) * 1024 : NaN
}

/** Sockets the process may still open: its soft RLIMIT_NOFILE less what it has open now. */
export function fdHeadroom(pid: number): number {
  const m = /Max open files\s+(\d+)/.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))
  const limit = m ? Number(m[1]) : 1024
  return limit - readdirSync(`/proc/${pid}/fd`).length - FD_MARGIN
}

/** Busy and total jiffies of the whole machine (/proc/stat), for the machine's CPU use over a stage. */
export function machineTicks(): { busy: number; total: number; softirq: number } {
  const x = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  const total = x.reduce((a, b) => a + b, 0)
  return { busy: total - x[3]! - (x[4] ?? 0), total, softirq: (x[5] ?? 0) + (x[6] ?? 0) }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * One measured window of a load stage: the workers run at `rateHz` for warm-up + duration, and the
 * server's CPU (user/system), its RSS and the machine's busy share are sampled around the duration.
 */
export async function measuredWindow(w: Workers, pid: number, rateHz: number, opts: ScenarioOptions) {
  const runMsg: ParentMsg = { cmd: 'run', rateHz, durationSec: opts.duration, warmupSec: opts.warmup }
  const pending = w.all<'ran'>(() => runMsg)
  await sleep(opts.warmup * 1000)
  const cpu0 = cpuSeconds(pid)
  const split0 = cpuSplit(pid)
  const m0 = machineTicks()
  await sleep(opts.duration * 1000)
  const m1 = machineTicks()
  const cpu1 = cpuSeconds(pid)
  const split1 = cpuSplit(pid)
  const rss = rssBytes(pid)
  return {
    ran: await pending,
    cpuSec: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0,
    userSec: split1.user - split0.user,
    sysSec: split1.sys - split0.sys,
    rss,
    machineBusy: (m1.busy - m0.busy) / (m1.total - m0.total),
    machineIrq: (m1.softirq - m0.softirq) / (m1.total - m0.total),
  }
}

/** Seconds an idle server is given before its memory is read (V8 shrinks an idle heap after a while). */
const IDLE_SETTLE_SEC = 12

/** RSS after `sec` seconds of idleness: the lowest reading of the last few, as garbage is collected. */
async function settledRss(pid: number, sec: number): Promise<number> {
  const seen: number[] = []
  for (let i = 0; i < sec; i++) { await sleep(1000); seen.push(rssBytes(pid)) }
  return Math.min(...seen.slice(-3))
}

// ---- client workers ---------------------------------------------------------------------------

export class Workers {
  private waiting: Array<Array<(m: WorkerMsg) => void>>
  private constructor(private readonly procs: ChildProcess[]) {
    this.waiting = procs.map(() => [])
    procs.forEach((p, i) => {
      p.on('message', (m: WorkerMsg) => {
        const waiter = this.waiting[i]!.shift()
        if (waiter) waiter(m)
        else if (m.ev === 'error') console.error(`tracking client ${i}: ${m.message}`)
      })
      p.on('exit', (code) => { if (code) for (const w of this.waiting[i]!.splice(0)) w({ ev: 'error', message: `exited ${code}` }) })
    })
  }

  static async start(n: number, mode: Mode, acks: boolean, port: number, watchPort?: number): Promise<Workers> {
    const procs = Array.from({ length: n }, () => fork(CLIENT, [], { execArgv: ['--import', 'tsx'], cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }))
    const w = new Workers(procs)
    await w.all(() => ({ cmd: 'init', mode, acks, host: '127.0.0.1', port, localAddresses: LOCAL_ADDRESSES, ...(watchPort ? { watchPort } : {}) }))
    return w
  }

  get size(): number { return this.procs.length }
  pids(): number[] { return this.procs.map((p) => p.pid!) }

  /** Send each worker its message and wait for every answer. */
  all<E extends WorkerMsg['ev']>(make: (i: number) => ParentMsg): Promise<Array<Extract<WorkerMsg, { ev: E }>>> {
    return Promise.all(this.procs.map((p, i) => new Promise<Extract<WorkerMsg, { ev: E }>>((resolve, reject) => {
      this.waiting[i]!.push((m) => (m.ev === 'error' ? reject(new Error(m.message)) : resolve(m as Extract<WorkerMsg, { ev: E }>)))
      p.send(make(i))
    })))
  }

  /** Split `items` over the workers by index (worker i takes items i, i+n, …). */
  share<T>(items: T[], i: number): T[] { return items.filter((_, k) => k % this.procs.length === i) }

  async close(): Promise<void> {
    await Promise.all(this.procs.map((p) => new Promise<void>((resolve) => {
      if (p.exitCode !== null) return resolve()
      const t = setTimeout(() => p.kill('SIGKILL'), 5000)
      p.once('exit', () => { clearTimeout(t); resolve() })
      p.send({ cmd: 'close' } satisfies ParentMsg)
    })))
  }
}

// ---- data for this server: drivers with orders picked up, through the real API -----------------

export interface Demo { owner: { id: number; token: string }; store: { id: number } }

/**
 * The demo account (`dispatch seed --demo`) on a plan with every feature and no quota: the Pro
 * plan's 200-driver quota would refuse the fleet part-way (the quota check itself still runs).
 */
export async function seedDemo(dbPath: string): Promise<Demo> {
  const demo = JSON.parse((await runNode(['bin/dispatch.js', 'seed', '--demo', '--json'], { DB_PATH: dbPath, LOG_LEVEL: 'warn' }, SERVER_ROOT)).trim().split('\n').pop()!) as Demo
  unlimitedPlan(dbPath, demo.owner.id)
  return demo
}

/** `n` drivers, each with one delivery order assigned to it and picked up (so its position is visible). */
export async function createPairs(url: string, dbPath: string, demo: Demo, n: number, log: (s: string) => void): Promise<ClientPair[]> {
  const db = new Database(dbPath, { readonly: true })
  const itemId = db.prepare(`SELECT id FROM menu_items m WHERE store_id = ? AND is_sold_out = 0
    AND NOT EXISTS (SELECT 1 FROM item_variants v WHERE v.item_id = m.id) ORDER BY id LIMIT 1`).pluck().get(demo.store.id) as number
  db.close()
  const pool = new Pool(url, { connections: 32, pipelining: 1 })
  const headers = { authorization: `Bearer ${demo.owner.token}`, 'content-type': 'application/json' }
  const call = async (method: 'POST' | 'PUT', path: string, body: unknown): Promise<any> => {
    for (let attempt = 1; ; attempt++) {
      try {
        const r = await pool.request({ method, path: `/api/v1${path}`, headers, body: JSON.stringify(body) })
        const text = await r.body.text()
        if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode} ${text}`)
        return JSON.parse(text)
      } catch (err) {
        // A connection dropped under the set-up load: try again (a duplicate driver is harmless here).
        if (attempt >= 3 || !/ECONNRESET|EPIPE|socket|closed/i.test(String((err as Error).message))) throw err
        retries++
      }
    }
  }
  let retries = 0
  const t0 = Date.now()
  const pairs: ClientPair[] = new Array(n)
  let next = 0
  const sid = demo.store.id
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next < n) {
      const i = next++
      const d = await call('POST', '/drivers', { name: `Bench driver ${i + 1}`, phone: `+1555${String(2_000_000 + i).padStart(7, '0')}`, restaurant_id: sid })
      const o = await call('POST', `/restaurants/${sid}/orders`, {
        type: 'delivery', address: `${1 + (i % 500)} Bench Street`, customer_name: `Customer ${i + 1}`, phone: '+15550100200', items: [{ item_id: itemId, quantity: 1 }],
      })
      await call('POST', `/restaurants/${sid}/orders/${o.id}/assign`, { driver_id: d.id })
      await call('PUT', `/restaurants/${sid}/orders/${o.id}/delivery-status`, { delivery_status: 'picked_up' })
      pairs[i] = { driverId: d.id, token: d.token, orderId: o.id, trackToken: o.track_token }
    }
  }))
  await pool.close()
  log(`[tracking] set up ${n} drivers with picked-up orders through the API in ${((Date.now() - t0) / 1000).toFixed(1)} s${retries ? ` (${retries} requests retried after a dropped connection)` : ''}`)
  return pairs
}

/** The baseline needs no data: ids are enough (it authenticates nothing). */
export const syntheticPairs = (n: number): ClientPair[] => Array.from({ length: n }, (_, i) => ({ driverId: i + 1, token: '', orderId: i + 1, trackToken: '' }))

// ---- one stack --------------------------------------------------------------------------------

interface Stage {
  stack: string
  level: number
  rateHz: number
  /** A second measurement of a level whose first one missed the p99 bound. */
  repeat: boolean
  offered: number
  sent: number
  skipped: number
  acked: number
  delivered: number
  seconds: number
  p50: number; p90: number; p99: number; max: number; mean: number
  errors: number
  serverCpuSec: number | null
  /** Share of the server's CPU time spent in the kernel (socket reads and writes, fsync). */
  serverSysShare: number
  /** Server user-mode CPU seconds over the stage (/proc, 10 ms ticks): the JS work, without the kernel's socket I/O. */
  serverUserSec: number
  clientCpuSec: number
  /** Server RSS at the end of the stage. */
  rss: number
  /** Whole machine: busy share of all cores over the stage, and the part in (soft)irq. */
  machineBusy: number
  machineIrq: number
}

interface StackResult {
  stack: Stack
  stages: Stage[]
  /** Largest D = W at 1 Hz with p99 under 50 ms and every socket open. */
  held: number
  /** What limited `held`. */
  heldLimit: string
  /** The level of the rate stage (the top level reached). */
  rateLevel: number
  idle: { sockets: number; bytesPerSocket: number; rssBefore: number; rssAfter: number; failed: number }
}

async function runStack(stack: Stack, opts: ScenarioOptions, quick: boolean): Promise<StackResult> {
  const log = opts.log
  const workersN = envInt('TRACKING_WORKERS', 2)
  const idleN = envInt('TRACKING_IDLE', quick ? 2000 : 10_000)
  const levelSpec = envList('TRACKING_LEVELS', quick ? '250,1000' : '1000,2500,5000,7500,max')
  const rates = envList('TRACKING_RATES', quick ? '5' : '1.5,2,2.5,3,4,6,8,10').map(Number)
  const dir = mkdtempSync(join(tmpdir(), `dispatch-bench-tracking-${stack.key}-`))
  const dbPath = join(dir, 'bench.db')
  let server: Server | null = null
  let workers: Workers | null = null
  const baseEnv = { LOG_LEVEL: 'warn', HOST: '127.0.0.1' }
  const start = async (): Promise<Server> => {
    const port = await freePort()
    if (stack.mode === 'socketio') return startServer(['--import', 'tsx', 'bench/baseline/socketio-server.ts'], { ...baseEnv, PORT: String(port) }, port, '/healthz', ROOT)
    const nodeArgs = (process.env.TRACKING_NODE_ARGS ?? '').split(' ').filter(Boolean)
    return startServer([...nodeArgs, ...appArgs(SERVER_ROOT)], {
      ...baseEnv, DB_PATH: dbPath, PORT: String(port), SITE_URL: `http://127.0.0.1:${port}`, ...LOAD_TEST_LIMITS, DEMO_SEED: '0',
    }, port, '/healthz', SERVER_ROOT)
  }
  try {
    // How many sockets can the server hold? Ask a throwaway process (same limits as the real one).
    server = await start()
    const headroom = fdHeadroom(server.proc.pid!)
    // Rounded down to a multiple of 50 so every stack reaches the same top level.
    const top = Math.floor(headroom / 2 / 50) * 50
    const levels = [...new Set(levelSpec.map((l) => (l === 'max' ? top : Math.min(top, Number(l)))))].filter((l) => l > 0).sort((a, b) => a - b)
    const warmN = Math.min(1000, Math.ceil(idleN / 5))
    const need = Math.max(levels.at(-1)!, warmN + idleN)
    let pairs: ClientPair[]
    if (stack.mode === 'uws') {
      await server.stop()
      const demo = await seedDemo(dbPath)
      server = await start()
      pairs = await createPairs(server.url, dbPath, demo, need, log)
      // Measure on a fresh process: no garbage or caches left from the set-up.
      await server.stop()
      server = await start()
    } else {
      pairs = syntheticPairs(need)
    }
    const srv = server
    const pid = srv.proc.pid!
    workers = await Workers.start(workersN, stack.mode, stack.acks, srv.port)
    const w = workers

    // 1. memory per idle tracking socket: the slope between a warm-up batch and the full set, each
    // read once the server has been idle long enough for V8 to collect what opening them left behind.
    const warm = pairs.slice(0, warmN)
    await w.all<'idle'>((i) => ({ cmd: 'idle', targets: w.share(warm, i) }))
    const rssBefore = await settledRss(pid, 3)
    const rest = pairs.slice(warm.length, warm.length + idleN)
    const idleRes = await w.all<'idle'>((i) => ({ cmd: 'idle', targets: w.share(rest, i) }))
    const rssAfter = await settledRss(pid, IDLE_SETTLE_SEC)
    const opened = idleRes.reduce((a, r) => a + r.open, 0) - warm.length
    const idleFailed = idleRes.reduce((a, r) => a + r.failed, 0)
    const idle = { sockets: opened, bytesPerSocket: opened > 0 ? (rssAfter - rssBefore) / opened : NaN, rssBefore, rssAfter, failed: idleFailed }
    log(`[tracking] ${stack.label}: ${opened} idle tracking sockets: RSS ${(rssBefore / 2 ** 20).toFixed(1)} → ${(rssAfter / 2 ** 20).toFixed(1)} MiB, ` +
      `${(idle.bytesPerSocket / 1024).toFixed(2)} KB each${idleFailed ? ` (${idleFailed} failed: ${idleRes.find((r) => r.firstError)?.firstError})` : ''}`)
    await w.all(() => ({ cmd: 'drop' }))
    await sleep(1000)

    // 2. and 3. the load stages.
    const stages: Stage[] = []
    const stage = async (level: number, rateHz: number, repeat = false): Promise<Stage> => {
      const { ran, cpuSec, userSec, sysSec, rss, machineBusy, machineIrq } = await measuredWindow(w, pid, rateHz, opts)
      const lat = new Float64Array(ran.reduce((a, r) => a + r.latencies.length, 0))
      let k = 0
      for (const r of ran) for (const x of r.latencies) lat[k++] = x
      lat.sort()
      let sum = 0
      for (const x of lat) sum += x
      const s: Stage = {
        stack: stack.key, level, rateHz, repeat, offered: level * rateHz, seconds: opts.duration,
        sent: ran.reduce((a, r) => a + r.sent, 0), skipped: ran.reduce((a, r) => a + r.skipped, 0),
        acked: ran.reduce((a, r) => a + r.acked, 0), delivered: ran.reduce((a, r) => a + r.delivered, 0),
        p50: quantile(lat, 0.5), p90: quantile(lat, 0.9), p99: quantile(lat, 0.99), max: lat.length ? lat[lat.length - 1]! : NaN, mean: lat.length ? sum / lat.length : NaN,
        errors: ran.reduce((a, r) => a + r.errors + r.closed, 0),
        serverCpuSec: cpuSec,
        serverSysShare: userSec + sysSec > 0 ? sysSec / (userSec + sysSec) : NaN,
        serverUserSec: userSec,
        clientCpuSec: ran.reduce((a, r) => a + r.cpuSec, 0),
        rss,
        machineBusy,
        machineIrq,
      }
      log(`[tracking] ${stack.label}: D=W=${level} @${rateHz} Hz: ${(s.delivered / s.seconds).toFixed(0)} relayed/s of ${s.offered} offered, ` +
        `p50 ${s.p50.toFixed(2)} p99 ${s.p99.toFixed(2)} ms, server CPU ${s.serverCpuSec === null ? '?' : ((s.serverCpuSec / s.seconds) * 100).toFixed(0)}% (${(s.serverSysShare * 100).toFixed(0)}% kernel; user ${s.delivered ? ((s.serverUserSec / s.delivered) * 1e6).toFixed(1) : '-'} µs/position), ` +
        `clients CPU ${((s.clientCpuSec / s.seconds) * 100).toFixed(0)}%, machine ${(s.machineBusy * 100).toFixed(0)}% busy (${(s.machineIrq * 100).toFixed(0)}% irq)${s.errors ? `, ${s.errors} errors` : ''}`)
      stages.push(s)
      return s
    }

    // 2. Every level is measured (a level that misses the p99 bound does not end the sweep, so all
    // stacks reach the same top level for stage 3); a miss is measured once more before it counts,
    // since other work on this shared machine can spoil one stage.
    let connected = 0
    let held = 0
    const misses: string[] = []
    let openFailure: string | null = null
    const holds = (x: Stage) => x.p99 < P99_LIMIT_MS && x.delivered >= 0.95 * x.offered * x.seconds
    for (const level of levels) {
      const add = pairs.slice(connected, level)
      const res = await w.all<'connected'>((i) => ({ cmd: 'connect', pairs: w.share(add, i), watch: true }))
      const failed = res.reduce((a, r) => a + r.failed, 0)
      connected = res.reduce((a, r) => a + r.drivers, 0)
      log(`[tracking] ${stack.label}: ${connected} drivers + ${res.reduce((a, r) => a + r.watchers, 0)} watchers open (${Math.max(...res.map((r) => r.ms))} ms)`)
      if (failed > 0) {
        openFailure = `${failed} sockets of level ${level} could not open: ${res.find((r) => r.firstError)?.firstError}`
        break
      }
      let s = await stage(level, 1)
      if (!holds(s)) s = await stage(level, 1, true)
      if (holds(s)) held = level
      else misses.push(`p99 ${s.p99.toFixed(1)} ms at D=W=${level}`)
    }
    const heldLimit = openFailure ?? (misses.length ? misses.join(', ')
      : held === top ? `the server's file-descriptor limit (${top} drivers + ${top} watchers)` : `the highest level tried (${held})`)

    // 3. rate stage at the top level reached, the same for every stack: until it stops keeping up.
    const rateLevel = levels.filter((l) => l <= connected).at(-1)
    if (rateLevel && !openFailure) {
      for (const hz of rates) {
        const s = await stage(rateLevel, hz)
        if (s.delivered < 0.9 * s.offered * s.seconds || !(s.p99 < 1000)) break
      }
    }
    return { stack, stages, held, heldLimit, rateLevel: rateLevel ?? 0, idle }
  } catch (err) {
    if (server) log(`[tracking] ${stack.label} failed; server output:\n${server.output()}`)
    throw err
  } finally {
    await workers?.close()
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

// ---- the scenario -----------------------------------------------------------------------------

function row(label: string, s: Stage): BenchRow {
  const relayed = s.delivered / s.seconds
  return {
    scenario: `${label} @${s.rateHz} Hz`,
    load: `D=W=${s.level}, ${s.offered}/s offered${s.repeat ? ', again' : ''}`,
    durationSec: s.seconds,
    requests: s.sent,
    throughput: relayed,
    p50Ms: s.p50, p90Ms: s.p90, p99Ms: s.p99, maxMs: s.max,
    non2xx: Math.max(0, s.sent - s.delivered),
    errors: s.errors,
    ratio: null,
    serverCpuPct: s.serverCpuSec === null ? null : (s.serverCpuSec / s.seconds) * 100,
    serverCpuUsPerReq: s.serverCpuSec === null || s.delivered === 0 ? null : (s.serverCpuSec / s.delivered) * 1e6,
    extra: {
      sentPerSec: s.sent / s.seconds, ackedPerSec: s.acked / s.seconds, skippedByClientBackpressure: s.skipped, meanMs: s.mean,
      clientCpuPct: (s.clientCpuSec / s.seconds) * 100, machineBusyPct: s.machineBusy * 100, machineIrqPct: s.machineIrq * 100, serverKernelShare: s.serverSysShare, serverUserUsPerUpdate: s.delivered ? (s.serverUserSec / s.delivered) * 1e6 : null, serverRssMiB: s.rss / 2 ** 20,
    },
  }
}

export const scenario: Scenario = {
  name: 'tracking',
  description: 'driver sockets at 1 Hz → customer tracking sockets: relay rate, latency, sockets held, memory per socket, vs Socket.IO',
  async run(opts: ScenarioOptions): Promise<ScenarioResult> {
    const quick = opts.duration <= 3
    const chosen = STACKS.filter((s) => opts.only.length === 0 || opts.only.includes(s.key))
    const results: StackResult[] = []
    for (const s of chosen) results.push(await runStack(s, opts, quick))

    const rows: BenchRow[] = []
    for (const r of results) for (const s of r.stages) rows.push(row(r.stack.label, s))
    const uws = results.find((r) => r.stack.key === 'uws')
    const sio = results.find((r) => r.stack.key === 'socketio')
    for (const x of rows.filter((x) => x.scenario.startsWith('uws'))) {
      const twin = rows.find((b) => b.scenario.startsWith('socket.io') && b.load === x.load && b.scenario.endsWith(x.scenario.slice(x.scenario.indexOf('@'))))
      // Every row is a fixed offered load, so relayed/s matches wherever both keep up: compare the
      // server CPU each spends per relayed position instead (higher = this server is cheaper).
      x.ratio = twin?.serverCpuUsPerReq && x.serverCpuUsPerReq ? twin.serverCpuUsPerReq / x.serverCpuUsPerReq : null
    }
    // The rate stage runs at the same (top) level for every stack: compare there.
    const best = (r: StackResult | undefined) => r?.stages.filter((s) => s.level === r.rateLevel).reduce<Stage | null>((a, s) => (!a || s.delivered > a.delivered ? s : a), null) ?? null
    const bestUnder = (r: StackResult | undefined, ms: number) => r?.stages.filter((s) => s.level === r.rateLevel && s.p99 < ms).reduce<Stage | null>((a, s) => (!a || s.delivered > a.delivered ? s : a), null) ?? null
    const rate = (s: Stage | null) => (s ? s.delivered / s.seconds : 0)

    const targets: NonNullable<ScenarioResult['targets']> = []
    const notes: string[] = [
      'the clients (bench/tracking-client.ts, raw WebSocket over net, the same code for both stacks) run in child processes on this 2-core machine and share its cores with the server; ' +
        'each row\'s JSON has the clients\' CPU %. srv CPU % is the server process alone (100 = one core); srv µs/update = server CPU time per position relayed; ' +
        'vs baseline = the Socket.IO server\'s CPU per position at the same D, W and rate ÷ this row\'s',
      'relayed/s counts positions a watcher received in the measured window; this server also validated each, passed it through the driver\'s actor and stored it ' +
        '(one row per driver, batched commits); "acked" rows number the positions so each is also acknowledged to its driver once stored (ackedPerSec in the JSON); ' +
        'the Socket.IO baseline validates, stores and acknowledges nothing',
      `undelivered = positions sent in the window that no watcher received in it (in flight at its edges, or skipped by the server for a slow socket)`,
      `levels are capped by the server's soft RLIMIT_NOFILE (hard limit ${readFileSync('/proc/self/limits', 'utf8').match(/Max open files\s+\d+\s+(\d+)/)?.[1] ?? '?'} here, not raisable): ` +
        'D + W sockets must fit in one process',
    ]
    // What the server alone could relay: its CPU time per position at the busiest stage it kept up
    // with. Derived, not measured: on this machine the clients and the kernel's loopback work share
    // the same two cores, so the measured relay rate tops out well below it.
    const perUpdate = (r: StackResult) => {
      const kept = r.stages.filter((x) => x.serverCpuSec !== null && x.delivered >= 0.95 * x.offered * x.seconds)
      const top = kept.reduce<Stage | null>((a, x) => (!a || x.delivered > a.delivered ? x : a), null)
      return top ? { stage: top, us: (top.serverCpuSec! / top.delivered) * 1e6 } : null
    }
    for (const r of results) {
      const u = perUpdate(r)
      if (u) notes.push(`${r.stack.label}: server CPU ${u.us.toFixed(1)} µs per relayed position at ${(u.stage.delivered / u.stage.seconds).toFixed(0)}/s ` +
        `(${(u.stage.serverSysShare * 100).toFixed(0)}% of it in the kernel; user ${((u.stage.serverUserSec / u.stage.delivered) * 1e6).toFixed(1)} µs) → about ${(1e6 / u.us / 1000).toFixed(0)}k positions/s per server core (derived)`)
    }
    for (const r of results) {
      const b = bestUnder(r, P99_LIMIT_MS)
      notes.push(`${r.stack.label}: at D=W=${r.rateLevel} the most relayed with p99 < ${P99_LIMIT_MS} ms: ` +
        (b ? `${rate(b).toFixed(0)}/s (${b.rateHz} Hz, p99 ${b.p99.toFixed(2)} ms)` : 'none'))
      notes.push(`${r.stack.label}: largest D = W held at 1 Hz with p99 < ${P99_LIMIT_MS} ms: ${r.held} (limited by ${r.heldLimit})`)
      notes.push(`${r.stack.label}: ${r.idle.sockets} idle tracking sockets: server RSS ${(r.idle.rssBefore / 2 ** 20).toFixed(1)} → ${(r.idle.rssAfter / 2 ** 20).toFixed(1)} MiB = ${(r.idle.bytesPerSocket / 1024).toFixed(2)} KB per socket`)
    }
    if (uws) {
      const b = bestUnder(uws, 20)
      targets.push({
        target: '100k location updates/s processed with p99 < 20 ms at 10k drivers + 10k watchers',
        measured: b ? `${rate(b).toFixed(0)}/s relayed (${(b.acked / b.seconds).toFixed(0)}/s acked) with p99 ${b.p99.toFixed(2)} ms at D=W=${b.level}, ${b.rateHz} Hz` : `no stage with p99 < 20 ms at D=W=${uws.rateLevel}`,
        met: !!b && rate(b) >= 100_000 && b.level >= 10_000,
      })
      const acked = results.find((r) => r.stack.key === 'uws-acks')
      const ab = best(acked)
      if (acked && ab) notes.push(`uws+actors, acked: most relayed at D=W=${ab.level}: ${rate(ab).toFixed(0)}/s (${(ab.acked / ab.seconds).toFixed(0)}/s acknowledged) at ${ab.rateHz} Hz, p99 ${ab.p99.toFixed(2)} ms`)
      const top = best(uws)
      if (top && top !== b) notes.push(`uws+actors: most relayed at D=W=${top.level}: ${rate(top).toFixed(0)}/s at ${top.rateHz} Hz with p99 ${top.p99.toFixed(2)} ms`)
      targets.push({ target: `largest D = W with p99 < ${P99_LIMIT_MS} ms at 1 Hz (report; 10k + 10k wanted)`, measured: `${uws.held} + ${uws.held}`, met: uws.held >= 10_000 })
    }
    if (uws && sio) {
      // Latency-bounded relay rate at the same top D = W (this server coalesces an overloaded driver's
      // positions, Socket.IO queues them, so "most relayed at any latency" favours queueing).
      const a = bestUnder(uws, P99_LIMIT_MS)
      const b = bestUnder(sio, P99_LIMIT_MS)
      const a2 = bestUnder(uws, 100)
      const b2 = bestUnder(sio, 100)
      const ma = best(uws)
      const mb = best(sio)
      const ratio = (x: Stage | null, y: Stage | null) => (x && y ? `${(rate(x) / rate(y)).toFixed(2)}x` : '-')
      targets.push({
        target: `>= 5x the Socket.IO baseline (positions relayed/s with p99 < ${P99_LIMIT_MS} ms at the same top D = W)`,
        measured: `${rate(a).toFixed(0)}/s vs ${rate(b).toFixed(0)}/s = ${ratio(a, b)}; with p99 < 100 ms ${rate(a2).toFixed(0)} vs ${rate(b2).toFixed(0)}/s = ${ratio(a2, b2)}; ` +
          `most relayed at any latency ${rate(ma).toFixed(0)} vs ${rate(mb).toFixed(0)}/s = ${ratio(ma, mb)}`,
        met: !!a && !!b && rate(a) >= 5 * rate(b),
      })
      // The same offered load on both: compare server CPU per position.
      const keptUp = (x: Stage) => x.delivered >= 0.95 * x.offered * x.seconds
      const common = uws.stages.filter((s) => keptUp(s) && sio.stages.some((t) => t.level === s.level && t.rateHz === s.rateHz && keptUp(t)))
      const last = common.at(-1)
      if (last) {
        const t = sio.stages.find((x) => x.level === last.level && x.rateHz === last.rateHz)!
        const us = (x: Stage) => (x.serverCpuSec ?? NaN) / x.delivered * 1e6
        notes.push(`at the busiest load both kept up with (D=W=${last.level}, ${last.rateHz} Hz) server CPU per position: uws+actors ${us(last).toFixed(2)} µs, Socket.IO ${us(t).toFixed(2)} µs (${(us(t) / us(last)).toFixed(2)}x)`)
      }
    }
    if (uws) targets.push({ target: '<= 3 KB server memory per idle tracking socket', measured: `${(uws.idle.bytesPerSocket / 1024).toFixed(2)} KB${sio ? ` (Socket.IO ${(sio.idle.bytesPerSocket / 1024).toFixed(2)} KB)` : ''}`, met: uws.idle.bytesPerSocket <= 3 * 1024 })
    return {
      name: 'tracking', rows, notes, targets,
      labels: { throughput: 'relayed/s', non2xx: 'undelivered', perReq: 'srv µs/update' },
      loadGenerator: `bench/tracking-client.ts in ${envInt('TRACKING_WORKERS', 2)} child processes (raw RFC 6455 over net), on the same machine (shares the CPU cores with the server)`,
    }
  },
}

export default scenario
