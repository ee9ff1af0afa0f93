/**
 * A cluster on loopback for tests (docs/cluster.md): Debian's nats-server with JetStream, one or
 * three of them routed into a cluster, and server nodes as child processes (`src/main.ts` with
 * NATS_URL, NODE_ID and a database file each). `.ci/run` installs nats-server as it installs chromium.
 */
import type { Test } from 'tap'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { findFreePort, request } from './server.ts'
import { spawnServer, type ServerProcess } from './process.ts'
import { capturedTables } from '../../src/storage/changes.ts'
import { parseMetrics } from './prometheus.ts'

export const NATS_SERVER = '/usr/sbin/nats-server'

/** Every process these helpers started: killed when the test process ends, however it ends short of SIGKILL. */
const children = new Set<ChildProcess>()
process.once('exit', () => { for (const c of children) { try { c.kill('SIGKILL') } catch { /* gone */ } } })
const own = (c: ChildProcess): ChildProcess => { children.add(c); c.once('exit', () => children.delete(c)); return c }
export const hasNats = (): boolean => spawnSync(NATS_SERVER, ['--version']).status === 0

export interface NatsCluster {
  urls: string[]
  /** SIGKILL one server (0-based). */
  kill(i: number): Promise<void>
  /** Start a killed server again, with its JetStream data. */
  restart(i: number): Promise<void>
  stop(): Promise<void>
}

