/**
 * The position writer (src/storage/driver-locations.ts): a stream of positions shares commits (a
 * position that comes within LOCATION_COMMIT_MIN_GAP_MS of a commit waits for the next one instead
 * of paying a transaction of its own), and each is answered only once it is committed — the
 * durability an `ack` on the driver socket promises.
 */
import t from 'tap'
import { openDb } from '../../src/storage/db.ts'
import { LocationWriter } from '../../src/storage/driver-locations.ts'

function fixture() {
  const db = openDb(':memory:')
  const now = new Date().toISOString()
  const owner = Number(db.prepare("INSERT INTO owners (name, email, created_at) VALUES ('O', 'o@example.com', ?)").run(now).lastInsertRowid)
  const ids = [1, 2, 3].map((i) => Number(db.prepare('INSERT INTO drivers (owner_id, name, phone, created_at) VALUES (?, ?, ?, ?)').run(owner, `D${i}`, `+1555000000${i}`, now).lastInsertRowid))
  const lat = (id: number) => (db.prepare('SELECT p.lat FROM drivers d LEFT JOIN driver_positions p ON p.driver_id = d.id WHERE d.id = ?').pluck().get(id) as number | null)
  return { db, ids, lat }
}

t.test('a lone position commits at once; positions right after a commit share the next one', async (t) => {
  const { db, ids, lat } = fixture()
  t.teardown(() => db.close())
  const w = new LocationWriter(db)
  const at = new Date().toISOString()
  await w.persist(ids[0]!, 1, 1, at)
  t.equal(lat(ids[0]!), 1, 'committed before it resolved')

  // Within the gap after that commit: both wait, and are committed together, before either resolves.
  let resolved = 0
  // Whichever resolves first finds both written: one shared commit, not two.
  const a = w.persist(ids[1]!, 2, 2, at).then(() => { resolved++; t.equal(lat(ids[1]!), 2); t.equal(lat(ids[2]!), 3, 'written in the same commit') })
  const b = w.persist(ids[2]!, 3, 3, at).then(() => { resolved++; t.equal(lat(ids[2]!), 3); t.equal(lat(ids[1]!), 2, 'written in the same commit') })
  await new Promise((r) => setImmediate(r))
  t.equal(resolved, 0, 'not answered before the commit')
  t.equal(lat(ids[1]!), null, 'not written yet: waiting for the shared commit')
  await Promise.all([a, b])
  t.equal(resolved, 2)
})

t.test('flush commits what waits (shutdown)', async (t) => {
  const { db, ids, lat } = fixture()
  t.teardown(() => db.close())
  const w = new LocationWriter(db)
  const at = new Date().toISOString()
  await w.persist(ids[0]!, 1, 1, at)
  const p = w.persist(ids[0]!, 5, 5, at)
  w.flush()
  t.equal(lat(ids[0]!), 5)
  await p
})

t.test('socket positions are answered by ticket after their commit, coalesced ones with the position that replaced them', async (t) => {
  const { db, ids, lat } = fixture()
  t.teardown(() => db.close())
  const w = new LocationWriter(db)
  const at = new Date().toISOString()
  await w.persist(ids[0]!, 1, 1, at)
  const answers: Array<[number, number, unknown]> = []
  const sink = { stored: (ticket: number, la: number, _lng: number, _at: string, err: unknown) => { answers.push([ticket, la, err]); t.equal(lat(ids[1]!), 8, 'committed before answered') } }
  // Within the gap after the first commit: both wait for the next one, which writes the newer.
  w.persistTicket(ids[1]!, 7, 7, at, 1, sink)
  w.persistTicket(ids[1]!, 8, 8, at, 2, sink)
  await new Promise((r) => setImmediate(r))
  t.same(answers, [], 'not answered before the commit')
  await new Promise((r) => setTimeout(r, 150))
  t.same(answers, [[1, 8, null], [2, 8, null]], 'both tickets, with the position committed')
})

t.test('a failed commit answers every ticket and promise with the error', async (t) => {
  const { db, ids } = fixture()
  const w = new LocationWriter(db)
  const at = new Date().toISOString()
  const answers: unknown[] = []
  w.persistTicket(ids[0]!, 1, 1, at, 9, { stored: (_ticket, _la, _lng, _at, err) => { answers.push(err) } })
  const p = w.persist(ids[1]!, 2, 2, at)
  db.close()
  await t.rejects(p)
  t.equal(answers.length, 1)
  t.ok(answers[0] instanceof Error, 'the ticket is told it failed')
})
