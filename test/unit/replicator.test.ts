/**
 * The primary's replicator (src/cluster/replicator.ts) against a stream that checks an expected last
 * sequence by number only, as JetStream does: one message in flight, so a deposed primary's second
 * message can never follow its successor's epoch; a batch larger than a NATS message goes as
 * consecutive parts that a replica puts back together; `barrier` waits for what was captured before.
 */
import t from 'tap'
import pino from 'pino'
import { openDb } from '../../src/storage/db.ts'
import { ChangeApplier, ensureChangeTables, installCapture } from '../../src/storage/changes.ts'
import { Replicator, type Publish } from '../../src/cluster/replicator.ts'
import { decodeMessage } from '../../src/cluster/batch.ts'
import { readApplied } from '../../src/cluster/state.ts'
import { JetStreamApiError } from '@nats-io/jetstream'

/** A stream: stores a message when its expected last sequence is the stream's last, else refuses. */
function fakeStream() {
  const stored: Array<{ data: Uint8Array; by: string }> = []
  let inFlight = 0
  let maxInFlight = 0
  const held: Array<() => void> = []
  let holding = false
  const publish = (by: string): Publish => (data, { expectedLastSeq }) => {
    inFlight++
    maxInFlight = Math.max(maxInFlight, inFlight)
    return new Promise((resolve, reject) => {
      const settle = () => {
        inFlight--
        if (expectedLastSeq !== stored.length) return reject(new JetStreamApiError({ code: 400, err_code: 10071, description: `wrong last sequence: ${stored.length}` }))
        stored.push({ data, by })
        resolve({ seq: stored.length, duplicate: false })
      }
      if (holding) held.push(settle)
      else setImmediate(settle)
    })
  }
  return {
    stored, publish,
    get maxInFlight() { return maxInFlight },
    hold() { holding = true },
    release() { holding = false; for (const h of held.splice(0)) setImmediate(h) },
  }
}

/** The lease as the replicator sees it: held or not, and a renewal on its way or not. */
interface LeaseState { valid: boolean; renewal: Promise<boolean> | null }

function primary(stream: ReturnType<typeof fakeStream>, name: string, lastSeq: number, maxPayload = 1024 * 1024) {
  const db = openDb(':memory:')
  ensureChangeTables(db)
  const fenced: string[] = []
  const lease: LeaseState = { valid: true, renewal: null }
  const r = new Replicator({
    db, tables: installCapture(db), publish: stream.publish(name), nodeId: name, schema: 1, lastSeq,
    leaseValid: () => lease.valid, leaseRenewal: () => lease.renewal, leaseMs: 3000, maxPayload, onFenced: (why) => fenced.push(why), log: pino({ level: 'silent' }),
  })
  /** One committed transaction: a row written, captured, shipped. */
  const write = (title: string) => {
    let out: ReturnType<Replicator['capture']> = null
    db.transaction(() => {
      db.prepare("INSERT INTO owners (email, name, created_at) VALUES (?, 'x', 'now')").run(`${title}-${Math.random()}@x`)
      out = r.capture(db)
    })()
    return r.ship(out!)
  }
  return { db, r, fenced, write, lease }
}

/** A renewal on its way, answered when the test says. */
function pendingRenewal(lease: LeaseState) {
  let answer!: (ok: boolean) => void
  lease.renewal = new Promise<boolean>((resolve) => { answer = resolve })
  return (ok: boolean) => { lease.valid = ok; lease.renewal = null; answer(ok) }
}

t.test('messages go one at a time, in order', async (t) => {
  const stream = fakeStream()
  const a = primary(stream, 'a', 0)
  await Promise.all(Array.from({ length: 20 }, (_, i) => a.write(`o${i}`)))
  t.equal(stream.stored.length, 20)
  t.equal(stream.maxInFlight, 1, 'never two publishes in flight')
  const counts = stream.stored.map((m) => Number(decodeMessage(m.data).id.split(':').pop()))
  t.same(counts, Array.from({ length: 20 }, (_, i) => i + 1), 'in capture order')
  t.equal(readApplied(a.db).seq, 20, 'the last sequence is recorded with the rows')
})

t.test('a deposed primary stores nothing after its successor\'s epoch, however many messages it has queued', async (t) => {
  const stream = fakeStream()
  const a = primary(stream, 'a', 0)
  await a.write('before')
  // A pauses with writes queued; B appends its epoch meanwhile; A resumes.
  stream.hold()
  const queued = [a.write('late-1'), a.write('late-2'), a.write('late-3')].map((p) => p.then(() => 'ok', () => 'refused'))
  stream.stored.push({ data: new Uint8Array([0]), by: 'b-epoch' })
  stream.release()
  t.same(await Promise.all(queued), ['refused', 'refused', 'refused'], 'none of its writes is acknowledged')
  t.same(stream.stored.map((m) => m.by), ['a', 'b-epoch'], 'nothing of A after B\'s epoch')
  t.equal(a.fenced.length, 1, 'A is fenced')
  t.throws(() => a.r.admit(), 'and refuses new writes')
})

