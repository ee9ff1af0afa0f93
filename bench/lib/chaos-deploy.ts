/**
 * What the chaos run kills and brings back (bench/lib/chaos-run.ts): the single process on its file
 * (killed, its file checked while nothing runs, started again on it), or a cluster (`--cluster`):
 * three nats-servers with JetStream and two nodes; the primary is killed, the other node takes over,
 * and its file — which must then hold every acknowledged write — is checked while it serves; the
 * killed node starts again as a replica and catches up (docs/cluster.md).
 */
import { join } from 'node:path'
import { appArgs, freePort, LOAD_TEST_LIMITS, seedDemo, startApp, startServer, type Server } from './proc.ts'
import { natsServers } from './nats.ts'
import { demoPrintedBy } from '../orders.ts'

export interface Deployment<Demo> {
  /** Start it; the demo account it serves. */
  start(): Promise<Demo>
  /** Where clients go now. */
  readonly url: string
  /** The database file of the node that serves now (setup reads the menu from it). */
  readonly dbPath: string
  /** SIGKILL whatever serves now. */
  kill(): Promise<void>
  /**
   * After a kill: the file that must hold every acknowledged write, ready to be read. Single: the
   * killed server's own (nothing runs); cluster: the new primary's, once it serves.
   */
  fileToCheck(): Promise<string>
  /** Serve again (single: restart on the file; cluster: the killed node rejoins as a replica); ms until clients are served again. */
  recover(): Promise<number>
  stop(): Promise<void>
}

function killNow(server: Server): Promise<void> {
  const p = server.proc
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve()
  const gone = new Promise<void>((r) => p.once('exit', () => r()))
  p.kill('SIGKILL')
  return gone
}

export function singleDeployment<Demo>(dbPath: string, cwd: string, env: Record<string, string>): Deployment<Demo> {
  let server: Server | null = null
  return {
    async start() {
      const demo = await seedDemo<Demo>(dbPath, cwd)
      server = await startApp(dbPath, cwd, env)
      return demo
    },
    get url() { return server!.url },
    dbPath,
    async kill() { if (server) await killNow(server); server = null },
    fileToCheck: () => Promise.resolve(dbPath),
    async recover() {
      const t0 = performance.now()
      server = await startApp(dbPath, cwd, env)
      return Math.round(performance.now() - t0)
    },
    async stop() { if (server) await server.stop() },
  }
}

interface Node { id: string; port: number; dbPath: string; server: Server | null }

export function clusterDeployment<Demo>(dir: string, cwd: string, env: Record<string, string>): Deployment<Demo> {
  let nats: Awaited<ReturnType<typeof natsServers>> | null = null
  const cluster = `chaos${process.pid}`
  const nodes: Node[] = []
  let serving = 0
  let killedAt = 0
  let servedAt = 0
  let killed: Node | null = null
  const url = (n: Node) => `http://127.0.0.1:${n.port}`
  const launch = async (n: Node, ready: string) => {
    n.server = await startServer(appArgs(cwd), {
      DB_PATH: n.dbPath, PORT: String(n.port), HOST: '127.0.0.1', SITE_URL: url(n), LOG_LEVEL: 'warn',
      ...LOAD_TEST_LIMITS, DEMO_SEED: '1', GROUP_COMMIT: '1', ...env,
      NATS_URL: nats!.urls.join(','), NODE_ID: n.id, CLUSTER_NAME: cluster,
    }, n.port, ready, cwd)
  }
  const isPrimary = async (n: Node) => (await fetch(`${url(n)}/readyz?role=primary`, { signal: AbortSignal.timeout(2000) }).then((r) => r.status, () => 0)) === 200
  return {
    async start() {
      nats = await natsServers(3)
      for (const id of ['a', 'b']) nodes.push({ id, port: await freePort(), dbPath: join(dir, `${id}.db`), server: null })
      await launch(nodes[0]!, '/readyz?role=primary')
      const demo = await demoPrintedBy(nodes[0]!.server!) as unknown as Demo
      await launch(nodes[1]!, '/readyz')
      return demo
    },
    get url() { return url(nodes[serving]!) },
    get dbPath() { return nodes[serving]!.dbPath },
    async kill() {
      killed = nodes[serving]!
      killedAt = performance.now()
      if (killed.server) await killNow(killed.server)
      killed.server = null
    },
    async fileToCheck() {
      const other = nodes.find((n) => n !== killed)!
      const deadline = Date.now() + 60_000
      while (!(await isPrimary(other))) {
        if (Date.now() > deadline) throw new Error(`${other.id} did not become primary within 60 s of ${killed?.id}'s kill:\n${other.server?.output() ?? ''}`)
        await new Promise((r) => setTimeout(r, 25))
      }
      servedAt = performance.now()
      serving = nodes.indexOf(other)
      return other.dbPath
    },
    async recover() {
      const failover = Math.round(servedAt - killedAt)
      if (killed) await launch(killed, '/readyz')
      killed = null
      return failover
    },
    async stop() {
      for (const n of nodes) if (n.server) await n.server.stop()
      await nats?.stop()
    },
  }
}
