/**
 * Crash safety of the delivery path (ARCHITECTURE 3): a location or status acknowledged before a
 * kill -9 is there after the restart. The server runs as a child process and is killed with SIGKILL
 * the moment the acknowledgement arrives.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDb } from '../src/storage/db.ts'
import { createFleet } from './helpers/delivery.ts'
import { WsClient } from './helpers/ws-client.ts'
import { request } from './helpers/server.ts'
import { startChildServer, type ChildServer } from './helpers/child-server.ts'

const dir = mkdtempSync(join(tmpdir(), 'dispatch-drivers-crash-'))
const dbPath = join(dir, 'crash.db')
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const setup = openDb(dbPath)
const f = createFleet(setup)
setup.close()
const d = f.drivers[0]!

// The position stream below is a burst of up to 2,000 frames: a load, not a flood to refuse (docs/limits.md).
const ENV = { DB_PATH: dbPath, WS_MESSAGE_RATE: '0' }
let server: ChildServer | null = null
t.teardown(() => server?.kill9())

t.test('acknowledged status and locations survive kill -9', async (t) => {
  server = await startChildServer(ENV)
  const api = (method: string, path: string, token: string, body?: unknown) => request(`${server!.base}${path}`, method, { token, body })
  const created = await api('POST', `/restaurants/${f.storeId}/orders`, f.ownerToken, { type: 'delivery', address: '9 Crash Rd', items: [{ item_id: f.itemId, quantity: 1 }] })
  t.equal(created.status, 200)
  const o = created.body
  t.equal((await api('POST', `/restaurants/${f.storeId}/orders/${o.id}/assign`, f.ownerToken, { driver_id: d.id })).status, 200)
  t.equal((await api('PUT', `/driver/deliveries/${o.id}/status`, d.token, { delivery_status: 'picked_up' })).status, 200)

  // A stream of positions; kill the server the moment an acknowledgement arrives mid-stream.
  const sock = await WsClient.open(`${server.ws}/ws/driver`, { token: d.token })
  await sock.next((x) => x.type === 'hello')
  let acked = -1
  const killed = sock.next((x) => x.type === 'ack' && x.seq >= 200, 60_000).then(async (x) => { acked = x.seq; await server!.kill9() })
  for (let i = 0; i < 2000 && acked < 0; i++) {
    sock.send({ type: 'location', lat: 45 + i / 100_000, lng: 7, seq: i })
    if (i % 25 === 24) await new Promise((r) => setTimeout(r, 1))
  }
  await killed
  t.ok(acked >= 200, `killed right after the ack of position ${acked}`)

  server = await startChildServer(ENV)
  const view = (await request(`${server.base}/track/${o.track_token}`, 'GET')).body
  t.equal(view.delivery_status, 'picked_up', 'the acknowledged status survived')
  t.ok(view.driver.lat >= 45 + acked / 100_000 - 1e-9, `the acknowledged position survived (stored ${view.driver.lat}, acked ${45 + acked / 100_000})`)

  // HTTP: answer, then kill at once.
  const loc = await request(`${server.base}/driver/location`, 'PUT', { token: d.token, body: { lat: 46.25, lng: 7.5 } })
  t.equal(loc.status, 200)
  const st = await request(`${server.base}/driver/deliveries/${o.id}/status`, 'PUT', { token: d.token, body: { delivery_status: 'out_for_delivery' } })
  t.equal(st.status, 200)
  await server.kill9()
  server = await startChildServer(ENV)
  const after = (await request(`${server.base}/track/${o.track_token}`, 'GET')).body
  t.match(after, { delivery_status: 'out_for_delivery', driver: { lat: 46.25, lng: 7.5 } })
  const events = await request(`${server.base}/driver/deliveries/${o.id}`, 'GET', { token: d.token })
  t.match(events.body.timeline, { picked_up_at: String, out_for_delivery_at: String })
  await server.kill9()
  server = null
})
