/** Registers every socket kind of this feature on the uWS app (before the catch-all HTTP handler). */
import type { TemplatedApp } from 'uWebSockets.js'
import type { Services } from '../services.ts'
import type { Realtime } from './realtime.ts'
import { mountTrackSocket } from './track.ts'
import { mountDriverSocket } from './driver.ts'
import { mountDispatchSocket } from './dispatch.ts'
import { mountOrdersSocket } from './orders.ts'

export function mountDeliverySockets(app: TemplatedApp, svc: Services, rt: Realtime) {
  const unsubscribe = rt.attach(svc)
  mountTrackSocket(app, svc, rt)
  const driver = mountDriverSocket(app, svc, rt)
  mountDispatchSocket(app, svc, rt)
  mountOrdersSocket(app, svc, rt)
  return { locationStats: driver.stats, close: unsubscribe }
}
