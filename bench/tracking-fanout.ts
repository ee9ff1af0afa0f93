/**
 * Tracking fan-out (issue 19 item 2b): each driver position goes where the product sends it — the
 * customer's tracking view (`/ws/track/{token}`), the store's dispatch feed (`/ws/dispatch/{id}`,
 * JSON) and an operations screen (the same feed as MessagePack frames, so every publish is encoded
 * in both formats) — three subscribers of different kinds per position. D drivers at 1 Hz, K drivers
 * per store (FANOUT_DRIVERS_PER_STORE, default 10), so D + D + 2·D/K sockets, up to the server's
 * file-descriptor ceiling. The same fan-out on the Socket.IO relay (bench/baseline/socketio-server.ts:
 * one emit to the order's room, one to the store's room holding both feed sockets) in the same run.
 *
 * Reported per level: frames delivered/s (all three kinds), server CPU (user + kernel) per delivered
 * frame and its user part, driver → subscriber p99 over every delivery. Clients, set-up and
 * measurement as in bench/tracking.ts (whose helpers this reuses; TRACKING_WORKERS,
 * TRACKING_SERVER_ROOT, TRACKING_NODE_ARGS apply).
 *
 * Knobs: FANOUT_LEVELS (D at 1 Hz; `max` = the fd ceiling; default 1000,2500,5000,max [250,1000]),
 * FANOUT_DRIVERS_PER_STORE (default 10), FANOUT_RATE_HZ (default 1).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import type { BenchRow, Scenario, ScenarioOptions, ScenarioResult } from './lib/scenario.ts'
import { appArgs, cpuSeconds, freePort, startServer, type Server, LOAD_TEST_LIMITS } from './lib/proc.ts'
import { quantile } from './lib/load.ts'
import type { ClientPair, Kind, ParentMsg } from './tracking-client.ts'
import {
  createPairs, envInt, envList, fdHeadroom, measuredWindow, ROOT, SERVER_ROOT, seedDemo, sleep, syntheticPairs, Workers, type Demo,
} from './tracking.ts'

const P99_LIMIT_MS = 50

interface Stack { key: string; mode: 'uws' | 'socketio'; label: string }
const STACKS: Stack[] = [
  { key: 'uws', mode: 'uws', label: 'uws+actors fan-out' },
  { key: 'socketio', mode: 'socketio', label: 'socket.io baseline fan-out' },
]

interface Stage {
  level: number; stores: number; rateHz: number; seconds: number
  sent: number; delivered: number; byKind: Record<Kind, number>
  p50: number; p99: number; max: number
  errors: number
  cpuSec: number | null; userSec: number; sysSec: number
  clientCpuSec: number; machineBusy: number
}

/**
 * The store (an index) pair i works for: blocks of perStore × workers pairs fill `workers` stores, pair
 * i in store ≡ i (mod workers), so a store's drivers share the client process of its feeds (worker =
 * index mod workers) and the first L pairs use exactly the first L / perStore stores.
 */
const storeIndex = (i: number, perStore: number, workers: number) => Math.floor(i / (perStore * workers)) * workers + (i % workers)

/**
 * Spread the drivers (all created in the demo store, where their orders are) over `stores` stores of
 * the same owner (storeIndex), each order moving with its driver. Done on the stopped server's
 * database, so every actor loads the new binding.
 */
function spreadOverStores(dbPath: string, demo: Demo, pairs: ClientPair[], stores: number, perStore: number, workers: number): number[] {
  const db = new Database(dbPath)
  try {
    const now = new Date().toISOString()
    const ids: number[] = [demo.store.id]
    const insert = db.prepare(`INSERT INTO stores (owner_id, title, slug, template, store_type, currency, city, settings, created_at)
      VALUES (?, ?, ?, 'classic', 'restaurant', 'USD', 'Benchville', '{}', ?)`)
    const bind = db.prepare('UPDATE drivers SET restaurant_id = ? WHERE id = ?')
    const move = db.prepare('UPDATE orders SET store_id = ? WHERE id = ?')
    db.transaction(() => {
      for (let s = 1; s < stores; s++) ids.push(Number(insert.run(demo.owner.id, `Fan-out ${s}`, `fanout-${s}`, now).lastInsertRowid))
      pairs.forEach((p, i) => {
        p.storeId = ids[storeIndex(i, perStore, workers)]!
        bind.run(p.storeId, p.driverId)
        move.run(p.storeId, p.orderId)
      })
    })()
    return ids
  } finally {
    db.close()
  }
}

