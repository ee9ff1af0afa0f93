/** NATS with JetStream for the cluster benches (bench/cluster.ts, the chaos run with --cluster): Debian's nats-server. */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './proc.ts'

const NATS_SERVER = process.env.NATS_SERVER ?? '/usr/sbin/nats-server'

const listening = (port: number): Promise<boolean> => new Promise((resolve) => {
  const s = connect(port, '127.0.0.1')
  s.once('connect', () => { s.destroy(); resolve(true) })
  s.once('error', () => resolve(false))
})

/** `n` nats-servers with JetStream on loopback (routed into one cluster when n > 1). */
export async function natsServers(n: number): Promise<{ urls: string[]; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-nats-'))
  const ports = await Promise.all(Array.from({ length: n }, () => freePort()))
  const routes = await Promise.all(Array.from({ length: n }, () => freePort()))
  const procs: ChildProcess[] = ports.map((port, i) => spawn(NATS_SERVER, [
    '-js', '-a', '127.0.0.1', '-p', String(port), '-n', `b${i}`, '-sd', join(dir, `s${i}`),
    ...(n > 1 ? ['--cluster_name', 'bench', '--cluster', `nats://127.0.0.1:${routes[i]}`, '--routes', routes.map((r) => `nats://127.0.0.1:${r}`).join(',')] : []),
  ], { stdio: 'ignore', env: { ...process.env, ...(process.env.BENCH_NATS_GOMAXPROCS ? { GOMAXPROCS: process.env.BENCH_NATS_GOMAXPROCS } : {}) } }))
  for (const port of ports) while (!(await listening(port))) await new Promise((r) => setTimeout(r, 100))
  return {
    urls: ports.map((p) => `nats://127.0.0.1:${p}`),
    async stop() {
      await Promise.all(procs.map((p) => new Promise((r) => { p.once('exit', r); p.kill('SIGKILL') })))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

