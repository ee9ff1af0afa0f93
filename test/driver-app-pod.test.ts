/**
 * Proof of delivery (docs/drivers.md): the 4-digit code shown to the customer completes the
 * delivery, wrong codes are limited; photos are type- and size-checked, kept in the database
 * (`pod_photos`, one row per order's current photo) and readable by the owner; a photo an older
 * version kept as a file under the data directory is still served from it, until it is replaced.
 */
import t from 'tap'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { startServer } from './helpers/server.ts'
import { assign, createFleet, deliveryOrder, driverStatus } from './helpers/delivery.ts'
import { request } from './helpers/server.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const f = createFleet(db)
const d = f.drivers[0]!

const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='
const jpeg = (size: number) => Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(size - 4, 7)])

async function pickedUp() {
  const o = await deliveryOrder(s, f)
  await assign(s, f, o.id, d.id)
  await driverStatus(s, d, o.id, 'picked_up')
  return o
}
const otp = (orderId: number, code: string) => s.req('POST', `/driver/deliveries/${orderId}/pod-otp`, { token: d.token, body: { code } })

t.test('the customer sees a 4-digit code while the driver is on the way; it completes the delivery', async (t) => {
  const o = await deliveryOrder(s, f)
  t.notOk('delivery_code' in (await s.req('GET', `/track/${o.track_token}`)).body, 'no code before a driver is assigned')
  await assign(s, f, o.id, d.id)
  const early = await otp(o.id, '0000')
  t.equal(early.status, 422, 'not before pickup')
  await driverStatus(s, d, o.id, 'out_for_delivery')
  const view = (await s.req('GET', `/track/${o.track_token}`)).body
  t.match(view.delivery_code, /^\d{4}$/)
  const wrong = view.delivery_code === '0000' ? '0001' : '0000'
  const bad = await otp(o.id, wrong)
  t.equal(bad.status, 422)
  t.match(bad.body, { code: 'validation_failed', reason: 'pod_code_invalid' })
  t.match(bad.body.errors.code, [/4 attempt\(s\) left/])
  const good = await otp(o.id, view.delivery_code)
  t.equal(good.status, 200)
  t.match(good.body, { delivery_status: 'delivered', proof: { code_verified_at: String, code_attempts: 1 } })
  const ev = db.prepare("SELECT data FROM outbox WHERE event = 'order.delivered' AND json_extract(data, '$.order_id') = ?").pluck().get(o.id) as string
  t.match(JSON.parse(ev), { order_id: o.id, delivery_status: 'delivered', driver_id: d.id })
  t.notOk('delivery_code' in (await s.req('GET', `/track/${o.track_token}`)).body, 'hidden once delivered')
  t.equal((await otp(o.id, view.delivery_code)).status, 200, 'a retry after success is harmless')
  t.equal((await otp(o.id, 'abcd')).status, 422, 'four digits only')
})

t.test('five wrong codes lock it, across restarts of the order actor', async (t) => {
  const o = await pickedUp()
  const code = (await s.req('GET', `/track/${o.track_token}`)).body.delivery_code as string
  const wrong = code === '1111' ? '2222' : '1111'
  for (let i = 0; i < 4; i++) t.match((await otp(o.id, wrong)).body, { code: 'validation_failed', reason: 'pod_code_invalid' })
  s.app.svc.actors.orders.evict(o.id)
  t.equal(db.prepare('SELECT pod_attempts FROM deliveries WHERE order_id = ?').pluck().get(o.id), 4, 'attempts are durable')
  const fifth = await otp(o.id, wrong)
  t.match(fifth.body, { code: 'validation_failed', reason: 'pod_code_locked' })
  const right = await otp(o.id, code)
  t.equal(right.status, 422)
  t.match(right.body, { code: 'validation_failed', reason: 'pod_code_locked' }, 'even the right code is refused now')
  t.equal((await driverStatus(s, d, o.id, 'delivered')).status, 200, 'the driver can still complete it by status (with a photo)')
})

/** The stored photos of an order: path, type and size of each row. */
const stored = (orderId: number) => db.prepare('SELECT path, type, length(bytes) AS bytes FROM pod_photos WHERE order_id = ? ORDER BY path').all(orderId) as Array<{ path: string; type: string; bytes: number }>
const podDir = join(dirname(s.dbPath), 'pod')
const filesIn = () => (existsSync(podDir) ? readdirSync(podDir) : [])
const ownerPhoto = (orderId: number) => fetch(`${s.base}/restaurants/${f.storeId}/orders/${orderId}/pod-photo`, { headers: { authorization: `Bearer ${f.ownerToken}` } })

