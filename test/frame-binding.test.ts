/**
 * Socket frames are bindings of operations (issue 33 item 1, src/ws/frame.ts): a driver's `location`
 * frame is admitted by PUT /driver/location's operation (its policy and input) and a kitchen screen's
 * `bump`/`recall` frames run the kitchen operations, so a frame is refused with what the HTTP route
 * answers for the same input.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createFleet } from './helpers/delivery.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { driverFrames } from '../src/ws/driver.ts'
import { kdsFrames } from '../src/ws/kds.ts'
import { reportLocation } from '../src/ops/delivery/driver-app.ts'
import { bumpItem, recallItem } from '../src/ops/orders/kds.ts'

t.test('the frames name the operations of the HTTP routes', async (t) => {
  t.equal(driverFrames.location.op, reportLocation)
  t.equal(kdsFrames.bump.op, bumpItem)
  t.equal(kdsFrames.recall.op, recallItem)
})

t.test('a bad location is refused by the frame as by PUT /driver/location, with the same field errors', async (t) => {
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
  t.teardown(() => s.close())
  const f = createFleet(s.app.svc.db)
  const d = f.addDriver()
  for (const bad of [{ lat: 95, lng: 2 }, { lat: 91, lng: 181 }, { lat: '1', lng: 2 }]) {
    const http = await s.req('PUT', '/driver/location', { token: d.token, body: bad })
    t.equal(http.status, 422)
    const c = await WsClient.open(`${wsBase(s)}/ws/driver`, { token: d.token })
    await c.next((x) => x.type === 'hello')
    c.send({ type: 'location', ...bad, seq: 7 })
    const e = await c.next((x) => x.type === 'error')
    t.match(e, { code: 'validation_failed', seq: 7 })
    t.same(e.errors, http.body.errors, `${JSON.stringify(bad)}: the frame's field errors are the route's`)
    await c.close()
  }
})
