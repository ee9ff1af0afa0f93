/** Child processes for benches: a free port, start a server, wait until it answers, CPU time, stop. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { createServer } from 'node:net'

/** A TCP port that was free a moment ago (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      const port = typeof addr === 'object' && addr ? addr.port : 0
      srv.close(() => resolve(port))
    })
  })
}

export interface Server {
  proc: ChildProcess
  port: number
  url: string
  /** Recent stderr/stdout lines, for error messages. */
  output(): string
  stop(): Promise<void>
}

/**
 * Spawn `node <args>` with `env` added, then poll `GET <healthPath>` until it answers 200.
 * The child's output is kept (last lines) and shown if it dies or never becomes ready.
 */
export async function startServer(args: string[], env: Record<string, string>, port: number, healthPath = '/healthz', cwd = process.cwd()): Promise<Server> {
  // BENCH_CPU_PROF=<dir>: the server writes a V8 CPU profile there when it stops (node --cpu-prof;
  // NODE_OPTIONS may not carry it), to see where a scenario's server time goes.
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []
  const proc = spawn(process.execPath, [...prof, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const tail: string[] = []
  const keep = (chunk: Buffer) => {
    tail.push(chunk.toString())
    if (tail.length > 40) tail.shift()
  }
  proc.stdout!.on('data', keep)
  proc.stderr!.on('data', keep)
  let exited: number | null = null
  const exit = new Promise<void>((resolve) => proc.once('exit', (code) => { exited = code ?? -1; resolve() }))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  for (;;) {
    if (exited !== null) throw new Error(`server exited with ${exited} before it was ready:\n${tail.join('')}`)
    try {
      const r = await fetch(url + healthPath)
      if (r.ok) break
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      proc.kill('SIGKILL')
      throw new Error(`server not ready after 30 s:\n${tail.join('')}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    proc,
    port,
    url,
    output: () => tail.join(''),
    async stop() {
      if (exited !== null) return
      proc.kill('SIGTERM')
      const t = setTimeout(() => proc.kill('SIGKILL'), 10_000)
      await exit
      clearTimeout(t)
    },
  }
}

const CLK_TCK = 100 // USER_HZ on Linux; /proc reports clock ticks of 10 ms

/** User + system CPU seconds a process has used so far (Linux /proc), or null elsewhere. */
export function cpuSeconds(pid: number | undefined): number | null {
  if (!pid) return null
  try {
    const { user, sys } = cpuSplit(pid)
    return user + sys
  } catch {
    return null
  }
}

/** User and system CPU seconds of a process so far (/proc/<pid>/stat: utime and stime, fields 14 and 15). */
export function cpuSplit(pid: number): { user: number; sys: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // Fields after the parenthesised command name.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { user: Number(fields[11]) / CLK_TCK, sys: Number(fields[12]) / CLK_TCK }
}

/** Run a node script to completion and return its stdout (throws with stderr on failure). */
export function runNode(args: string[], env: Record<string, string>, cwd = process.cwd()): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    proc.stdout.on('data', (c: Buffer) => { out += c.toString() })
    proc.stderr.on('data', (c: Buffer) => { err += c.toString() })
    proc.once('error', reject)
    proc.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`node ${args.join(' ')} exited ${code}:\n${err}`))))
  })
}

/** `dispatch seed --demo --json` on `dbPath`: the demo owner, store and tokens it printed. */
export async function seedDemo<T>(dbPath: string, cwd = process.cwd()): Promise<T> {
  const out = await runNode(['bin/dispatch.js', 'seed', '--demo', '--json'], { DB_PATH: dbPath, LOG_LEVEL: 'warn' }, cwd)
  return JSON.parse(out.trim().split('\n').pop()!) as T
}

/**
 * Per-client limits a load generator would trip by design (it is one address with many sockets and
 * requests; docs/limits.md): off in every bench, which measures capacity, not the abuse guards.
 */
export const LOAD_TEST_LIMITS = { RATE_LIMIT_PER_MINUTE: '100000000', WS_MAX_PER_TOKEN: '0', WS_MAX_PER_ADDRESS: '0', WS_MESSAGE_RATE: '0' } as const

/**
 * How a bench starts the app in `cwd`: as production does (`npm start`: the build in dist/, rebuilt
 * first when the sources changed), or through tsx for a checkout that has no build step (an older
 * commit compared side by side).
 */
export function appArgs(cwd: string): string[] {
  if (!existsSync(join(cwd, 'tools', 'build.mjs'))) return ['--import', 'tsx', 'src/main.ts']
  execFileSync(process.execPath, ['tools/build.mjs', '--if-stale'], { cwd, stdio: ['ignore', 'ignore', 'inherit'] })
  return ['dist/src/main.js']
}

/**
 * The app (`npm start`'s dist/src/main.js, see appArgs) on `dbPath` as every bench runs it: a free port, warn-level logs, rate
 * limits out of the way, no demo seed. `nodeArgs` go before the entry point, `env` overrides.
 */
export async function startApp(dbPath: string, cwd: string, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<Server> {
  const port = await freePort()
  return startServer([...nodeArgs, ...appArgs(cwd)], {
    DB_PATH: dbPath, PORT: String(port), HOST: '127.0.0.1', SITE_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: 'warn',
    ...LOAD_TEST_LIMITS, DEMO_SEED: '0', ...env,
  }, port, '/healthz', cwd)
}

/**
 * Run `body` in a fresh directory under `parent` (removed afterwards). Servers it starts through
 * `track` are stopped at the end, and a failure carries their recent output.
 */
export async function withBenchDir<T>(parent: string, prefix: string, body: (dir: string, track: (s: Server) => Server) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(parent, prefix))
  const servers: Server[] = []
  try {
    return await body(dir, (s) => { servers.push(s); return s })
  } catch (err) {
    for (const s of servers) (err as Error).message += `\n--- server output ---\n${s.output()}`
    throw err
  } finally {
    for (const s of servers) await s.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
