/**
 * Same-run A/B of the order path: `node --import tsx bench/orders-ab.ts <treeA> <treeB> [rounds] [seconds]`.
 * Starts the group-commit server of each tree (as npm start does, each seeded by its own CLI on a
 * fresh database), warms both, then alternates closed-loop rounds (64 connections) A, B, A, B, …
 * and prints per round the orders/s and the server's user and system CPU per order (from
 * /proc/<pid>/stat), then the medians. On a shared machine the alternation spreads other load over
 * both trees. Run it under the bench lock: `flock /tmp/bench.lock node --import tsx bench/orders-ab.ts …`.
 * The load is the orders bench's generator (bench/lib/raw-load.ts; BENCH_LOADGEN=autocannon for the
 * other); ORDERS_AB_NODE_ARGS_B adds node flags to B's server, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { startApp, seedDemo, type Server } from './lib/proc.ts'
import { alternate } from './lib/ab.ts'
import { runBenchLoad } from './lib/raw-load.ts'
import { orderBodies, readMenu } from './orders.ts'

interface Demo { owner: { token: string }; store: { id: number } }

const [a, b] = [process.argv[2], process.argv[3]].map((p) => resolve(p ?? '.'))
const rounds = Number(process.argv[4] ?? 4)
const seconds = Number(process.argv[5] ?? 4)
const dir = mkdtempSync(join(process.env.BENCH_DB_DIR ?? tmpdir(), 'orders-ab-'))
const servers: Server[] = []
try {
  const targets = []
  for (const [name, tree] of [['A', a!], ['B', b!]] as const) {
    const dbPath = join(dir, `${name}.db`)
    const demo = await seedDemo<Demo>(dbPath, tree)
    const nodeArgs = name === 'B' ? (process.env.ORDERS_AB_NODE_ARGS_B ?? '').split(' ').filter(Boolean) : []
    const server = await startApp(dbPath, tree, { GROUP_COMMIT: '1' }, nodeArgs)
    servers.push(server)
    const bodies = orderBodies(readMenu(dbPath, demo.store.id))
    const requests = bodies.map((body) => ({
      method: 'POST' as const, path: `/api/v1/restaurants/${demo.store.id}/orders`, body,
      headers: { authorization: `Bearer ${demo.owner.token}`, 'content-type': 'application/json' },
    }))
    targets.push({ name, tree, server, requests, rows: [] as Array<{ rate: number; user: number; sys: number }> })
  }
  for (const t of targets) await runBenchLoad({ url: t.server.url, requests: t.requests, connections: 64, durationSec: 2 })
  await alternate(targets, rounds, 'order', async (t) => {
    const l = await runBenchLoad({ url: t.server.url, requests: t.requests, connections: 64, durationSec: seconds })
    if (l.non2xx > 0 || l.errors > 0) throw new Error(`${t.name}: ${l.non2xx} non-2xx, ${l.errors} errors`)
    return { ok: l.ok2xx, load: l }
  })
} finally {
  for (const s of servers) await s.stop()
  rmSync(dir, { recursive: true, force: true })
}
