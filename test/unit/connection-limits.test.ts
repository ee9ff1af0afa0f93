/** The socket counts and message bucket of src/net/connection-limits.ts (docs/limits.md), without a server. */
import t from 'tap'
import { ApiError } from '../../src/errors.ts'
import { ConnectionLimits, connectionLimitsFor, SocketLease } from '../../src/net/connection-limits.ts'

const limits = (o: Partial<ConnectionLimits['settings']> = {}) =>
  new ConnectionLimits({ wsMaxPerToken: 2, wsMaxPerAddress: 3, wsMessageRate: 10, wsMessageBurst: 5, ...o })

const lease = (x: SocketLease | ApiError): SocketLease => {
  if (x instanceof ApiError) throw x
  return x
}

t.test('per credential: the place after the limit is refused 429 too_many_connections, a release frees one', async (t) => {
  const l = limits()
  const a = lease(l.admit('driver:tok', '10.0.0.1'))
  lease(l.admit('driver:tok', '10.0.0.2'))
  const refused = l.admit('driver:tok', '10.0.0.3')
  t.ok(refused instanceof ApiError)
  t.match(refused, { status: 429, code: 'too_many_connections', details: { limit: 'token', max: 2 } })
  t.ok(l.admit('driver:other', '10.0.0.3') instanceof SocketLease, 'another credential is not affected')
  a.release()
  a.release() // idempotent: a second close does not free a second place
  t.ok(l.admit('driver:tok', '10.0.0.4') instanceof SocketLease, 'a closed socket gave its place back')
  t.ok(l.admit('driver:tok', '10.0.0.5') instanceof ApiError, 'and only one')
})

t.test('per address: across credentials', async (t) => {
  const l = limits()
  for (let i = 0; i < 3; i++) lease(l.admit(`tok${i}`, '10.0.0.9'))
  t.match(l.admit('tok9', '10.0.0.9'), { status: 429, details: { limit: 'address', max: 3 } })
  t.ok(l.admit('tok9', '10.0.0.8') instanceof SocketLease, 'another address is not affected')
})

t.test('a socket admitted but never opened gives its place back at settle; an opened one keeps it', async (t) => {
  const l = limits({ wsMaxPerToken: 1 })
  const never = lease(l.admit('x', 'a'))
  never.settle()
  const opened = lease(l.admit('x', 'a'))
  opened.open()
  opened.settle()
  t.ok(l.admit('x', 'a') instanceof ApiError, 'the opened socket still holds its place')
  opened.release()
  t.same(l.size, { tokens: 0, addresses: 0 }, 'memory: nothing kept once every socket closed')
})

t.test('0 means no limit', async (t) => {
  const l = limits({ wsMaxPerToken: 0, wsMaxPerAddress: 0 })
  for (let i = 0; i < 1000; i++) t.ok(l.admit('same', 'same') instanceof SocketLease) || t.end()
})

t.test('message bucket: a burst, then the rate; refills with time', async (t) => {
  const l = limits({ wsMessageRate: 10, wsMessageBurst: 5 })
  const s = lease(l.admit('m', 'm'))
  const now = Date.now()
  for (let i = 0; i < 5; i++) t.ok(s.allowMessage(now), `message ${i + 1} of the burst`)
  t.notOk(s.allowMessage(now), 'the 6th at once is a flood')
  t.ok(s.allowMessage(now + 100), '100 ms later one more (10/s)')
  t.notOk(s.allowMessage(now + 100))
  for (let i = 0; i < 5; i++) t.ok(s.allowMessage(now + 10_000), 'a long pause refills the burst, no more')
  t.notOk(s.allowMessage(now + 10_000))
  const free = lease(limits({ wsMessageRate: 0 }).admit('m', 'm'))
  for (let i = 0; i < 100; i++) t.ok(free.allowMessage(now)) || t.end()
})

t.test('one ConnectionLimits per services object, from its config; none for a bare logger', async (t) => {
  const svc = { config: { wsMaxPerToken: 1, wsMaxPerAddress: 9, wsMessageRate: 1, wsMessageBurst: 1 } }
  t.equal(connectionLimitsFor(svc), connectionLimitsFor(svc), 'shared by every socket kind')
  t.equal(connectionLimitsFor(svc).settings.wsMaxPerToken, 1)
  t.same(connectionLimitsFor({}).settings, { wsMaxPerToken: 0, wsMaxPerAddress: 0, wsMessageRate: 0, wsMessageBurst: 0 })
})