t.test('a batch larger than a NATS message goes as consecutive parts, put back together whole', async (t) => {
  const stream = fakeStream()
  const a = primary(stream, 'a', 0, 32 * 1024)
  let out: ReturnType<Replicator['capture']> = null
  a.db.transaction(() => {
    for (let i = 0; i < 200; i++) a.db.prepare("INSERT INTO owners (email, name, created_at) VALUES (?, ?, 'now')").run(`big${i}@x`, 'n'.repeat(1000))
    out = a.r.capture(a.db)
  })()
  t.ok(out!.parts.length > 5, `${out!.parts.length} parts`)
  await a.r.ship(out!)
  t.equal(stream.stored.length, out!.parts.length)
  t.ok(stream.stored.every((m) => m.data.length <= 32 * 1024), 'each within the message size')
  t.equal(readApplied(a.db).seq, out!.parts.length, 'the recorded sequence is the last part\'s')
  const parts = stream.stored.map((m) => decodeMessage(m.data))
  t.ok(parts.every((p) => p.k === 'part' && p.id === parts[0]!.id), 'parts of one batch, under its id')
  const whole = decodeMessage(Buffer.concat(parts.map((p) => (p as { bytes: Uint8Array }).bytes)))
  t.equal(whole.k, 'batch')
  const replica = openDb(':memory:')
  replica.pragma('foreign_keys = OFF')
  if (whole.k === 'batch') new ChangeApplier(replica).apply(whole.set)
  t.equal(replica.prepare("SELECT COUNT(*) FROM owners WHERE email LIKE 'big%'").pluck().get(), 200, 'every row arrives')
})

t.test('barrier waits for what was captured before it', async (t) => {
  const stream = fakeStream()
  const a = primary(stream, 'a', 0)
  stream.hold()
  const first = a.write('one')
  let passed = false
  const barrier = a.r.barrier().then(() => { passed = true })
  await new Promise((r) => setTimeout(r, 20))
  t.notOk(passed, 'not before the stream holds the earlier write')
  stream.release()
  await Promise.all([first, barrier])
  t.ok(passed)
  await a.r.barrier()
  t.pass('nothing queued: at once')
})

t.test('a lapsed lease that no renewal can prove any more (lost) fences the primary at its next write', async (t) => {
  const a = primary(fakeStream(), 'a', 0)
  a.lease.valid = false
  t.throws(() => a.write('late'), { status: 503, code: 'unavailable' }, 'the write is refused (and rolled back)')
  t.match(a.fenced, ['the lease lapsed'], 'and the node fenced')
})

t.test('a lapsed lease with a renewal on its way: writes get a 503 and the node stays primary; the renewal decides', async (t) => {
  const stream = fakeStream()
  const a = primary(stream, 'a', 0)
  await a.write('before')
  a.lease.valid = false
  const answer = pendingRenewal(a.lease)
  t.throws(() => a.db.transaction(() => {
    a.db.prepare("INSERT INTO owners (email, name, created_at) VALUES ('during@x', 'x', 'now')").run()
    a.r.capture(a.db)
  })(), { status: 503, code: 'unavailable', headers: { 'Retry-After': '1' } }, 'a write meanwhile is refused with 503')
  t.equal(a.db.prepare("SELECT COUNT(*) FROM owners WHERE email = 'during@x'").pluck().get(), 0, 'and rolled back')
  t.same(a.fenced, [], 'not fenced: a slow renewal is no failover')
  answer(true)
  await a.write('after')
  t.equal(stream.stored.length, 2, 'writes go on once the renewal proved the lease')

  a.lease.valid = false
  const refused = pendingRenewal(a.lease)
  t.throws(() => a.r.capture(a.db), { status: 503, code: 'unavailable' }, 'refused while the second renewal is on its way')
  refused(false)
  t.throws(() => a.write('lost'), { status: 503, code: 'unavailable' }, 'the renewal failed: refused')
  t.match(a.fenced, ['the lease lapsed'], 'a renewal that failed: fenced at the next write (Lease.keep fences it too)')
})

t.test('a write the stream confirms while the lease is being renewed is acknowledged only once the renewal proves it', async (t) => {
  const stream = fakeStream()
  const a = primary(stream, 'a', 0)
  stream.hold()
  let settled: string | null = null
  const first = a.write('one').then(() => { settled = 'ok' }, () => { settled = 'refused' })
  a.lease.valid = false
  const answer = pendingRenewal(a.lease)
  stream.release()
  await new Promise((r) => setTimeout(r, 20))
  t.equal(stream.stored.length, 1, 'the stream holds it')
  t.equal(settled, null, 'not acknowledged while the renewal is on its way')
  answer(true)
  await first
  t.equal(settled, 'ok', 'acknowledged once the lease is proven')
  t.same(a.fenced, [])

  stream.hold()
  const second = a.write('two').then(() => 'ok', () => 'refused')
  a.lease.valid = false
  const refused = pendingRenewal(a.lease)
  stream.release()
  await new Promise((r) => setTimeout(r, 20))
  refused(false)
  t.equal(await second, 'refused', 'a renewal that failed: never acknowledged')
  t.match(a.fenced, ['the lease lapsed before the stream confirmed a write'])
})

t.test('while a confirmed write waits for the renewal nothing more is published, and a fence meanwhile refuses every waiting write', async (t) => {
  const stream = fakeStream()
  const a = primary(stream, 'a', 0)
  stream.hold()
  const first = a.write('one').then(() => 'ok', () => 'refused')
  const second = a.write('two').then(() => 'ok', () => 'refused')
  a.lease.valid = false
  pendingRenewal(a.lease)
  stream.release()
  await new Promise((r) => setTimeout(r, 20))
  t.equal(stream.stored.length, 1, 'the second write is not published while the first waits')
  a.r.fence('lease lost: another node holds the lease')
  t.same(await Promise.all([first, second]), ['refused', 'refused'], 'neither is acknowledged')
  await new Promise((r) => setTimeout(r, 20))
  t.equal(stream.stored.length, 1, 'and nothing more reaches the stream')
})
