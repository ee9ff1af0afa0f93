/**
 * The pure parts of a replica's public reads (src/http/replica-reads.ts, src/cluster/read-view.ts;
 * docs/cluster.md "Public reads on replicas"): when a replica may answer a read itself, that every
 * entry of the list names a public GET route that exists, and that the read-only view cannot write.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { openDb } from '../../src/storage/db.ts'
import { loadConfig } from '../../src/config.ts'
import { LOCAL_READS, localReadRefusal } from '../../src/http/replica-reads.ts'
import { readView } from '../../src/cluster/read-view.ts'
import { allRoutes } from '../../src/http/routes/index.ts'
import { fullPath } from '../../src/http/server.ts'
import { LEAFLET_BASE } from '../../src/http/routes/leaflet-assets.ts'
import type { ClusterStatus } from '../../src/cluster/node.ts'

const replica = (over: Partial<ClusterStatus> = {}): ClusterStatus => ({
  role: 'replica', node: 'n2', primary: 'n1', applied_seq: 10, lag_ms: 0, problem: null, apply_delay_ms: null, ready: true, ...over,
})

t.test('a replica answers reads itself only while current and within the bound', async (t) => {
  const now = 1_000_000
  const lease = 3000
  t.equal(localReadRefusal(replica(), now - 100, now, 2000, lease), null, 'caught up, the stream checked a moment ago')
  t.equal(localReadRefusal(replica({ lag_ms: 2000 }), now - 100, now, 2000, lease), null, 'at the bound')
  t.match(localReadRefusal(replica({ lag_ms: 2001 }), now - 100, now, 2000, lease), /lag 2001 ms over 2000 ms/, 'over the bound')
  t.match(localReadRefusal(replica({ lag_ms: 1 }), now - 100, now, 0, lease), /over 0 ms/, 'a bound of 0: only while caught up')
  t.equal(localReadRefusal(replica(), now - 100, now, null, lease), 'off', 'CLUSTER_READ_LAG_MS=off')
  t.equal(localReadRefusal(null, now - 100, now, 2000, lease), 'starting', 'before the node started')
  t.match(localReadRefusal(replica({ problem: 'cannot apply message 7: …' }), now - 100, now, 2000, lease), /cannot apply/, 'a replica that stopped applying')
  t.match(localReadRefusal(replica({ role: 'promoting' }), now - 100, now, 2000, lease), /promoting/, 'while it becomes primary')
  t.match(localReadRefusal(replica({ role: 'primary' }), now - 100, now, 2000, lease), /primary/)
  // Restarted on an old file: its lag reads 0 until it has asked the stream how long it is.
  t.equal(localReadRefusal(replica(), 0, now, 2000, lease), 'lag unknown', 'the stream not checked since the node started')
  t.equal(localReadRefusal(replica(), now - lease - 1, now, 2000, lease), 'lag unknown', 'not checked for longer than a lease (cut off from NATS)')
})

t.test('every entry of the list is a public GET route of the table', async (t) => {
  const routes = allRoutes()
  for (const entry of LOCAL_READS) {
    const matching = routes.filter((r) => r.method === 'GET' && (entry.path === `${LEAFLET_BASE}/*` ? fullPath(r).startsWith(`${LEAFLET_BASE}/`) : fullPath(r) === entry.path))
    t.ok(matching.length > 0, `${entry.path} is a route`)
    for (const r of matching) t.equal(r.auth, 'none', `${entry.path} takes no credential`)
  }
})

t.test('the read-only view reads the replica\'s file and cannot write to it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-read-view-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'replica.db')
  const writer = openDb(path)
  writer.prepare("INSERT INTO owners (email, name, created_at) VALUES ('a@example.com', 'A', '2026-01-01T00:00:00Z')").run()
  const view = readView(loadConfig({ DB_PATH: path, THEME_WORKERS: '1' }), path, pino({ level: 'silent' }))
  t.teardown(async () => { await view.close(); writer.close() })
  const { svc } = view
  t.equal(svc.db.prepare('SELECT COUNT(*) FROM owners').pluck().get(), 1, 'it reads what the file holds')
  writer.prepare("INSERT INTO owners (email, name, created_at) VALUES ('b@example.com', 'B', '2026-01-01T00:00:00Z')").run()
  t.equal(svc.db.prepare('SELECT COUNT(*) FROM owners').pluck().get(), 2, 'and what another connection (the applier) commits')
  t.throws(() => svc.db.prepare("DELETE FROM owners").run(), /readonly/i, 'SQLite refuses a write on its connection')
  await t.rejects(svc.committer.write(() => 1), { code: 'unavailable' }, 'its committer refuses')
  t.throws(() => svc.events.publish({} as never), /svc\.events\.publish is not available on a replica/, 'the parts that act are absent, by name')
  t.throws(() => svc.actors.orders, /svc\.actors\.orders/)
})
