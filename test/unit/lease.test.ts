/**
 * The primary's lease (src/cluster/lease.ts; docs/cluster.md "Lease and fencing") against a stand-in
 * of the JetStream KV bucket: a lease that ran out may yet be proven by a renewal — the one on its way,
 * or one sent at once when the event loop was held past the renewal timer — and only while its answer
 * can still count; one that comes too late, or a key another node took, loses it.
 */
import t, { type Test } from 'tap'
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
    /** While set, updates are answered only at `release()`. */
    holding: false,
    held: [] as Array<() => void>,
    release() { kv.holding = false; for (const answer of kv.held.splice(0)) answer() },
    async create(_key: string, v: Uint8Array) {
      if (value) throw new Error('wrong last sequence: key exists')
      value = v
      return ++revision
    },
    update(_key: string, v: Uint8Array, last: number): Promise<number> {
      kv.updates++
      if (kv.hang) return new Promise<number>(() => {})
      return new Promise<number>((resolve, reject) => {
        const answer = () => {
          if (last !== revision) return reject(new Error('wrong last sequence'))
          value = v
          resolve(++revision)
        }
        if (kv.holding) kv.held.push(answer)
        else setTimeout(answer, kv.delayMs)
      })
    },
    async get() {
      const v = value
      return v ? { operation: 'PUT', revision, string: () => dec.decode(v) } : null
    },
    async delete() { value = null },
    /** Another node's key now (the bucket expired ours and it created its own). */
    steal(holder: { node: string; url: string | null; term: string } = { node: 'other', url: null, term: 'x' }) { value = enc.encode(JSON.stringify(holder)); revision++ },
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

/**
 * A held lease with a renewal sent and answered (successfully) only once the lease ran out: as when
 * the process is paused, or its event loop blocked, with the renewal's answer waiting in the socket.
 * `kv.release()` delivers the answer.
 */
async function heldPastItsLease() {
  const kv = fakeKv()
  const l = lease(kv, 300)
  await l.acquire()
  kv.holding = true
  const stale = l.renewNow()
  await until(() => !l.valid(), 5000, 'the lease to run out')
  return { kv, l, stale }
}

/** keep() running on `l` until the test ends; the reasons it declared the lease lost. */
function keeping(t: Test, l: Lease): string[] {
  // The deadlines' timers do not hold the process open (a server does): this interval does.
  const alive = setInterval(() => {}, 1000)
  const lost: string[] = []
  l.keep((why) => lost.push(why))
  t.teardown(() => { clearInterval(alive); l.stop() })
  return lost
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
  t.equal(a, b, 'one proof, shared by both callers')
  t.same(await Promise.all([a, b]), [true, true])
  t.equal(kv.updates, 1, 'one update for both')
})

t.test('an answer that would come too late counts as none: the renewal settles false, and keep() declares the lease lost without waiting for it', async (t) => {
  const kv = fakeKv()
  const l = lease(kv, 300)
  await l.acquire()
  kv.hang = true
  const lost = keeping(t, l)
  // keep() sends its renewal after a third of the lease; the update is never answered.
  await until(() => kv.updates > 0, 5000, 'keep() to send a renewal')
  t.notOk(await l.renewal(), 'waiting on the unanswered renewal settles false once it can no longer count')
  await until(() => lost.length > 0, 5000, 'the lease declared lost while the request is still unanswered')
  t.same(lost, ['the lease ran out before it could be renewed'])
  t.notOk(l.valid())
})

t.test('a renewal that was on its way while the process was held cannot count: one more is sent in its place', async (t) => {
  const { kv, l, stale } = await heldPastItsLease()
  const proving = l.renewal()
  await sleep(5)
  t.equal(kv.updates, 1, 'nothing more is sent while the late one is unsettled')
  kv.release()
  t.equal(await proving, true, 'proven by the renewal sent after it')
  t.equal(await stale, true, 'the late one had succeeded too, too late to count')
  t.equal(kv.updates, 2)
  t.ok(l.valid())
})

t.test('a late renewal refused: the key is another node\'s, nothing more is sent', async (t) => {
  const { kv, l } = await heldPastItsLease()
  kv.steal()
  const proving = l.renewal()
  kv.release()
  t.equal(await proving, false, 'not proven')
  t.equal(kv.updates, 1, 'no second renewal for a lease another node holds')
  t.equal(l.renewal(), null, 'lost')
})

t.test('a late renewal still unanswered after a third of a lease: not proven, and keep() declares the lease lost', async (t) => {
  const kv = fakeKv()
  const l = lease(kv, 300)
  await l.acquire()
  kv.holding = true
  const lost = keeping(t, l)
  await until(() => kv.updates > 0, 5000, 'keep() to send a renewal')
  await until(() => !l.valid(), 5000, 'the lease to run out')
  t.equal(await l.renewal(), false, 'nothing proved it')
  await until(() => lost.length > 0, 5000, 'the lease declared lost')
  t.same(lost, ['the lease ran out before it could be renewed'])
  t.equal(kv.updates, 1, 'the second chance never came: the first one never settled')
})

t.test('a renewal whose update landed with its answer lost is recognised only as this process\'s own write', async (t) => {
  const kv = fakeKv()
  const l = lease(kv, 1000)
  await l.acquire()
  // Another process started under the same NODE_ID (another term) wrote the key meanwhile.
  kv.steal({ node: 'n1', url: 'http://n1:8080', term: 'another-process' })
  t.equal(await l.renewNow(), false, 'refused: the same node name, another process')
  t.equal(l.renewal(), null)
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
