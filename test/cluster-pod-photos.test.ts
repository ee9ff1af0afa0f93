/**
 * Proof-of-delivery photos in cluster mode (issue 35; docs/cluster.md, docs/drivers.md "Proof of
 * delivery"): three nats-servers and two nodes on loopback. A photo of the largest size a driver may
 * upload (its hex alone is over NATS's 1 MiB message, so its batch travels as parts) is acknowledged
 * by the primary only once it is in the stream: the replica holds its bytes, the owner reads it
 * byte for byte through the replica; a replacement answered just before the primary is killed is
 * served by the new primary, and the replaced photo's row is gone there too. No
 * timing assertions: every wait is "until", with generous bounds.
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import Database from 'better-sqlite3'
import { appliedUpTo, demoAccountOf, nodeApi, primaryOf, testCluster, type ClusterNodeProcess } from './helpers/cluster.ts'
import { POD_PHOTO_MAX_BYTES } from '../src/domain/delivery.ts'

t.setTimeout(360_000)

const cluster = await testCluster(t, 'pod')
if (cluster) {
  const { nodes, start } = cluster
  const n1 = await start('n1')
  const primary = await primaryOf([n1])
  const n2 = await start('n2')
  const demo = await demoAccountOf(n1)
  const storeId = demo.store.id
  const call = (node: ClusterNodeProcess, method: string, path: string, token: string, body?: unknown) => nodeApi(node, method, path, { token, body })
  /** The photo as the owner reads it from `node`: status, type and bytes. */
  const photoFrom = async (node: ClusterNodeProcess, orderId: number) => {
    const r = await fetch(`${node.sp.base}/restaurants/${storeId}/orders/${orderId}/pod-photo`, { headers: { authorization: `Bearer ${demo.owner.token}`, connection: 'close' } })
    return { status: r.status, type: r.headers.get('content-type'), bytes: Buffer.from(await r.arrayBuffer()) }
  }
  /** The photo rows a node's database file holds for an order. */
  const rowsIn = (node: ClusterNodeProcess, orderId: number) => {
    const db = new Database(node.dbPath, { readonly: true, fileMustExist: true })
    try {
      return db.prepare('SELECT path, bytes FROM pod_photos WHERE order_id = ?').all(orderId) as Array<{ path: string; bytes: Buffer }>
    } finally {
      db.close()
    }
  }

  // A delivery order of the demo store, assigned to the demo driver and picked up.
  const item = (await call(primary, 'GET', `/restaurants/${storeId}/menu`, demo.owner.token)).body[0].items[0].id as number
  const placed = await call(primary, 'POST', `/restaurants/${storeId}/orders`, demo.owner.token,
    { type: 'delivery', address: '1 Replica Street', customer_name: 'Pod', phone: '+4915100000044', items: [{ item_id: item, quantity: 1 }] })
  if (placed.status !== 200) throw new Error(`order: ${placed.status} ${placed.text.slice(0, 300)}`)
  const orderId = placed.body.id as number
  const assigned = await call(primary, 'POST', `/restaurants/${storeId}/orders/${orderId}/assign`, demo.owner.token, { driver_id: demo.driver.id })
  if (assigned.status !== 200) throw new Error(`assign: ${assigned.status} ${assigned.text.slice(0, 300)}`)
  const picked = await call(primary, 'PUT', `/driver/deliveries/${orderId}/status`, demo.driver.token, { delivery_status: 'picked_up' })
  if (picked.status !== 200) throw new Error(`picked up: ${picked.status} ${picked.text.slice(0, 300)}`)

  // The largest photo a driver may send, of bytes that do not compress.
  const photo = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(POD_PHOTO_MAX_BYTES - 4)])

  t.test('a max-size photo acknowledged by the primary is on the replica, and read through it byte for byte', async (t) => {
    const up = await call(primary, 'POST', `/driver/deliveries/${orderId}/pod-photo`, demo.driver.token, { image: photo.toString('base64') })
    t.equal(up.status, 200, up.text.slice(0, 200))
    t.match(up.body.proof.photo, { type: 'image/jpeg', bytes: POD_PHOTO_MAX_BYTES })
    await appliedUpTo(n2, (await primary.readyz()).body.applied_seq as number)
    const rows = rowsIn(n2, orderId)
    t.equal(rows.length, 1, 'the replica holds the photo\'s row')
    t.ok(rows[0]?.bytes.equals(photo), 'with the bytes the driver sent')
    const there = await photoFrom(n2, orderId)
    t.equal(there.status, 200)
    t.equal(there.type, 'image/jpeg')
    t.ok(there.bytes.equals(photo), 'the owner reads it through the replica, byte for byte')
  })

  t.test('a photo answered just before the primary is killed is served by the new primary', async (t) => {
    // Another max-size photo replacing the first; the primary is killed the moment it answered, with
    // no wait for the replica: an acknowledged upload is already in the stream.
    const latest = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(POD_PHOTO_MAX_BYTES - 4)])
    const up = await call(primary, 'POST', `/driver/deliveries/${orderId}/pod-photo`, demo.driver.token, { image: latest.toString('base64') })
    t.equal(up.status, 200, up.text.slice(0, 200))
    // Stopped for good (SIGKILL, not restarted by its supervisor), so the replica must take over.
    await n1.stop()
    nodes.splice(nodes.indexOf(n1), 1)
    const next = await primaryOf([n2])
    t.equal(next.id, 'n2')
    const served = await photoFrom(next, orderId)
    t.equal(served.status, 200, 'not a 404 for a photo the driver was told was saved')
    t.equal(served.type, 'image/jpeg')
    t.ok(served.bytes.equals(latest), 'byte for byte')
    t.same(rowsIn(next, orderId).map((r) => r.bytes.equals(latest)), [true], 'the replaced photo\'s row is gone on this node too')
    const listed = await call(next, 'GET', `/restaurants/${storeId}/deliveries`, demo.owner.token)
    t.match(listed.body.data.find((x: { id: number }) => x.id === orderId)?.delivery.proof.photo, { type: 'image/jpeg', bytes: POD_PHOTO_MAX_BYTES })
    // The new primary takes a replacement: the old photo's row goes with the write that replaces it.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64')
    const again = await call(next, 'POST', `/driver/deliveries/${orderId}/pod-photo`, demo.driver.token, { image: png.toString('base64') })
    t.equal(again.status, 200, again.text.slice(0, 200))
    t.ok((await photoFrom(next, orderId)).bytes.equals(png))
    t.equal(rowsIn(next, orderId).length, 1, 'one photo row for the order')
  })
}