const waitFor = async (ok: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** `n` nats-servers with JetStream, routed into one cluster when n > 1. */
export async function startNats(n: number): Promise<NatsCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-nats-'))
  const ports = await Promise.all(Array.from({ length: n }, () => findFreePort()))
  const routes = await Promise.all(Array.from({ length: n }, () => findFreePort()))
  const procs: Array<ChildProcess | null> = []
  const start = async (i: number) => {
    mkdirSync(join(dir, `s${i}`), { recursive: true })
    const args = ['-js', '-a', '127.0.0.1', '-p', String(ports[i]), '-n', `s${i}`, '-sd', join(dir, `s${i}`)]
    if (n > 1) args.push('--cluster_name', 'test', '--cluster', `nats://127.0.0.1:${routes[i]}`, '--routes', routes.map((p) => `nats://127.0.0.1:${p}`).join(','))
    const p = own(spawn(NATS_SERVER, args, { stdio: 'ignore' }))
    procs[i] = p
    await waitFor(() => portOpen(ports[i]!), 10_000, `nats-server ${i}`)
  }
  for (let i = 0; i < n; i++) await start(i)
  const kill = async (i: number) => {
    const p = procs[i]
    if (!p || p.exitCode !== null) return
    const gone = new Promise((r) => p.once('exit', r))
    p.kill('SIGKILL')
    await gone
    procs[i] = null
  }
  return {
    urls: ports.map((p) => `nats://127.0.0.1:${p}`),
    kill,
    restart: start,
    async stop() {
      for (let i = 0; i < n; i++) await kill(i)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

async function portOpen(port: number): Promise<boolean> {
  const { connect } = await import('node:net')
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1')
    s.once('connect', () => { s.destroy(); resolve(true) })
    s.once('error', () => resolve(false))
  })
}

export interface ClusterNodeProcess {
  id: string
  dbPath: string
  /** The process now (a supervised node gets a new one each time it is started again). */
  readonly sp: ServerProcess
  /** Exit codes of the processes that ended, in order. */
  readonly exits: Array<number | string>
  /** What every process of this node printed (stdout and stderr), in order: for failure messages. */
  output(): string
  readyz(): Promise<{ status: number; body: any }>
  /** SIGKILL the current process; a supervised node is started again (as after a crash). */
  kill(): Promise<void>
  /** Stop supervising and kill. */
  stop(): Promise<void>
}

/**
 * A node of cluster `name` as a child process, started again whenever its process ends, as systemd's
 * Restart=always or compose's `restart: unless-stopped` would (docs/cluster.md: a fenced primary
 * ends itself and rejoins as a replica). Resolves once the first process answers /healthz.
 */
export async function startNode(nats: NatsCluster, name: string, id: string, dir: string, env: Record<string, string> = {}): Promise<ClusterNodeProcess> {
  const dbPath = join(dir, `${id}.db`)
  const spawnOne = () => spawnServer({
    NATS_URL: nats.urls.join(','), NODE_ID: id, CLUSTER_NAME: name, DB_PATH: dbPath,
    // A lease longer than the default: a loaded test machine can hold an event loop for seconds.
    CLUSTER_LEASE_MS: '4000', RATE_LIMIT_PER_MINUTE: '1000000', LOG_LEVEL: process.env.CLUSTER_TEST_LOG ?? 'warn', ...env,
  }, 60_000)
  let sp = await spawnOne()
  let supervising = true
  /** A restart under way (its process may not answer yet): stop() waits for it and ends what it started. */
  let restarting: Promise<void> | null = null
  const exits: Array<number | string> = []
  let earlier = ''
  const watch = (p: ServerProcess) => {
    own(p.proc)
    void p.exited.then((code) => {
      exits.push(code)
      earlier += `${p.stdout()}${p.stderr()}\n[exit ${code}]\n`
      // Started again until it answers (a node that cannot reach NATS yet ends and is started again).
      restarting = (async () => {
        while (supervising) {
          try {
            const next = await spawnOne()
            // Stopped while this one was starting: it must not outlive the test (its pipes would hold
            // the test process open until tap's timeout).
            if (!supervising) { await next.kill('SIGKILL'); return }
            sp = next
            watch(sp)
            return
          } catch { await new Promise((r) => setTimeout(r, 500)) }
        }
      })()
    })
  }
  watch(sp)
  return {
    id, dbPath, exits,
    get sp() { return sp },
    output: () => `${earlier}${sp.stdout()}${sp.stderr()}`,
    readyz: async () => { const r = await request(`${sp.site}/readyz`, 'GET'); return { status: r.status, body: r.body } },
    kill: async () => { await sp.kill('SIGKILL') },
    stop: async () => {
      supervising = false
      sp.proc.kill('SIGCONT')
      await sp.kill('SIGKILL')
      await restarting
    },
  }
}

/** Wait until one of `nodes` says it is the ready primary; returns it. */
export async function primaryOf(nodes: ClusterNodeProcess[], timeoutMs = 60_000): Promise<ClusterNodeProcess> {
  let found: ClusterNodeProcess | undefined
  await waitFor(async () => {
    for (const n of nodes) {
      const r = await n.readyz().catch(() => null)
      if (r?.status === 200 && r.body.role === 'primary') { found = n; return true }
    }
    return false
  }, timeoutMs, 'a primary').catch((err: Error) => {
    // What each node said, for the failure message.
    throw new Error(`${err.message}\n${nodes.map((n) => `--- ${n.id}:\n${quiet(n.output()).slice(-3000)}`).join('\n')}`)
  })
  return found!
}

/** Wait until `node` has applied `seq` (its /readyz applied_seq). */
export async function appliedUpTo(node: ClusterNodeProcess, seq: number, timeoutMs = 60_000): Promise<void> {
  await waitFor(async () => ((await node.readyz().catch(() => null))?.body.applied_seq ?? -1) >= seq, timeoutMs, `${node.id} to apply ${seq}`)
    .catch(async (err: Error) => {
      throw new Error(`${err.message}; its /readyz: ${JSON.stringify((await node.readyz().catch(() => null))?.body)}\n${node.output().slice(-2000)}`)
    })
}

/**
 * Every replicated table of a database file, row by row in rowid order (the convergence check):
 * two nodes hold the same data exactly when these are equal.
 */
export function tableDump(dbPath: string): Record<string, unknown[]> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true })
  try {
    const out: Record<string, unknown[]> = {}
    for (const t of capturedTables(db)) {
      out[t.name] = db.prepare(`SELECT ${t.key ? '' : 'rowid AS _rowid, '}* FROM "${t.name}" ORDER BY ${t.key ? t.key.map((k) => `"${k}"`).join(', ') : 'rowid'}`).raw(true).all()
    }
    return out
  } finally {
    db.close()
  }
}

/** A node's output without the per-request access log lines. */
const quiet = (out: string) => out.split('\n').filter((l) => !l.includes('"msg":"request"')).join('\n')

export { waitFor }

/** What the first primary printed of the demo account it created (once, with its credentials). */
export interface DemoAccount { owner: { token: string; email: string; password: string }; store: { id: number }; driver: { id: number; token: string } }

