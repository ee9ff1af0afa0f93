/**
 * Guest reads off the event loop (docs/operations.md "Guests and segments", "Off the event loop";
 * src/storage/guests-reader.ts): on a file database the guest list, segments and detail run in one
 * worker thread with its own read-only connection, so the server answers while one is computed.
 *
 * No timing: the worker is made "slow" by the reader's `hold` hook, which blocks the worker thread on
 * a shared flag until the test releases it; every read sent meanwhile is provably still in flight.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, request, type Res } from './helpers/server.ts'
import { spawnServer } from './helpers/process.ts'
import { createAccount, createCustomer, createStore, isError } from './helpers/fixtures.ts'
import { openDb } from '../src/storage/db.ts'
import { MAX_IN_WORKER, RETRY_AFTER_S } from '../src/storage/guests-reader.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const reader = s.app.svc.guests
const a = createAccount(db)
const store = createStore(db, a.ownerId).id
const ada = createCustomer(db, store, { phone: '+15557770001' })
const guestsUrl = `/restaurants/${store}/guests`

/** Resolves once `n` guest reads are in the worker (they are sent over HTTP, so they arrive a little later). */
async function inWorker(n: number): Promise<void> {
  const bound = Date.now() + 20_000
  while (reader.inFlight() < n) {
    if (Date.now() > bound) throw new Error(`${reader.inFlight()} guest reads reached the worker, expected ${n}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

t.test('a file database runs guest reads in the worker', async (t) => {
  t.equal(reader.mode, 'worker')
  const r = await s.req('GET', guestsUrl, { token: a.token })
  t.equal(r.status, 200, r.text)
  t.same(r.body.data.map((g: { id: string }) => g.id), [`c${ada.id}`], 'the worker sees rows the main connection committed')
})

t.test('the server answers while a guest read is in flight in the worker', async (t) => {
  const release = await reader.hold()
  let settled = false
  const slow = s.req('GET', `${guestsUrl}/segments`, { token: a.token }).finally(() => { settled = true })
  await inWorker(1)
  const health = await request(`${s.site}/healthz`, 'GET')
  t.equal(health.status, 200, '/healthz answers')
  const other = await s.req('GET', `/restaurants/${store}`, { token: a.token })
  t.equal(other.status, 200, 'an ordinary API read answers')
  // A write committed now is visible to the read that starts after it (WAL, same file).
  const bob = createCustomer(db, store, { phone: '+15557770002' })
  t.equal(settled, false, 'the guest read is still held in the worker')
  release()
  const r = await slow
  t.equal(r.status, 200, r.text)
  t.equal(r.body.guests, 2, 'the read ran after the release and saw the committed write')
  const detail = await s.req('GET', `${guestsUrl}/c${bob.id}`, { token: a.token })
  t.equal(detail.status, 200, detail.text)
  t.equal(detail.body.phone, '+15557770002')
})

t.test(`more than ${MAX_IN_WORKER} guest reads at once: 503 unavailable with Retry-After, nothing queued without bound`, async (t) => {
  const release = await reader.hold()
  const queued: Promise<Res>[] = []
  for (let i = 0; i < MAX_IN_WORKER; i++) queued.push(s.req('GET', `${guestsUrl}?page=${i + 1}`, { token: a.token }))
  await inWorker(MAX_IN_WORKER)
  const refused = await s.req('GET', guestsUrl, { token: a.token })
  isError(t, refused, 503, 'unavailable', 'one read too many')
  t.equal(refused.headers.get('retry-after'), String(RETRY_AFTER_S))
  release()
  const done = await Promise.all(queued)
  t.same(done.map((r) => r.status), done.map(() => 200), 'the queued reads are all answered')
  t.equal(reader.inFlight(), 0)
  t.equal((await s.req('GET', guestsUrl, { token: a.token })).status, 200, 'accepted again once the queue drained')
})

t.test('a worker that dies: the reads it held answer 503, the next read starts a new worker', async (t) => {
  const clock = { newSince: '', recentSince: '', lapsedBefore: '' }
  const rules = { regularVisits: 3, vipPercent: 10, lapsedMinVisits: 2, noShows: 2 }
  const crashed = reader.crash()
  // Posted after the crash message, to the same thread: it dies before reading it.
  const lost = reader.read({ kind: 'segments', storeId: store, params: { clock, rules } })
  await t.rejects(lost, { code: 'unavailable', status: 503, headers: { 'Retry-After': String(RETRY_AFTER_S) } })
  await crashed
  const r = await s.req('GET', `${guestsUrl}/segments`, { token: a.token })
  t.equal(r.status, 200, r.text)
  t.equal(r.body.guests, 2, 'a new worker answers')
  t.equal(reader.mode, 'worker')
})

t.test('the server run as `npm start` does (node --import tsx src/main.ts) loads the worker too', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'guests-worker-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const dbPath = join(dir, 'child.db')
  const seed = openDb(dbPath)
  const owner = createAccount(seed)
  const childStore = createStore(seed, owner.ownerId).id
  const cust = createCustomer(seed, childStore)
  seed.close()
  const child = await spawnServer({ DB_PATH: dbPath, DEMO_SEED: '0' })
  t.teardown(() => child.kill())
  const r = await request(`${child.base}/restaurants/${childStore}/guests`, 'GET', { token: owner.token })
  t.equal(r.status, 200, `${r.text}\n${child.stderr()}`)
  t.same(r.body.data?.map((g: { id: string }) => g.id), [`c${cust.id}`])
  t.equal(await child.kill('SIGTERM'), 0, 'stops cleanly with the worker running')
})

t.test('in-memory databases run guest reads inline; closing ends the worker', async (t) => {
  const { createGuestReader } = await import('../src/storage/guests-reader.ts')
  const mem = openDb(':memory:')
  t.teardown(() => mem.close())
  const inline = createGuestReader(mem, { log: s.app.svc.log })
  t.equal(inline.mode, 'inline')
  const clock = { newSince: '', recentSince: '', lapsedBefore: '' }
  const rules = { regularVisits: 3, vipPercent: 10, lapsedMinVisits: 2, noShows: 2 }
  t.same(await inline.read({ kind: 'segments', storeId: 1, params: { clock, rules } }), { guests: 0, counts: { new: 0, regular: 0, vip: 0, lapsed: 0, no_show: 0 } })

  const own = createGuestReader(db, { log: s.app.svc.log })
  t.equal(own.mode, 'worker')
  t.same((await own.read({ kind: 'segments', storeId: store, params: { clock, rules } })).guests, 2)
  await own.close()
  await t.rejects(own.read({ kind: 'segments', storeId: store, params: { clock, rules } }), { code: 'unavailable' }, 'refused after close')
})