t.test('photo: type read from the bytes, size limit, stored in the database, owner reads it', async (t) => {
  const o = await pickedUp()
  const up = (body: unknown) => s.req('POST', `/driver/deliveries/${o.id}/pod-photo`, { token: d.token, body })
  const ok = await up({ image: `data:image/png;base64,${PNG_1PX}` })
  t.equal(ok.status, 200)
  t.match(ok.body.proof.photo, { type: 'image/png', bytes: 70, uploaded_at: String })
  const rows = stored(o.id)
  t.equal(rows.length, 1, 'one row in pod_photos')
  t.match(rows[0], { path: new RegExp(`^pod/${o.id}-[0-9a-f]{24}\\.png$`), type: 'image/png', bytes: 70 })
  t.equal(db.prepare('SELECT photo_path FROM deliveries WHERE order_id = ?').pluck().get(o.id), rows[0]!.path, 'the delivery names it')
  t.same(filesIn(), [], 'no file under <data dir>/pod')

  const owner = await s.req('GET', `/restaurants/${f.storeId}/deliveries`, { token: f.ownerToken })
  const photo = owner.body.data.find((x: any) => x.id === o.id).delivery.proof.photo
  t.match(photo, { type: 'image/png', url: `${s.base}/restaurants/${f.storeId}/orders/${o.id}/pod-photo` })
  const raw = await fetch(photo.url, { headers: { authorization: `Bearer ${f.ownerToken}` } })
  t.equal(raw.status, 200)
  t.equal(raw.headers.get('content-type'), 'image/png')
  t.same(Buffer.from(await raw.arrayBuffer()), Buffer.from(PNG_1PX, 'base64'))
  t.equal((await request(photo.url, 'GET')).status, 401, 'not public')

  const replaced = await up({ image: jpeg(2048).toString('base64'), content_type: 'image/jpeg' })
  t.equal(replaced.status, 200)
  t.equal(replaced.body.proof.photo.type, 'image/jpeg')
  const after = stored(o.id)
  t.equal(after.length, 1, 'the replaced photo\'s row is removed')
  t.match(after[0], { path: /\.jpeg$/, type: 'image/jpeg', bytes: 2048 })
  t.not(after[0]!.path, rows[0]!.path)
  t.same(Buffer.from(await (await ownerPhoto(o.id)).arrayBuffer()), jpeg(2048), 'the owner reads the new one')

  const max = jpeg(512 * 1024)
  const biggest = await up({ image: max.toString('base64') })
  t.equal(biggest.status, 200, 'a photo of exactly 512 KiB is taken')
  t.same(Buffer.from(await (await ownerPhoto(o.id)).arrayBuffer()), max, 'and read back byte for byte')
  const tooBig = await up({ image: jpeg(512 * 1024 + 1).toString('base64') })
  t.equal(tooBig.status, 413)
  t.equal(tooBig.body.code, 'payload_too_large')
  const gif = await up({ image: Buffer.from('GIF89a....').toString('base64') })
  t.equal(gif.status, 415)
  const lying = await up({ image: jpeg(100).toString('base64'), content_type: 'image/png' })
  t.equal(lying.status, 415, 'the declared type must match the bytes')
  t.equal((await up({ image: '!!!not base64!!!' })).status, 422)
  t.equal((await up({})).status, 422)
  t.equal(stored(o.id).length, 1, 'refused uploads leave no rows')
  t.equal(stored(o.id)[0]!.bytes, max.length)
})

t.test('photo before pickup is refused and leaves no row', async (t) => {
  const o = await deliveryOrder(s, f)
  await assign(s, f, o.id, d.id)
  const r = await s.req('POST', `/driver/deliveries/${o.id}/pod-photo`, { token: d.token, body: { image: PNG_1PX } })
  t.equal(r.status, 422)
  t.match(r.body, { code: 'validation_failed', reason: 'invalid_transition' })
  t.same(stored(o.id), [], 'the bytes written before the order step are removed again')
  t.equal(db.prepare('SELECT photo_path FROM deliveries WHERE order_id = ?').pluck().get(o.id) ?? null, null)
  t.equal((await ownerPhoto(o.id)).status, 404)
})

t.test('a photo an older version kept as a file is still served, and removed once replaced', async (t) => {
  const o = await pickedUp()
  // What an older version left: the file under <data dir>/pod and the delivery naming it, no row.
  const legacy = `pod/${o.id}-0123456789abcdef01234567.jpeg`
  const bytes = jpeg(4096)
  mkdirSync(podDir, { recursive: true })
  writeFileSync(join(dirname(s.dbPath), legacy), bytes)
  db.prepare('UPDATE deliveries SET photo_path = ?, photo_type = ?, photo_bytes = ?, photo_at = ? WHERE order_id = ?').run(legacy, 'image/jpeg', bytes.length, '2026-11-01T10:00:00.000Z', o.id)
  s.app.svc.actors.orders.evict(o.id)
  t.same(stored(o.id), [])

  const read = await ownerPhoto(o.id)
  t.equal(read.status, 200, 'served from the file')
  t.equal(read.headers.get('content-type'), 'image/jpeg')
  t.same(Buffer.from(await read.arrayBuffer()), bytes, 'byte for byte')
  const listed = await s.req('GET', `/restaurants/${f.storeId}/deliveries`, { token: f.ownerToken })
  t.match(listed.body.data.find((x: any) => x.id === o.id).delivery.proof.photo, { type: 'image/jpeg', bytes: 4096, uploaded_at: '2026-11-01T10:00:00.000Z' })

  const next = await s.req('POST', `/driver/deliveries/${o.id}/pod-photo`, { token: d.token, body: { image: `data:image/png;base64,${PNG_1PX}` } })
  t.equal(next.status, 200)
  t.notOk(existsSync(join(dirname(s.dbPath), legacy)), 'the replaced file is removed')
  t.equal(stored(o.id).length, 1, 'the new photo is a row')
  t.same(Buffer.from(await (await ownerPhoto(o.id)).arrayBuffer()), Buffer.from(PNG_1PX, 'base64'))

  // A file that is gone (an older version's data directory not carried over): 404, as before.
  const o2 = await pickedUp()
  db.prepare('UPDATE deliveries SET photo_path = ?, photo_type = ?, photo_bytes = ?, photo_at = ? WHERE order_id = ?').run(`pod/${o2.id}-ffffffffffffffffffffffff.png`, 'image/png', 70, '2026-11-01T10:00:00.000Z', o2.id)
  s.app.svc.actors.orders.evict(o2.id)
  const gone = await ownerPhoto(o2.id)
  t.equal(gone.status, 404)
  t.match(await gone.json(), { code: 'not_found' })
})
