/**
 * WAL fsync off the event loop (storage/wal-sync.ts): who gets a syncer, that every waiter is
 * answered exactly once, and that waiters arriving during a sync wait for the next one.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDb } from '../../src/storage/db.ts'
import { createWalSync } from '../../src/storage/wal-sync.ts'
import { createCommitter } from '../../src/storage/commit.ts'

function fileDb(t: { teardown(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'wal-sync-'))
  const db = openDb(join(dir, 'w.db'))
  db.exec('CREATE TABLE kv (k TEXT PRIMARY KEY)')
  t.teardown(() => { db.close(); rmSync(dir, { recursive: true, force: true }) })
  return db
}

t.test('an in-memory database has no WAL to sync', async (t) => {
  const db = openDb(':memory:')
  t.teardown(() => db.close())
  t.equal(createWalSync(db), null)
})

t.test('every waiter is answered once, in order, never before an fdatasync returns', async (t) => {
  const db = fileDb(t)
  const sync = createWalSync(db)!
  t.teardown(() => sync.close())
  db.prepare('INSERT INTO kv VALUES (?)').run('a')
  const order: number[] = []
  const done = new Promise<void>((resolve) => {
    sync.afterCommit((err) => { t.equal(err, null); order.push(1) })
    // Registered while the first sync is in flight.
    sync.afterCommit((err) => { t.equal(err, null); order.push(2) })
    t.same(order, [], 'nobody is answered before the fdatasync returns')
    sync.afterCommit(() => { order.push(3); resolve() })
  })
  await done
  t.same(order, [1, 2, 3])
})

t.test('syncNow answers the waiting on the spot (shutdown)', async (t) => {
  const db = fileDb(t)
  const sync = createWalSync(db)!
  t.teardown(() => sync.close())
  db.prepare('INSERT INTO kv VALUES (?)').run('a')
  let first = 0
  let second = 0
  sync.afterCommit(() => { first++ })
  sync.afterCommit(() => { second++ })
  sync.syncNow()
  t.equal(second, 1, 'the waiter behind the in-flight sync is answered synchronously')
  await new Promise((r) => setTimeout(r, 50))
  t.equal(first, 1, 'the in-flight one is answered once, by its own sync')
  t.equal(second, 1, 'and nobody twice')
})

t.test('group commit restores the connection to synchronous=FULL after each batch', async (t) => {
  const db = fileDb(t)
  const c = createCommitter(db, true)
  await c.write((d) => d.prepare('INSERT INTO kv VALUES (?)').run('x'))
  t.equal(db.pragma('synchronous', { simple: true }), 2, 'FULL for anything written outside the committer')
  c.close()
})
