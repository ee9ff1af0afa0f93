/**
 * The primary's lease (src/cluster/lease.ts; docs/cluster.md "Lease and fencing") against a stand-in
 * of the JetStream KV bucket: a lease that ran out may yet be proven by a renewal — the one on its way,
 * or one sent at once when the event loop was held past the renewal timer — and only while its answer
 * can still count; one that comes too late, or a key another node took, loses it.
 */
import t from 'tap'
import pino from 'pino'
import type { KV } from '@nats-io/kv'
import { Lease } from '../../src/cluster/lease.ts'

const enc = new TextEncoder()
const dec = new TextDecoder()

/** The bucket's one key: revision-checked updates, as JetStream does them. */
function fakeKv() {
  let revision = 0
  let value: Uint8Array | null = null
  const kv = {
    updates: 0,
    /** Updates sent while set are never answered (a NATS that holds the request). */
    hang: false,
    /** Updates are answered after this many ms. */
    delayMs: 0,
    async create(_key: string, v: Uint8Array) {
      if (value) throw new Error('wrong last sequence: key exists')
      value = v
      return ++revision
    },
    update(_key: string, v: Uint8Array, last: number): Promise<number> {
      kv.updates++
      if (kv.hang) return new Promise<number>(() => {})
      return new Promise<number>((resolve, reject) => setTimeout(() => {
        if (last !== revision) return reject(new Error('wrong last sequence'))
        value = v
        resolve(++revision)
      }, kv.delayMs))
    },
    async get() {
      const v = value
      return v ? { operation: 'PUT', revision, string: () => dec.decode(v) } : null
    },
    async delete() { value = null },
    /** Another node's key now (the bucket expired ours and it created its own). */
    steal() { value = enc.encode(JSON.stringify({ node: 'other', url: null, term: 'x' })); revision++ },
  }
  return kv
}

const lease = (kv: ReturnType<typeof fakeKv>, ttlMs: number) => new Lease(kv as unknown as KV, 'n1', 'http://n1:8080', ttlMs, pino({ level: 'silent' }))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Resolves once `check` holds; fails the test after `ms` (a bound, not a timing assertion). */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`)
    await sleep(5)
  }
}

t.test('a lease that ran out with no renewal on its way is proven by one sent at once', async (t) => {
  const kv = fakeKv()
  const l = lease(kv, 100)
  t.ok(await l.acquire())
  await sleep(120)
  t.notOk(l.valid(), 'ran out (the renewal timer never ran here, as when the event loop was held)')
  const renewal = l.renewal()
  t.ok(renewal, 'a renewal may still prove it')
  t.equal(kv.updates, 1, 'sent now')
  t.equal(await renewal, true, 'the key was still this node\'s at its revision')
  t.ok(l.valid(), 'held again, counted from when the renewal was sent')
})

t.test('a renewal on its way is joined, not sent twice', async (t) => {
  const kv = fakeKv()
  kv.delayMs = 30
  const l = lease(kv, 1000)
  await l.acquire()
  const a = l.renewal()
  const b = l.renewal()
  t.same(await Promise.all([a, b]), [true, true])
  t.equal(kv.updates, 1, 'one update for both')
})

t.test('an answer that would come too late counts as none: the renewal settles false, and keep() declares the lease lost without waiting for it', async (t) => {
  const kv = fakeKv()
  const l = lease(kv, 300)
  await l.acquire()
  kv.hang = true
  // The deadline's timer does not hold the process open (a server does): this test's interval does.
  const alive = setInterval(() => {}, 1000)
  t.teardown(() => clearInterval(alive))
  const lost: string[] = []
  l.keep((why) => lost.push(why))
  t.teardown(() => l.stop())
  // keep() sends its renewal after a third of the lease; the update is never answered.
  await until(() => kv.updates > 0, 5000, 'keep() to send a renewal')
  t.notOk(await l.renewal(), 'waiting on the unanswered renewal settles false once it can no longer count')
  await until(() => lost.length > 0, 5000, 'the lease declared lost while the request is still unanswered')
  t.same(lost, ['the lease ran out before it could be renewed'])
  t.notOk(l.valid())
})

t.test('a renewal that was on its way while the process was held cannot count: one more is sent in its place', async (t) => {
  const kv = fakeKv()
  const l = lease(kv, 1000)
  await l.acquire()
  // Sent now, answered (successfully) only after 0.9 of a lease: as when the process is paused, or its
  // event loop blocked, with the renewal's answer waiting in the socket.
  kv.delayMs = 1000
  const stale = l.renewNow()
  await sleep(950)
  kv.delayMs = 0
  t.notOk(l.valid(), 'ran out while the renewal was on its way')
  t.equal(await l.renewal(), true, 'proven by the renewal sent after it')
  t.equal(await stale, true, 'the late one had succeeded too, too late to count')
  t.equal(kv.updates, 2)
  t.ok(l.valid())
})

t.test('a key another node took: the renewal is refused, and no renewal can prove the lease any more', async (t) => {
  const kv = fakeKv()
  const l = lease(kv, 1000)
  await l.acquire()
  kv.steal()
  t.equal(await l.renewNow(), false, 'refused: the revision is not this node\'s')
  t.notOk(l.valid())
  t.equal(l.renewal(), null, 'lost: nothing to wait for')
})