/** Wait until `node` printed the demo account; returns it. */
export async function demoAccountOf(node: ClusterNodeProcess): Promise<DemoAccount> {
  await waitFor(() => node.output().includes('Demo account created'), 60_000, 'the demo account')
    .catch((err: Error) => { throw new Error(`${err.message}; ${node.id} said: ${node.output().slice(-3000)}`) })
  return JSON.parse(/Demo account created \(shown once, keep it\):\n(\{[\s\S]*?\n\})\n/.exec(node.output())![1]!) as DemoAccount
}

/**
 * An API request to a node (`path` under /api/v1). A connection kept alive to the listener a node
 * just replaced (a replica's, closed when it became primary) may be reset under the first request:
 * that request is sent once more, on a new connection, as any client would.
 */
export function nodeApi(node: ClusterNodeProcess, method: string, path: string, opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  return request(`${node.sp.base}${path}`, method, opts).catch((err: { cause?: { code?: string } }) => {
    if (err.cause?.code !== 'ECONNRESET' && err.cause?.code !== 'UND_ERR_SOCKET') throw err
    return request(`${node.sp.base}${path}`, method, { ...opts, headers: { ...opts.headers, connection: 'close' } })
  })
}

/** Three nats-servers, a folder for the nodes' files and the nodes started in it, all gone when `t` ends. */
export interface TestCluster {
  nats: NatsCluster
  nodes: ClusterNodeProcess[]
  /** Start node `id` of this cluster (supervised, as startNode). */
  start(id: string, env?: Record<string, string>): Promise<ClusterNodeProcess>
}

/** A TestCluster named `prefix` + this process id (`servers` nats-servers); null, after a failing assertion, without nats-server. */
export async function testCluster(t: Test, prefix: string, servers = 3): Promise<TestCluster | null> {
  if (!hasNats()) {
    t.fail(`${NATS_SERVER} is missing: apt-get install -y nats-server (.ci/run does this)`)
    return null
  }
  const dir = mkdtempSync(join(tmpdir(), `dispatch-${prefix}-`))
  const nats = await startNats(servers)
  const nodes: ClusterNodeProcess[] = []
  t.teardown(async () => {
    for (const n of nodes) await n.stop()
    await nats.stop()
    rmSync(dir, { recursive: true, force: true })
  })
  const name = `${prefix}${process.pid}`
  return {
    nats, nodes,
    async start(id, env = {}) {
      const n = await startNode(nats, name, id, dir, env)
      nodes.push(n)
      return n
    },
  }
}

/**
 * The live-frames setup (test/cluster-frames.test.ts, test/cluster-feeds.test.ts): one nats-server
 * (live frames are core NATS), a primary that created the demo account, then a replica; the
 * primary's socket counts from its /metrics, the owner API on either node, and "the replica has
 * applied what the primary wrote and is ready". `env` goes to every node. Null without nats-server.
 */
export async function liveFramesCluster(t: Test, name: string, env: Record<string, string> = {}) {
  const tc = await testCluster(t, name, 1)
  if (!tc) return null
  const METRICS_TOKEN = `${name}-test-metrics-token-0123456789`
  const n1 = await tc.start('n1', { METRICS_TOKEN, ...env })
  const c = { nodes: tc.nodes, primary: await primaryOf([n1]), demo: await demoAccountOf(n1), replica: await tc.start('n2', { METRICS_TOKEN, ...env }) }
  return Object.assign(c, {
    /** The owner API (the demo owner's token unless `as`); anything but 2xx throws. */
    api: async (node: ClusterNodeProcess, method: string, path: string, body?: unknown, as = c.demo.owner.token) => {
      const r = await nodeApi(node, method, path, { token: as, body })
      if (r.status < 200 || r.status > 299) throw new Error(`${method} ${path} on ${node.id}: ${r.status} ${r.text.slice(0, 300)}`)
      return r.body
    },
    ws: (node: ClusterNodeProcess) => node.sp.base.replace(/^http/, 'ws'),
    /** The primary's open sockets of a kind, from its /metrics. */
    primarySockets: async (kind: string) => {
      const r = await fetch(`${c.primary.sp.site}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
      return parseMetrics(await r.text()).find((s) => s.name === 'dispatch_ws_open_sockets' && s.labels.kind === kind)?.value ?? -1
    },
    /** The replica has applied everything the primary has written so far, and is ready. */
    caughtUp: async () => {
      await appliedUpTo(c.replica, (await c.primary.readyz()).body.applied_seq as number)
      await waitFor(async () => (await c.replica.readyz()).status === 200, 60_000, 'the replica ready')
    },
  })
}
