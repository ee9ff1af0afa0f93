/** The real server in its own process, set up for kill -9 tests (no demo seed, no rate limit). */
import type { ChildProcess } from 'node:child_process'
import { spawnServer } from './process.ts'

export interface ChildServer {
  proc: ChildProcess
  site: string
  base: string
  ws: string
  /** SIGKILL: no shutdown hook, no flush; resolves once the process is gone. */
  kill9(): Promise<void>
}

export async function startChildServer(env: Record<string, string>, readyMs = 20_000): Promise<ChildServer> {
  const sp = await spawnServer({ LOG_LEVEL: 'warn', DEMO_SEED: '0', RATE_LIMIT_PER_MINUTE: '1000000', ...env }, readyMs)
  return {
    proc: sp.proc, site: sp.site, base: sp.base, ws: `ws://127.0.0.1:${sp.port}/api/v1`,
    kill9: async () => { await sp.kill('SIGKILL') },
  }
}
