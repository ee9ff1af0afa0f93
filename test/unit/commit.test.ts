/**
 * Durable writes (storage/commit.ts), one contract for both modes (group commit and one
 * transaction per write): a promise resolves only after its change is committed; a failing write
 * rolls back alone and rejects only its own caller.
 */
import t from 'tap'
import Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDb, type Db } from '../../src/storage/db.ts'
import { createCommitter } from '../../src/storage/commit.ts'
import type { Replication } from '../../src/cluster/replicator.ts'

function fixture(t: Tap, groupCommit: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'commit-test-'))
  const path = join(dir, 'c.db')
  const db = openDb(path)
  db.exec('CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL)')
  // A second connection sees only what is committed.
  const other = new Database(path, { readonly: true })
  t.teardown(() => { other.close(); db.close(); rmSync(dir, { recursive: true, force: true }) })
  const committed = (k: string) => other.prepare('SELECT v FROM kv WHERE k = ?').pluck().get(k) as number | undefined
  return { db, other, path, committed, c: createCommitter(db, groupCommit) }
}
type Tap = { teardown(fn: () => void): void }

const put = (k: string, v: number) => (db: Db) => { db.prepare('INSERT INTO kv (k, v) VALUES (?, ?)').run(k, v); return v }

for (const groupCommit of [true, false]) {
  const mode = groupCommit ? 'group commit' : 'one transaction per write'

  t.test(`${mode}: resolves with the value, after the change is visible to another connection`, async (t) => {
    const { c, committed } = fixture(t, groupCommit)
    const seen = await c.write((db) => { put('a', 1)(db); return 'done' }).then((v) => ({ v, committed: committed('a') }))
    t.same(seen, { v: 'done', committed: 1 })
  })

  t.test(`${mode}: a failing write rolls back alone and rejects only its caller`, async (t) => {
    const { c, committed } = fixture(t, groupCommit)
    const results = await Promise.allSettled([
      c.write(put('x', 1)),
      c.write((db) => { put('half', 2)(db); throw new Error('boom') }),
      c.write(put('x', 3)), // unique violation
      c.write(put('y', 4)),
    ])
    t.same(results.map((r) => r.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled'])
    t.equal((results[1] as PromiseRejectedResult).reason.message, 'boom', 'the caller gets its own error')
    t.match((results[2] as PromiseRejectedResult).reason.message, /UNIQUE/)
    t.equal(committed('x'), 1)
    t.equal(committed('y'), 4)
    t.equal(committed('half'), undefined, "the failed write's partial change is rolled back")
  })

  t.test(`${mode}: nothing is left in a transaction between writes`, async (t) => {
    const { c, db } = fixture(t, groupCommit)
    await c.write(put('p', 1))
    t.notOk(db.inTransaction)
    await c.write(() => { throw new Error('x') }).catch(() => {})
    t.notOk(db.inTransaction)
  })
}

t.test('group commit: one transaction per event-loop turn', async (t) => {
  const { c } = fixture(t, true)
  await Promise.all(Array.from({ length: 50 }, (_, i) => c.write(put(`k${i}`, i))))
  t.same(c.stats, { batches: 1, writes: 50 }, '50 writes of one turn share one commit')
  await c.write(put('later', 1))
  t.equal(c.stats.batches, 2, 'a later turn is another batch')
})

t.test('group commit: a batch that cannot begin fails every caller and writes nothing', async (t) => {
  const { c, db, path, committed } = fixture(t, true)
  db.pragma('busy_timeout = 0')
  const locker = new Database(path)
  locker.exec('BEGIN IMMEDIATE')
  const results = await Promise.allSettled([c.write(put('l1', 1)), c.write(put('l2', 2))])
  locker.exec('ROLLBACK')
  locker.close()
  t.same(results.map((r) => r.status), ['rejected', 'rejected'])
  t.equal(committed('l1'), undefined)
  t.notOk(db.inTransaction)
  t.equal(await c.write(put('l3', 3)), 3, 'the committer works again once the lock is gone')
})

t.test('group commit: flush() commits what is queued at once', async (t) => {
  const { c, committed } = fixture(t, true)
  const p = c.write(put('f', 9))
  t.equal(committed('f'), undefined, 'queued, not yet committed')
  c.flush()
  t.equal(committed('f'), 9)
  t.equal(await p, 9)
})

t.test('group commit: the batch stays open while actors still have queued messages', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'commit-test-'))
  const db = openDb(join(dir, 'c.db'))
  db.exec('CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL)')
  t.teardown(() => { db.close(); rmSync(dir, { recursive: true, force: true }) })
  let queued = 5
  const c = createCommitter(db, true, { pending: () => queued, maxWaitMs: 1000 })
  // An actor handling one message per turn: each turn one write arrives and the mailbox shrinks.
  const writes: Promise<unknown>[] = []
  await new Promise<void>((done) => {
    const step = () => {
      writes.push(c.write(put(`a${queued}`, queued)))
      queued--
      if (queued > 0) setImmediate(step)
      else done()
    }
    step()
  })
  await Promise.all(writes)
  t.same(c.stats, { batches: 1, writes: 5 }, 'five writes arriving on five turns share one commit')

  queued = 1 // a message that does not move (queued behind an actor awaiting this commit)
  const c2 = createCommitter(db, true, { pending: () => queued, maxWaitMs: 1000 })
  let started = performance.now()
  await c2.write(put('stuck', 1))
  let waited = performance.now() - started
  t.ok(waited < 100, `mailboxes that make no progress do not hold the batch (waited ${waited.toFixed(1)} ms)`)

  let draining = 1_000_000 // actors busy for ever: the wait is still bounded
  const c4 = createCommitter(db, true, { pending: () => draining--, maxWaitMs: 20 })
  started = performance.now()
  await c4.write(put('bounded', 1))
  waited = performance.now() - started
  t.ok(waited >= 19 && waited < 1000, `a batch waits at most maxWaitMs (waited ${waited.toFixed(1)} ms)`)

  const c3 = createCommitter(db, true, { pending: () => 100, maxWaitMs: 1000, maxBatch: 3 })
  await Promise.all([1, 2, 3, 4].map((i) => c3.write(put(`m${i}`, i))))
  t.equal(c3.stats.writes, 4)
  t.ok(c3.stats.batches >= 1 && c3.stats.batches <= 2, 'a full batch closes without waiting')
})