async function runStack(stack: Stack, opts: ScenarioOptions, quick: boolean): Promise<Stage[]> {
  const log = opts.log
  const perStore = envInt('FANOUT_DRIVERS_PER_STORE', 10)
  const workersN = envInt('TRACKING_WORKERS', 2)
  const rateHz = Number(process.env.FANOUT_RATE_HZ ?? 1)
  const levelSpec = envList('FANOUT_LEVELS', quick ? '250,1000' : '1000,2500,5000,max')
  const dir = mkdtempSync(join(tmpdir(), `dispatch-bench-fanout-${stack.key}-`))
  const dbPath = join(dir, 'bench.db')
  let server: Server | null = null
  let workers: Workers | null = null
  const start = async (): Promise<Server> => {
    const port = await freePort()
    const env = { LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: String(port) }
    if (stack.mode === 'socketio') return startServer(['--import', 'tsx', 'bench/baseline/socketio-server.ts'], env, port, '/healthz', ROOT)
    const nodeArgs = (process.env.TRACKING_NODE_ARGS ?? '').split(' ').filter(Boolean)
    return startServer([...nodeArgs, ...appArgs(SERVER_ROOT)], { ...env, DB_PATH: dbPath, SITE_URL: `http://127.0.0.1:${port}`, ...LOAD_TEST_LIMITS, DEMO_SEED: '0' }, port, '/healthz', SERVER_ROOT)
  }
  try {
    server = await start()
    // Sockets per driver: its own, its watcher, and 2/K feed sockets; stores a multiple of the
    // workers so that a store's drivers and its feeds live in one client process (one clock).
    const top = Math.floor(fdHeadroom(server.proc.pid!) / (2 + 2 / perStore) / (perStore * workersN)) * perStore * workersN
    const levels = [...new Set(levelSpec.map((l) => (l === 'max' ? top : Math.min(top, Number(l)))))]
      .map((l) => Math.floor(l / (perStore * workersN)) * perStore * workersN).filter((l) => l > 0).sort((a, b) => a - b)
    const need = levels.at(-1)!
    const stores = need / perStore
    let pairs: ClientPair[]
    let ownerToken = ''
    let storeIds: number[]
    if (stack.mode === 'uws') {
      await server.stop()
      const demo = await seedDemo(dbPath)
      server = await start()
      pairs = await createPairs(server.url, dbPath, demo, need, log)
      await server.stop()
      storeIds = spreadOverStores(dbPath, demo, pairs, stores, perStore, workersN)
      ownerToken = demo.owner.token
      server = await start()
    } else {
      pairs = syntheticPairs(need)
      storeIds = Array.from({ length: stores }, (_, s) => s + 1)
      pairs.forEach((p, i) => { p.storeId = storeIds[storeIndex(i, perStore, workersN)]! })
    }
    const pid = server.proc.pid!
    workers = await Workers.start(workersN, stack.mode, false, server.port)
    const w = workers
    const stages: Stage[] = []
    let connected = 0
    for (const level of levels) {
      const add = pairs.slice(connected, level)
      const res = await w.all<'connected'>((i) => ({ cmd: 'connect', pairs: w.share(add, i), watch: true }))
      const failed = res.reduce((a, r) => a + r.failed, 0)
      // The feeds of the stores these drivers work for (store s lives in worker s mod workers).
      const newStores = storeIds.slice(connected / perStore, level / perStore)
      const fr = await w.all<'feeds'>((i) => ({ cmd: 'feeds', storeIds: newStores.filter((_, k) => (connected / perStore + k) % w.size === i), ownerToken }))
      const feedFailed = fr.reduce((a, r) => a + r.failed, 0)
      connected = level
      log(`[tracking-fanout] ${stack.label}: ${level} drivers + ${level} watchers + ${fr.reduce((a, r) => a + r.open, 0)} feed sockets (${level / perStore} stores) open`)
      if (failed + feedFailed > 0) throw new Error(`${failed + feedFailed} sockets could not open: ${res.find((r) => r.firstError)?.firstError ?? fr.find((r) => r.firstError)?.firstError}`)
      const { ran, cpuSec, userSec, sysSec, machineBusy } = await measuredWindow(w, pid, rateHz, opts)
      const lat = Float64Array.from(ran.flatMap((r) => r.latencies)).sort()
      const byKind = { track: 0, dispatch: 0, ops: 0 }
      for (const r of ran) for (const k of Object.keys(byKind) as Kind[]) byKind[k] += r.byKind[k]
      const st: Stage = {
        level, stores: level / perStore, rateHz, seconds: opts.duration,
        sent: ran.reduce((a, r) => a + r.sent, 0), delivered: ran.reduce((a, r) => a + r.delivered, 0), byKind,
        p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), max: lat.length ? lat[lat.length - 1]! : NaN,
        errors: ran.reduce((a, r) => a + r.errors + r.closed, 0),
        cpuSec, userSec, sysSec,
        clientCpuSec: ran.reduce((a, r) => a + r.cpuSec, 0), machineBusy,
      }
      const per = (x: number) => (st.delivered ? ((x / st.delivered) * 1e6).toFixed(2) : '-')
      log(`[tracking-fanout] ${stack.label}: D=${level} @${rateHz} Hz: ${(st.delivered / st.seconds).toFixed(0)} frames/s delivered of ${(3 * st.sent / st.seconds).toFixed(0)} due ` +
        `(track ${byKind.track}, dispatch ${byKind.dispatch}, ops ${byKind.ops}), p50 ${st.p50.toFixed(2)} p99 ${st.p99.toFixed(2)} ms, ` +
        `server ${per(st.cpuSec ?? NaN)} µs/frame (user ${per(st.userSec)}), machine ${(st.machineBusy * 100).toFixed(0)}% busy${st.errors ? `, ${st.errors} errors` : ''}`)
      stages.push(st)
    }
    return stages
  } catch (err) {
    if (server) log(`[tracking-fanout] ${stack.label} failed; server output:\n${server.output()}`)
    throw err
  } finally {
    await workers?.close()
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

function row(stack: Stack, s: Stage): BenchRow {
  return {
    scenario: `${stack.label} @${s.rateHz} Hz`,
    series: stack.label,
    role: stack.mode === 'uws' ? 'ours' : 'baseline',
    load: `D=W=${s.level}, ${s.stores} stores × 2 feeds`,
    durationSec: s.seconds,
    requests: s.sent,
    throughput: s.delivered / s.seconds,
    p50Ms: s.p50, p90Ms: NaN, p99Ms: s.p99, maxMs: s.max,
    non2xx: Math.max(0, 3 * s.sent - s.delivered),
    errors: s.errors,
    ratio: null,
    serverCpuPct: s.cpuSec === null ? null : (s.cpuSec / s.seconds) * 100,
    serverCpuUsPerReq: s.cpuSec === null || s.delivered === 0 ? null : (s.cpuSec / s.delivered) * 1e6,
    extra: {
      positionsPerSec: s.sent / s.seconds, byKind: s.byKind, serverUserUsPerFrame: s.delivered ? (s.userSec / s.delivered) * 1e6 : null,
      serverKernelShare: s.userSec + s.sysSec > 0 ? s.sysSec / (s.userSec + s.sysSec) : null,
      clientCpuPct: (s.clientCpuSec / s.seconds) * 100, machineBusyPct: s.machineBusy * 100,
    },
  }
}

export const scenario: Scenario = {
  name: 'tracking-fanout',
  description: 'each driver position → tracking view + store dispatch feed + operations screen (3 kinds of subscriber): server CPU per delivered frame and p99 vs Socket.IO, up to the fd ceiling',
  async run(opts: ScenarioOptions): Promise<ScenarioResult> {
    const quick = opts.duration <= 3
    const results: Array<{ stack: Stack; stages: Stage[] }> = []
    for (const s of STACKS.filter((x) => opts.only.length === 0 || opts.only.includes(x.key))) results.push({ stack: s, stages: await runStack(s, opts, quick) })
    const rows = results.flatMap((r) => r.stages.map((s) => row(r.stack, s)))
    for (const x of rows.filter((r) => r.role === 'ours')) {
      const twin = rows.find((b) => b.role === 'baseline' && b.load === x.load)
      // Same offered load on both: the Socket.IO server's CPU per delivered frame ÷ ours (higher = ours cheaper).
      x.ratio = twin?.serverCpuUsPerReq && x.serverCpuUsPerReq ? twin.serverCpuUsPerReq / x.serverCpuUsPerReq : null
    }
    const targets: NonNullable<ScenarioResult['targets']> = []
    const ours = results.find((r) => r.stack.mode === 'uws')
    const sio = results.find((r) => r.stack.mode === 'socketio')
    if (ours && sio) {
      const topOurs = ours.stages.at(-1)
      const topRow = rows.find((r) => r.role === 'ours' && topOurs && r.load.startsWith(`D=W=${topOurs.level},`))
      targets.push({
        target: '>= 3x Socket.IO per delivered frame (server CPU, same fan-out and load)',
        measured: rows.filter((r) => r.role === 'ours').map((r) => `${r.load}: ${r.ratio?.toFixed(2) ?? '-'}x (${r.serverCpuUsPerReq?.toFixed(2)} µs/frame)`).join('; '),
        met: !!topRow?.ratio && topRow.ratio >= 3,
      })
    }
    if (ours) {
      const top = ours.stages.at(-1)
      targets.push({ target: `p99 < ${P99_LIMIT_MS} ms at the top level (the fd ceiling in a full run)`, measured: top ? `p99 ${top.p99.toFixed(2)} ms at D=${top.level}` : '-', met: !!top && top.p99 < P99_LIMIT_MS })
    }
    const notes = [
      'three subscribers per position: the order\'s tracking socket, the store\'s dispatch feed (JSON) and an operations screen (this server: the same feed in MessagePack; Socket.IO: a second socket in the store\'s room); ' +
        'frames/s = deliveries of all three kinds in the measured window; srv µs/frame = server CPU (user + kernel, /proc) per delivered frame; vs baseline = Socket.IO\'s µs/frame ÷ ours at the same load',
      'this server also validates each position, passes it through the driver actor and stores it (batched commits); the Socket.IO relay stores and authenticates nothing',
      'clients: bench/tracking-client.ts in child processes on the same machine, sharing its cores with the server',
      ...results.flatMap((r) => r.stages.map((s) => `${r.stack.label} D=${s.level}: user ${s.delivered ? ((s.userSec / s.delivered) * 1e6).toFixed(2) : '-'} µs/frame, kernel share ${((s.sysSec / Math.max(1e-9, s.userSec + s.sysSec)) * 100).toFixed(0)}%`)),
    ]
    return {
      name: 'tracking-fanout', rows, notes, targets,
      labels: { throughput: 'frames/s', non2xx: 'undelivered', perReq: 'srv µs/frame' },
      loadGenerator: `bench/tracking-client.ts in ${envInt('TRACKING_WORKERS', 2)} child processes (raw RFC 6455 over net), on the same machine (shares the CPU cores with the server)`,
    }
  },
}

export default scenario
