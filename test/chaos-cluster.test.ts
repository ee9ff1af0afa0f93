/**
 * Crash cycles of a cluster in CI (issue 35 item 5): the same code as `npm run chaos -- --cluster`
 * (bench/lib/chaos-run.ts with bench/lib/chaos-deploy.ts) for two cycles — two nodes on three
 * nats-servers under mixed load (orders with and without Idempotency-Key, status changes, KDS bumps,
 * driver positions, webhooks to a real receiver); SIGKILL of the primary at a seeded moment; the
 * other node takes over and its file must hold every acknowledged write while it serves; idempotent
 * retries answer the original; every event committed before the kill is delivered by the new
 * primary under one webhook-id; the killed node rejoins as a replica. (Convergence of every table
 * across nodes is test/cluster.test.ts's.)
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runChaos } from '../bench/lib/chaos-run.ts'
import { spawnSync } from 'node:child_process'

// Three nats-servers, two nodes, two failovers and two restarts on a shared two-core machine.
t.setTimeout(300_000)

// Not from ./helpers: those import the app, and this test only talks to child processes.
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const NATS_SERVER = '/usr/sbin/nats-server'
const hasNats = () => spawnSync(NATS_SERVER, ['--version']).status === 0

if (!hasNats()) {
  t.fail(`${NATS_SERVER} is missing: apt-get install -y nats-server (.ci/run does this)`)
} else {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-chaos-cluster-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))

  t.test('two kills of the primary under mixed load lose no acknowledged write and no webhook', async (t) => {
    const s = await runChaos({ cycles: 2, seed: 35, dbPath: join(dir, 'chaos.db'), cwd: ROOT, cluster: true, killAfterMs: [700, 1500],
      // The cluster tests' lease (test/helpers/cluster.ts): the default 3 s can lapse on a two-core
      // machine running other test files beside this one, and a lapse before the kill would end the
      // primary and be counted as a violation (a 503 while it was up).
      env: { CLUSTER_LEASE_MS: '4000' }, webhookWaitMs: 60_000, log: (l) => t.comment(l) })
    t.same(s.failures, [], 'no violation in any cycle')
    t.equal(s.survived, 2, 'every cycle survived')
    for (const r of s.records) {
      t.ok(r.ordersAcked > 0, `cycle ${r.cycle}: ${r.ordersAcked} orders acknowledged before the kill`)
      t.equal(r.webhooksConfirmed, r.eventsAtKill, `cycle ${r.cycle}: all ${r.eventsAtKill} events committed before the kill were delivered by the new primary`)
      t.ok(r.idempotentRetries > 0, `cycle ${r.cycle}: idempotent creates were retried across the failover`)
    }
    t.ok(s.acknowledgedWritesChecked > 0, `${s.acknowledgedWritesChecked} acknowledged writes checked`)
  })
}