t.test('cluster mode: a batch stays open while a stream message is in flight and goes out as one message when the stream confirms', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'commit-test-'))
  const db = openDb(join(dir, 'c.db'))
  db.exec('CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL)')
  t.teardown(() => { db.close(); rmSync(dir, { recursive: true, force: true }) })
  // A stream that confirms only when told: what each capture held, and the confirmations pending.
  const captured: string[][] = []
  const pending: Array<() => void> = []
  const replication: Replication = {
    capture: (d) => { const ks = d.prepare('SELECT k FROM kv ORDER BY k').pluck().all() as string[]; captured.push(ks); return { seq: captured.length, id: String(captured.length), parts: [] } },
    abandon: () => {},
    ship: () => new Promise<void>((resolve) => pending.push(() => { resolve(); if (pending.length === 0) replication.onIdle?.() })),
    barrier: () => Promise.resolve(),
    admit: () => {},
    get busy() { return pending.length > 0 },
    onIdle: null,
  }
  const c = createCommitter(db, true, { replication })
  const first = c.write(put('a', 1))
  await new Promise((r) => setImmediate(r))
  await new Promise((r) => setImmediate(r))
  t.same(captured, [['a']], 'the first write went out at once')
  const later = [c.write(put('b', 2)), c.write(put('c', 3))]
  await new Promise((r) => setTimeout(r, 20))
  t.same(captured, [['a']], 'writes that arrive while it is in flight are not committed yet')
  pending.shift()!()
  await first
  t.same(captured, [['a'], ['a', 'b', 'c']], 'when the stream confirms, they commit together: one message')
  pending.shift()!()
  t.same(await Promise.all(later), [2, 3], 'and are answered once that message is confirmed')
})
