/**
 * The driver actor's shell (src/actors/driver.ts) against fake narrow dependencies: a position is
 * published at once and answered only after it is durable, by reply address (`replyTo`, an ask)
 * or by acknowledgement ticket through the real-time sink (the driver socket) — never through a
 * callback carried in the message (issue 11 item 6: messages are data).
 */
import t from 'tap'
import { driverHandler, type DriverDeps, type DriverMsg, type DriverState, type LocationAck, type LocationSink } from '../../src/actors/driver.ts'
import { Registry, startSystem, stopSystem, type Result } from '../../src/actors/system.ts'
import type { DriverRow } from '../../src/storage/drivers.ts'
import { createLogger } from '../../src/log.ts'

const ROW: DriverRow = {
  id: 7, owner_id: 1, restaurant_id: 2, name: 'D', phone: '+15550100', token_hash: null, lat: null, lng: null,
  location_updated_at: null, on_shift: 1, created_at: '2026-06-01T12:00:00.000+00:00',
}

function fixture(t: { teardown(fn: () => void): void }, opts: { exists?: boolean; persist?: () => Promise<void> } = {}) {
  const published: Array<{ lat: number; visible: readonly number[] }> = []
  const stored: Array<{ driverId: number; ticket: number; result: Result<LocationAck> }> = []
  const persisted: number[] = []
  const ticketed: number[] = []
  let release: () => void = () => {}
  const gate = new Promise<void>((r) => { release = r })
  const deps: DriverDeps = {
    drivers: { byId: () => (opts.exists === false ? undefined : ROW), activeOrders: () => [], lastShift: () => undefined },
    committer: { write: () => Promise.reject(new Error('no durable writes expected')) },
    realtime: {
      driverLocation: (pos, visible) => { published.push({ lat: pos.lat, visible }) },
      driverPresence: () => {}, toDriver: () => {}, connections: () => 0, disconnectDriver: () => {},
      locationStored: (driverId, ticket, result) => { stored.push({ driverId, ticket, result }) },
    },
    log: createLogger('silent'),
  }
  const persist = (_id: number, lat: number) => { persisted.push(lat); return opts.persist ? opts.persist() : gate }
  const locations: LocationSink = {
    persist,
    persistTicket: (id, lat, lng, at, ticket, sink) => { ticketed.push(ticket); persist(id, lat).then(() => sink.stored(ticket, lat, lng, at, null), (err: unknown) => sink.stored(ticket, lat, lng, at, err)) },
  }
  const system = startSystem()
  const reg = new Registry<number, DriverState | null, DriverMsg>(system, 'driver', () => null, (id) => driverHandler(deps, id, locations), deps.log)
  t.teardown(() => { reg.close(); stopSystem(system) })
  return { reg, published, stored, persisted, ticketed, release }
}

const until = async (cond: () => boolean) => { while (!cond()) await new Promise((r) => setImmediate(r)) }

t.test('a ticketed position is published at once and acknowledged through the sink once durable', async (t) => {
  const f = fixture(t)
  f.reg.tell(7, { type: 'location', lat: 1, lng: 2, at: Date.parse('2026-06-01T12:00:00Z'), ticket: 41 })
  await until(() => f.persisted.length === 1)
  t.same(f.published.map((p) => p.lat), [1], 'published before the write')
  t.same(f.stored, [], 'not acknowledged before the position is durable')
  f.release()
  await until(() => f.stored.length === 1)
  t.match(f.stored[0], { driverId: 7, ticket: 41, result: { ok: true, value: { lat: 1, lng: 2, location_updated_at: /^2026-06-01T12:00:00/ } } })
  t.same(f.ticketed, [41], 'through the mailbox too it is answered by ticket, so acks keep the order positions arrived in')
})

