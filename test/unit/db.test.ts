/** Opening SQLite (storage/db.ts): WAL, synchronous=FULL on every open, foreign keys, numbered migrations once. */
import t from 'tap'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { migrate, nowIso, openDb, stmt } from '../../src/storage/db.ts'

const dir = mkdtempSync(join(tmpdir(), 'db-test-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const migrations = readdirSync(fileURLToPath(new URL('../../src/storage/migrations/', import.meta.url))).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort()

t.test('a file database is WAL with synchronous=FULL, every time it is opened', async (t) => {
  const path = join(dir, 'nested', 'a.db')
  for (let i = 0; i < 2; i++) {
    const db = openDb(path)
    t.equal(db.pragma('journal_mode', { simple: true }), 'wal')
    t.equal(db.pragma('synchronous', { simple: true }), 2, 'FULL')
    t.equal(db.pragma('foreign_keys', { simple: true }), 1)
    t.ok(Number(db.pragma('busy_timeout', { simple: true })) > 0, 'waits for the CLI instead of failing')
    db.close()
  }
})

t.test('numbered migrations apply in order, once', async (t) => {
  const db = openDb(join(dir, 'm.db'))
  t.teardown(() => db.close())
  const rows = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as Array<{ version: number; name: string }>
  t.same(rows.map((r) => r.name), migrations, 'every migration file recorded')
  t.same(rows.map((r) => r.version), migrations.map((f) => Number(f.slice(0, 3))))
  t.same(migrate(db), [], 'nothing to do the second time')
  for (const table of ['owners', 'owner_tokens', 'stores', 'menu_categories', 'menu_items', 'item_variants', 'item_extras', 'orders', 'order_lines', 'idempotency_keys', 'outbox']) {
    t.ok(db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table), `table ${table}`)
  }
})

t.test(':memory: works for throw-away servers', async (t) => {
  const db = openDb(':memory:')
  t.ok(db.prepare('SELECT COUNT(*) FROM schema_migrations').pluck().get())
  db.close()
})

t.test('timestamps are ISO 8601 with an explicit offset', async (t) => {
  t.equal(nowIso(Date.UTC(2026, 0, 2, 3, 4, 5, 6)), '2026-01-02T03:04:05.006+00:00')
})

t.test('stmt prepares once per connection and SQL text, and never hands over another site\'s pluck', async (t) => {
  const db = openDb(':memory:')
  const other = openDb(':memory:')
  t.teardown(() => { db.close(); other.close() })
  const sql = 'SELECT COUNT(*) AS n FROM schema_migrations'
  t.equal(stmt(db, sql), stmt(db, sql), 'the same statement the second time')
  t.not(stmt(db, sql), stmt(other, sql), 'one per connection')
  t.type(stmt(db, sql).pluck().get(), 'number', 'a site that plucks gets the value')
  t.same(Object.keys(stmt<[], { n: number }>(db, sql).get()!), ['n'], 'the next site gets the row, not the plucked value')
  t.ok(stmt(db, 'CREATE TABLE IF NOT EXISTS x (a)').run(), 'statements that return no data work too')
})

t.test('nowIso (formatted once per second) is toISOString with +00:00, character for character', async (t) => {
  const { nowIso } = await import('../../src/storage/db.ts')
  const full = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00')
  const base = Date.parse('2026-06-01T12:00:00Z')
  const samples = [0, 1, 9, 10, 99, 100, 999, 1000, base, base + 7, base + 70, base + 999, 253402300799999, 253402300800000, base + 0.5, -1]
  for (let i = 0; i < 2000; i++) samples.push(base + Math.floor(Math.random() * 1e9))
  // In and out of order: a stamp of an earlier second after a later one reformats the prefix.
  const wrong = [...samples, ...samples.reverse()].filter((ms) => nowIso(ms) !== full(ms))
  t.same(wrong, [])
})
