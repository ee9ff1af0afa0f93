/** The real server in its own process (`node --import tsx src/main.ts`), for kill -9 tests. */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { findFreePort } from './server.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface ChildServer {
  proc: ChildProcess
  site: string
  base: string
  ws: string
  /** SIGKILL: no shutdown hook, no flush; resolves once the process is gone. */
  kill9(): Promise<void>
}

export async function startChildServer(env: Record<string, string>, readyMs = 20_000): Promise<ChildServer> {
  const port = await findFreePort()
  const site = `http://127.0.0.1:${port}`
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), SITE_URL: site, LOG_LEVEL: 'warn', DEMO_SEED: '0', RATE_LIMIT_PER_MINUTE: '1000000', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let err = ''
  proc.stderr!.on('data', (d: Buffer) => { err += d.toString() })
  const gone = new Promise<void>((r) => proc.once('exit', () => r()))
  const child: ChildServer = {
    proc, site, base: `${site}/api/v1`, ws: `ws://127.0.0.1:${port}/api/v1`,
    kill9: () => { if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL'); return gone },
  }
  const deadline = Date.now() + readyMs
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited early: ${err}`)
    try { if ((await fetch(`${site}/healthz`)).status === 200) return child } catch { /* not up yet */ }
    if (Date.now() > deadline) { await child.kill9(); throw new Error(`server not ready: ${err}`) }
    await new Promise((r) => setTimeout(r, 50))
  }
}