t.test('an ask gets the same answer at its reply address', async (t) => {
  const f = fixture(t, { persist: () => Promise.resolve() })
  const ack = await f.reg.ask<LocationAck>(7, (replyTo) => ({ type: 'location', lat: 3, lng: 4, at: Date.now(), replyTo }))
  t.match(ack, { lat: 3, lng: 4 })
  t.same(f.stored, [], 'the sink is only for ticketed positions')
})

t.test('failures travel the same roads: an unknown driver, a failed write', async (t) => {
  const gone = fixture(t, { exists: false })
  gone.reg.tell(7, { type: 'location', lat: 1, lng: 2, at: Date.now(), ticket: 5 })
  await until(() => gone.stored.length === 1)
  t.match(gone.stored[0], { ticket: 5, result: { ok: false, error: { code: 'not_found' } } })
  await t.rejects(gone.reg.ask(7, (replyTo) => ({ type: 'location', lat: 1, lng: 2, at: Date.now(), replyTo })), { code: 'not_found' })

  const broken = fixture(t, { persist: () => Promise.reject(new Error('disk full')) })
  broken.reg.tell(7, { type: 'location', lat: 1, lng: 2, at: Date.now(), ticket: 6 })
  await until(() => broken.stored.length === 1)
  t.match(broken.stored[0], { ticket: 6, result: { ok: false, error: { code: 'internal_error' } } })
})

t.test('tellNow: a loaded, idle actor handles a socket position at once, in the order a tell would', async (t) => {
  const f = fixture(t, { persist: () => Promise.resolve() })
  const at = Date.parse('2026-06-01T12:00:00.042Z')
  f.reg.tellNow(7, { type: 'location', lat: 1, lng: 2, at, ticket: 1 })
  t.same(f.published, [], 'not loaded yet: through the mailbox (the actor loads its state there)')
  await until(() => f.stored.length === 1)
  f.reg.tellNow(7, { type: 'location', lat: 3, lng: 4, at, ticket: 2 })
  t.same(f.published.map((p) => p.lat), [1, 3], 'idle and loaded: published before tellNow returned')
  await until(() => f.stored.length === 2)
  t.match(f.stored[1], { ticket: 2, result: { ok: true, value: { lat: 3, lng: 4, location_updated_at: '2026-06-01T12:00:00.042+00:00' } } })
  t.match(await f.reg.ask(7, (replyTo) => ({ type: 'get', replyTo })), { location: { lat: 3, lng: 4, location_updated_at: '2026-06-01T12:00:00.042+00:00' } },
    'the actor\'s state has the position')

  // A message already queued for the actor goes first: the position waits in the mailbox behind it.
  f.reg.tell(7, { type: 'connection', count: 1 })
  f.reg.tellNow(7, { type: 'location', lat: 5, lng: 6, at, ticket: 3 })
  t.same(f.published.map((p) => p.lat), [1, 3], 'not at once behind a queued message')
  await until(() => f.published.length === 3)
  t.match(await f.reg.ask(7, (replyTo) => ({ type: 'get', replyTo })), { connected: true, location: { lat: 5 } })

  // Asks keep the mailbox road (their reply goes to the reply address).
  const ack = await f.reg.ask<LocationAck>(7, (replyTo) => ({ type: 'location', lat: 7, lng: 8, at, replyTo }))
  t.match(ack, { lat: 7, lng: 8 })
})

t.test('tellNow: a deleted driver still answers 404 through the mailbox', async (t) => {
  const gone = fixture(t, { exists: false })
  gone.reg.tell(7, { type: 'connection', count: 0 })
  await until(() => !gone.reg.mailboxes().queued)
  await new Promise((r) => setImmediate(r))
  gone.reg.tellNow(7, { type: 'location', lat: 1, lng: 2, at: Date.now(), ticket: 9 })
  await until(() => gone.stored.length === 1)
  t.match(gone.stored[0], { ticket: 9, result: { ok: false, error: { code: 'not_found' } } })
  t.same(gone.published, [])
})
