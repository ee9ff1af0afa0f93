/** The real server as a child process (`node --import tsx src/main.ts`), for crash and quick-start tests. */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { findFreePort } from './server.ts'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/**
 * The operator's CLI (`bin/dispatch.js … --json`) in its own process, against a running test
 * server's database as an operator runs it next to the server; resolves with its JSON answer.
 */
export async function dispatchCli(s: { dbPath: string; site: string }, ...args: string[]): Promise<any> {
  const { stdout } = await promisify(execFile)(process.execPath, ['bin/dispatch.js', ...args, '--json'], {
    cwd: ROOT, env: { ...process.env, DB_PATH: s.dbPath, SITE_URL: s.site, LOG_LEVEL: 'silent' }, timeout: 60_000,
  })
  return JSON.parse(stdout)
}

export interface ServerProcess {
  proc: ChildProcess
  port: number
  site: string
  base: string
  /** Everything the process printed to stdout so far. */
  stdout(): string
  stderr(): string
  /** Resolves with the exit code (or signal name) once the process is gone. */
  exited: Promise<number | string>
  kill(signal?: NodeJS.Signals): Promise<number | string>
}

export async function spawnServer(env: Record<string, string>, readyTimeoutMs = 20_000): Promise<ServerProcess> {
  const port = await findFreePort()
  const site = `http://127.0.0.1:${port}`
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), SITE_URL: site, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  proc.stdout!.on('data', (d: Buffer) => { out += d.toString() })
  proc.stderr!.on('data', (d: Buffer) => { err += d.toString() })
  const exited = new Promise<number | string>((resolve) => proc.once('exit', (code, sig) => resolve(code ?? sig ?? -1)))
  const sp: ServerProcess = {
    proc, port, site, base: `${site}/api/v1`,
    stdout: () => out,
    stderr: () => err,
    exited,
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal)
      return exited
    },
  }
  const deadline = Date.now() + readyTimeoutMs
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited early (${proc.exitCode}): ${err}`)
    try {
      const r = await fetch(`${site}/healthz`)
      if (r.status === 200) return sp
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      await sp.kill()
      throw new Error(`server not ready within ${readyTimeoutMs} ms: ${err}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}

/**
 * Kill -9 in the middle of a stream of writes: `clients` loops each send with `send(n)` until one
 * fails (null); once `killAfter` have been answered the process is killed, so the kill lands while
 * writes are in flight however fast the server answers (a fixed-size burst may be answered whole
 * before it). Returns every answer in order of arrival (null for the ones the kill cut off).
 */
export async function streamUntilKilled(sp: ServerProcess, send: (n: number) => Promise<number | null>, killAfter: number, clients = 64): Promise<Array<number | null>> {
  let answered = 0
  let n = 0
  let killed: Promise<unknown> = Promise.resolve()
  const ids: Array<number | null> = []
  await Promise.all(Array.from({ length: clients }, async () => {
    for (;;) {
      const id = await send(n++)
      ids.push(id)
      if (id === null) return
      if (++answered === killAfter) killed = sp.kill('SIGKILL')
    }
  }))
  await killed
  return ids
}
