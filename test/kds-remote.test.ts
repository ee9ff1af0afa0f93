/**
 * A kitchen screen's bumps when the screen is served by a cluster replica (docs/cluster.md "Sockets
 * on any node"), the parts without NATS: on the primary, `kdsRemoteStep` resolves the screen's
 * credential again and admits it before running the same frame binding as its own screens (a
 * credential it no longer knows, or one without `kds`, is refused, and nothing is written); on the
 * replica, a bump the primary does not answer is answered the error a primary gives while it is
 * unavailable, never an ack. The whole road over NATS: test/cluster-feeds.test.ts.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createStaff, postOrder } from './helpers/fixtures.ts'
import { kdsRemoteStep } from '../src/ws/kds.ts'
import { kdsOnReplica } from '../src/ws/replica-feeds.ts'
import type { FrameLink } from '../src/cluster/frame-link.ts'
import type { Hub } from '../src/ws/hub.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const manager = createStaff(db, acct.storeId, { role: 'manager' })
const cashier = createStaff(db, acct.storeId, { role: 'cashier' })
const placed = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.burger.id, quantity: 1 }] })
const lineId = (placed.body as { items: Array<{ id: number }> }).items[0]!.id
const state = () => db.prepare('SELECT kds_state FROM order_lines WHERE id = ?').pluck().get(lineId)

t.test('on the primary: the credential is resolved and admitted again, then the frame runs as a screen\'s own', async (t) => {
  t.match(await kdsRemoteStep(s.app.svc, { bearer: 'stf_not-a-token', frame: { type: 'bump', item_id: lineId, seq: 1 } }), { type: 'error', code: 'unauthenticated', seq: 1 }, 'an unknown credential: refused')
  t.match(await kdsRemoteStep(s.app.svc, { frame: { type: 'bump', item_id: lineId, seq: 2 } }), { type: 'error', code: 'unauthenticated', seq: 2 }, 'no credential: refused')
  t.match(await kdsRemoteStep(s.app.svc, { bearer: cashier.token, frame: { type: 'bump', item_id: lineId, seq: 3 } }), { type: 'error', code: 'forbidden', seq: 3 }, 'a member without `kds`: refused')
  t.equal(state(), 'queued', 'nothing written')
  t.match(await kdsRemoteStep(s.app.svc, { bearer: manager.token, frame: { type: 'shout', seq: 4 } }), { type: 'error', code: 'unknown_type' }, 'a frame that is not a kitchen step')
  t.match(await kdsRemoteStep(s.app.svc, { bearer: manager.token, frame: { type: 'bump', item_id: lineId, seq: 5 } }), { type: 'ack', seq: 5, item_id: lineId, kds_state: 'preparing' }, 'a screen\'s credential: acknowledged')
  t.equal(state(), 'preparing', 'after its commit')
})

t.test('on a replica: a bump the primary does not answer gets the unavailable error, never an ack', async (t) => {
  const sent: unknown[] = []
  const ws = {
    getUserData: () => ({ closed: false, format: 'json', session: { bearer: manager.token } }),
    getBufferedAmount: () => 0,
    send: (m: string) => { sent.push(JSON.parse(m)); return 1 },
  }
  const hub = { send: (w: typeof ws, msg: unknown) => w.send(JSON.stringify(msg)) } as unknown as Hub
  const silent = { nc: { request: () => Promise.reject(new Error('TIMEOUT')) }, cluster: 'c', node: 'n2' } as unknown as FrameLink
  const onReplica = kdsOnReplica().messages(hub, () => silent, () => {})
  await onReplica(ws as never, new TextEncoder().encode(JSON.stringify({ type: 'bump', item_id: lineId, seq: 9 })).buffer as ArrayBuffer, false)
  t.match(sent, [{ type: 'error', code: 'unavailable', seq: 9 }], 'the primary did not answer: unavailable')
  await kdsOnReplica().messages(hub, () => null, () => {})(ws as never, new TextEncoder().encode(JSON.stringify({ type: 'recall', item_id: lineId, seq: 10 })).buffer as ArrayBuffer, false)
  t.match(sent[1], { type: 'error', code: 'unavailable', seq: 10 }, 'no NATS connection: the same')
  t.equal(state(), 'preparing', 'nothing written')
})
