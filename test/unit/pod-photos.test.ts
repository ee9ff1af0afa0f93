/**
 * Proof-of-delivery photo storage (src/storage/pod-photos.ts, migration 049) on a migrated database
 * and a data directory of its own: a photo is read from its row, else from an older upload's file,
 * else not at all; the clean-up of a refused upload keeps a photo its order does name; the order
 * write that names a new photo removes the row of the one it replaces (src/storage/drivers.ts
 * `deliveryWriter`), and only that row.
 */
import t from 'tap'
import Database from 'better-sqlite3'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrate, type Db } from '../../src/storage/db.ts'
import { deliveryWriter } from '../../src/storage/drivers.ts'
import { dropUnnamedPodPhoto, newPodPhotoPath, putPodPhoto, readPodPhoto, removePodPhotoFile } from '../../src/storage/pod-photos.ts'

const dir = mkdtempSync(join(tmpdir(), 'dispatch-pod-unit-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const dbPath = join(dir, 'dispatch.db')
const db: Db = new Database(':memory:')
migrate(db)
db.pragma('foreign_keys = OFF') // the photos' orders are not the point here
t.teardown(() => db.close())
const at = '2026-11-29T12:00:00.000+00:00'
const stored = (orderId: number) => db.prepare('SELECT path FROM pod_photos WHERE order_id = ? ORDER BY path').pluck().all(orderId) as string[]
const photo = (path: string, bytes: number) => ({ path, type: 'image/png', bytes, at })
const delivery = (p: ReturnType<typeof photo> | null) => ({ fee: 0, podAttempts: 0, podVerifiedAt: null, photo: p, note: null })

t.test('a new path: unguessable, in the shape of the older uploads\' files', async (t) => {
  t.match(newPodPhotoPath(7, 'image/jpeg'), /^pod\/7-[0-9a-f]{24}\.jpeg$/)
  t.not(newPodPhotoPath(7, 'image/png'), newPodPhotoPath(7, 'image/png'))
})

t.test('read: the row, else an older upload\'s file, else null', async (t) => {
  const inDb = newPodPhotoPath(1, 'image/png')
  putPodPhoto(db, { path: inDb, orderId: 1, type: 'image/png', bytes: Buffer.from('row bytes'), at })
  t.same(await readPodPhoto(db, dbPath, inDb), Buffer.from('row bytes'))
  mkdirSync(join(dir, 'pod'), { recursive: true })
  writeFileSync(join(dir, inDb), 'a stale file')
  t.same(await readPodPhoto(db, dbPath, inDb), Buffer.from('row bytes'), 'the row wins over a file at the same path')
  const legacy = 'pod/2-0123456789abcdef01234567.png'
  writeFileSync(join(dir, legacy), 'file bytes')
  t.same(await readPodPhoto(db, dbPath, legacy), Buffer.from('file bytes'), 'no row: the file of an older upload')
  await removePodPhotoFile(dbPath, legacy)
  t.equal(await readPodPhoto(db, dbPath, legacy), null, 'neither: null')
  await removePodPhotoFile(dbPath, legacy)
  t.pass('removing a file already gone is fine')
})

t.test('a refused upload\'s clean-up removes its row, unless the order names it after all', async (t) => {
  const w = deliveryWriter(db)
  const named = newPodPhotoPath(3, 'image/png')
  putPodPhoto(db, { path: named, orderId: 3, type: 'image/png', bytes: Buffer.alloc(8), at })
  w.save(3, delivery(photo(named, 8)), at)
  dropUnnamedPodPhoto(db, 3, named)
  t.same(stored(3), [named], 'the order names it: kept')
  const refused = newPodPhotoPath(3, 'image/png')
  putPodPhoto(db, { path: refused, orderId: 3, type: 'image/png', bytes: Buffer.alloc(8), at })
  dropUnnamedPodPhoto(db, 3, refused)
  t.same(stored(3), [named], 'not named: gone')
})

t.test('the order write that names a new photo removes the replaced row, and nothing else', async (t) => {
  const w = deliveryWriter(db)
  const first = newPodPhotoPath(4, 'image/png')
  const second = newPodPhotoPath(4, 'image/png')
  const other = newPodPhotoPath(5, 'image/png')
  for (const [path, order] of [[first, 4], [second, 4], [other, 5]] as const) putPodPhoto(db, { path, orderId: order, type: 'image/png', bytes: Buffer.alloc(4), at })
  w.save(4, delivery(photo(first, 4)), at)
  w.save(5, delivery(photo(other, 4)), at)
  w.save(4, { ...delivery(photo(first, 4)), podAttempts: 1 }, at)
  t.same(stored(4).sort(), [first, second].sort(), 'a save that keeps the photo removes nothing')
  w.save(4, delivery(photo(second, 4)), at)
  t.same(stored(4), [second], 'the replaced photo\'s row went with the write that replaced it')
  t.same(stored(5), [other], 'another order\'s photo is untouched')
  w.save(6, delivery(null), at)
  t.same(stored(6), [], 'a delivery without a photo touches nothing')
})
