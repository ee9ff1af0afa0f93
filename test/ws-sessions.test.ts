/**
 * The socket credential registry (src/ws/sessions.ts) with stand-in sockets and authenticators:
 * a write by another connection (a new `data_version`) re-checks every open credential, in slices
 * so a big fleet never stalls one event-loop turn; targeted re-checks touch only their subject;
 * expiries close on time; closed sockets are forgotten.
 */
import t from 'tap'
import { SocketSessions, session, subject } from '../src/ws/sessions.ts'
import { CLOSE } from '../src/ws/frames.ts'
import type { LiveSocket } from '../src/ws/socket.ts'
import type { SessionDeps } from '../src/ws/sessions.ts'

const silent = { error() {}, info() {} } as unknown as SessionDeps['log']
/** Wait (turn by turn) until `cond` holds; fail clearly after `ms`. */
async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 2))
  }
}

function fixture(opts: { intervalMs?: number } = {}) {
  const valid = new Set<string>()
  let version = 1
  let lookups = 0
  const resolve = (input: { bearer: string | null }) => {
    lookups++
    return input.bearer && valid.has(input.bearer) ? { kind: 'driver', driverId: Number(input.bearer.split(':')[1]) } : null
  }
  const auth = { driver: resolve, owner: resolve, staff: resolve } as unknown as SessionDeps['auth']
  const db = { pragma: () => version } as unknown as SessionDeps['db']
  const sessions = new SocketSessions()
  const stop = sessions.start({ auth, db, log: silent }, opts.intervalMs ?? 20)
  const behavior = sessions.track<LiveSocket>({ maxMessageBytes: 1, upgrade: () => {}, open: () => {}, close: () => {} })
  const ended: Array<{ id: string; code: number }> = []

  /** A stand-in socket opened with `token` for driver `driverId`. */
  const open = (token: string, driverId: number, expiresAt: string | null = null) => {
    valid.add(token)
    const data: LiveSocket = {
      format: 'json', closed: false, id: `${token}#${ended.length}-${Math.random()}`,
      session: session('driver', token, [subject.driver(driverId)], (p) => (p.kind === 'driver' && p.driverId === driverId ? null : CLOSE.revoked), expiresAt),
    }
    const ws = {
      getUserData: () => data,
      end(code: number) {
        ended.push({ id: data.id, code })
        data.closed = true
        behavior.close!(ws as never, code, new ArrayBuffer(0))
      },
    }
    void behavior.open!(ws as never)
    return data
  }
  return {
    sessions, valid, ended, open, stop,
    bump: () => { version++ },
    get lookups() { return lookups },
  }
}

t.test('a full re-check resolves each distinct credential once, a slice per event-loop turn', async (t) => {
  const f = fixture({ intervalMs: 60_000 })
  t.teardown(f.stop)
  for (let i = 0; i < 600; i++) f.open(`tok:${i}`, i)
  f.open('tok:0', 0) // a second socket with the same token: one lookup for both
  t.equal(f.sessions.size, 601)
  for (let i = 0; i < 600; i++) f.valid.delete(`tok:${i}`)
  const before = f.lookups
  f.sessions.revalidate()
  t.equal(f.lookups - before, 256, 'the first slice runs at once, and only it')
  t.equal(f.ended.length, 257, 'its sockets are closed (both of tok:0)')
  await waitFor(() => f.ended.length === 601)
  t.equal(f.lookups - before, 600, 'one lookup per distinct credential')
  t.ok(f.ended.every((e) => e.code === 4001))
  t.equal(f.sessions.size, 0, 'closed sockets are forgotten')
})

t.test('a write by another connection (a new data_version) starts a full re-check', async (t) => {
  const f = fixture({ intervalMs: 10 })
  t.teardown(f.stop)
  for (let i = 0; i < 300; i++) f.open(`w:${i}`, i)
  f.valid.delete('w:5')
  f.valid.delete('w:299')
  f.bump()
  await waitFor(() => f.ended.length === 2)
  t.same(f.ended.map((e) => e.id.split('#')[0]).sort(), ['w:299', 'w:5'])
  t.equal(f.sessions.size, 298)
})

t.test('nothing is looked up while nobody else writes; a targeted re-check touches only its subject', async (t) => {
  const f = fixture({ intervalMs: 10 })
  t.teardown(f.stop)
  for (let i = 0; i < 50; i++) f.open(`d:${i}`, i)
  const before = f.lookups
  await new Promise((r) => setTimeout(r, 60))
  t.equal(f.lookups, before, 'idle polls cost no lookups')
  f.valid.delete('d:7')
  f.valid.delete('d:8')
  f.sessions.revalidate(subject.driver(7))
  t.same(f.ended.map((e) => e.id.split('#')[0]), ['d:7'], 'only the named driver, at once')
  t.equal(f.lookups - before, 1)
})

t.test('a credential closes once its expiry passes, without any write', async (t) => {
  const f = fixture({ intervalMs: 10 })
  t.teardown(f.stop)
  const soon = f.open('e:1', 1, new Date(Date.now() + 50).toISOString())
  f.open('e:2', 2, new Date(Date.now() + 3_600_000).toISOString())
  f.valid.delete('e:1') // what the authenticator answers once the token has expired
  await waitFor(() => soon.closed)
  t.same(f.ended.map((e) => e.id.split('#')[0]), ['e:1'])
  t.equal(f.sessions.size, 1)
})

t.test('started again after a stop (a replica\'s new view of its file), it re-checks again', async (t) => {
  const f = fixture({ intervalMs: 10 })
  f.open('r:1', 1)
  f.stop()
  f.valid.delete('r:1')
  f.sessions.revalidate()
  t.equal(f.ended.length, 0, 'stopped: nothing is re-checked')
  const db = { pragma: () => 7 } as unknown as SessionDeps['db']
  const resolve = () => null
  t.teardown(f.sessions.start({ auth: { driver: resolve, owner: resolve, staff: resolve } as unknown as SessionDeps['auth'], db, log: { error() {}, info() {} } as unknown as SessionDeps['log'] }, 10))
  f.sessions.revalidate()
  t.same(f.ended.map((e) => e.code), [4001], 'started again: the revoked credential closes its socket')
})
