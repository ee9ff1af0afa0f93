/**
 * Crash cycles (issue 21 item 3): `npm run chaos -- --cycles N --seed S`.
 *
 * The real server runs in its own process on one SQLite file under mixed load — owner orders with
 * and without Idempotency-Key, status changes, KDS bumps, driver positions over /ws/driver, webhook
 * deliveries to a receiver in this process — and is killed with SIGKILL at a seeded random moment,
 * then restarted on the same file, N times. After each kill the file is opened read-only
 * (`PRAGMA integrity_check`, every acknowledged write there exactly once, no order twice); after
 * each restart idempotent retries must answer the original order and every event committed before
 * the kill must reach the receiver under one webhook-id (bench/lib/chaos-checks.ts).
 *
 * Prints one line per cycle and a summary, writes bench/results/<time>-chaos.json, exits 1 on any
 * violation (with the seed, to replay the same load and kill moments).
 * Also: --kill-min-ms / --kill-max-ms (default 300 / 2500), BENCH_DB_DIR (where the file goes).
 *
 * `--cluster` (issue 35): the same load against a cluster of two nodes on three nats-servers
 * (bench/lib/chaos-deploy.ts); each kill is of the primary, the other node takes over and its file
 * must hold every acknowledged write while it serves; webhooks committed before the kill are
 * delivered by the new primary; the killed node rejoins as a replica.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { runChaos } from './lib/chaos-run.ts'
import { writeResult, type ScenarioOptions } from './lib/scenario.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

const { values } = parseArgs({
  options: {
    cycles: { type: 'string', default: '10' },
    seed: { type: 'string' },
    'kill-min-ms': { type: 'string', default: '300' },
    'kill-max-ms': { type: 'string', default: '2500' },
    cluster: { type: 'boolean', default: false },
  },
})
const num = (name: string, raw: string | undefined, min: number): number => {
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min) { console.error(`--${name} must be an integer ≥ ${min}, got "${raw}"`); process.exit(2) }
  return n
}
const cycles = num('cycles', values.cycles, 1)
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : num('seed', values.seed, 0)
const killAfterMs: [number, number] = [num('kill-min-ms', values['kill-min-ms'], 0), num('kill-max-ms', values['kill-max-ms'], 0)]

const startedAt = new Date()
const dir = mkdtempSync(join(process.env.BENCH_DB_DIR ?? tmpdir(), 'dispatch-chaos-'))
const how = values.cluster ? ' --cluster' : ''
console.log(`chaos${how}: ${cycles} cycles, seed ${seed} (replay: npm run chaos --${how} --cycles ${cycles} --seed ${seed})`)
let code = 0
let keep = false
try {
  const s = await runChaos({ cycles, seed, dbPath: join(dir, 'chaos.db'), cwd: ROOT, killAfterMs, cluster: values.cluster, log: (l) => console.log(l) })
  const restarts = s.records.map((r) => r.restartMs).sort((a, b) => a - b)
  const lines = [
    `cycles survived:            ${s.survived}/${s.cycles}`,
    `acknowledged writes checked: ${s.acknowledgedWritesChecked} (summed over cycles; ${s.acknowledgedOrders} acknowledged orders at the end)`,
    `idempotent retries:         ${s.idempotentRetries}`,
    `webhook events verified:    ${s.webhooksVerified} (${s.receiverRequests} requests at the receiver, retries included)`,
    `${values.cluster ? 'failover time:  ' : 'restart time:   '}            median ${restarts[Math.floor(restarts.length / 2)]} ms, max ${restarts.at(-1)} ms`,
    `failures:                   ${s.failures.length}`,
  ]
  console.log(['', '== chaos summary ==', ...lines, ...s.failures.slice(0, 50).map((f) => `  ${f}`)].join('\n'))
  const file = writeResult({ name: 'chaos', rows: [], notes: lines, loadGenerator: 'bench/lib/chaos-load.ts in the driver process, same machine', ...{ chaos: s } } as Parameters<typeof writeResult>[0],
    { cycles, seed, killAfterMs, log: () => {} } as unknown as ScenarioOptions, startedAt)
  console.log(`results: ${file}`)
  if (s.failures.length) { console.error(`chaos FAILED with seed ${seed}; the database is kept in ${dir}`); code = 1; keep = true }
} catch (err) {
  console.error(`chaos run broke (seed ${seed}):`, err)
  code = 1
} finally {
  if (!keep) rmSync(dir, { recursive: true, force: true })
}
process.exit(code)
