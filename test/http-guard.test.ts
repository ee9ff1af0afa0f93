/**
 * Nothing thrown while answering an HTTP request reaches uWS (a throw inside a uWS callback ends
 * the process): the guard logs with the request id and answers 500 `internal_error`, cuts a
 * half-written response, or does nothing when the client is gone. Unit tests of the writer and the
 * guard with a recording response, then the real front door with a logger that itself throws.
 */
import t from 'tap'
import uWS from 'uWebSockets.js'
import type { HttpResponse } from 'uWebSockets.js'
import { mountHttp } from '../src/http/server.ts'
import { newRequestCounter, newResState, requestGuard, requestState, rescue, send } from '../src/net/respond.ts'
import { route, type Route } from '../src/http/route.ts'
import { envelopeProblem } from './helpers/fixtures.ts'
import { createMetrics } from '../src/metrics/registry.ts'

/** A uWS response that records calls and throws from the methods named in `throwing`. */
function fakeRes(throwing: string[] = []) {
  const calls: string[] = []
  const body: string[] = []
  const res: Record<string, unknown> = {}
  const method = (name: string, fn: (...a: any[]) => void = () => {}) => {
    res[name] = (...a: any[]) => {
      calls.push(name)
      if (throwing.includes(name)) throw new Error(`${name} failed`)
      fn(...a)
      return res
    }
  }
  method('cork', (cb: () => void) => cb())
  method('writeStatus', (s: string) => calls.push(`status ${s}`))
  method('writeHeader')
  method('end', (b: string, close?: boolean) => { body.push(b); if (close) calls.push('end closes') })
  method('endWithoutBody')
  method('close')
  let aborted: (() => void) | null = null
  method('onAborted', (cb: () => void) => { aborted = cb })
  return { res: res as unknown as HttpResponse, calls, body, abort: () => aborted!() }
}

t.test('requests in flight (the shutdown drain counts them): answered, aborted, or cut, each settles once', async (t) => {
  const counter = newRequestCounter()
  let settled = 0
  counter.settled = () => { settled++ }
  const a = fakeRes()
  const b = fakeRes()
  const c = fakeRes(['writeHeader'])
  const sa = requestState(a.res, counter)
  const sb = requestState(b.res, counter)
  const sc = requestState(c.res, counter)
  t.ok(a.calls.includes('onAborted'), 'watches for the client going away at once')
  t.equal(counter.inFlight, 3)
  send(a.res, sa, 200, {}, '{}')
  send(a.res, sa, 200, {}, '{}')
  t.equal(counter.inFlight, 2, 'an answer settles its request, once')
  b.abort()
  t.equal(counter.inFlight, 1, 'so does a client going away')
  t.throws(() => send(c.res, sc, 200, { 'X-A': 'b' }, '{}'))
  t.equal(counter.inFlight, 0, 'and a response cut half-way')
  rescue(c.res, sc, {})
  t.equal(settled, 3, 'each request settled exactly once')
  t.notOk(a.calls.includes('end closes'), 'kept alive while not draining')

  counter.closing = true
  const d = fakeRes()
  send(d.res, requestState(d.res, counter), 200, {}, '{}')
  t.ok(d.calls.includes('end closes'), 'while draining every answer closes its connection')
  t.equal(counter.inFlight, 0)
  const e = fakeRes()
  send(e.res, newResState(), 426, {}, '{}')
  t.equal(counter.inFlight, 0, 'a response outside the counted door (a refused upgrade) counts nothing')
})

t.test('send: a write that throws half-way closes the connection and reports the error', async (t) => {
  const { res, calls } = fakeRes(['writeHeader'])
  const state = newResState()
  t.throws(() => send(res, state, 200, { 'X-A': 'b' }, '{}'), /writeHeader failed/)
  t.ok(calls.includes('close'), 'the half-written response is cut, not left for the idle timeout')
  t.ok(state.done && state.ended, 'and counts as finished')
})

t.test('rescue: 500 envelope when nothing was written, close when half-written, nothing when gone', async (t) => {
  const fresh = fakeRes()
  rescue(fresh.res, newResState(), { 'X-Request-Id': 'r1' })
  t.ok(fresh.calls.includes('status 500 Internal Server Error'), '500')
  t.equal(envelopeProblem(JSON.parse(fresh.body[0] ?? 'null'), 'internal_error'), null, 'with the §7 envelope')

  const half = fakeRes()
  rescue(half.res, { aborted: false, done: true, ended: false, counter: null }, {})
  t.same(half.calls, ['close'], 'a started response is cut')

  const gone = fakeRes()
  rescue(gone.res, { aborted: true, done: false, ended: false, counter: null }, {})
  rescue(gone.res, { aborted: false, done: true, ended: true, counter: null }, {})
  t.same(gone.calls, [], 'an aborted or finished response is not touched')

  const broken = fakeRes(['cork', 'close'])
  t.doesNotThrow(() => rescue(broken.res, newResState(), {}), 'never throws, even when uWS refuses everything')
})

t.test('requestGuard: the wrapped callback never throws; it reports, then answers', async (t) => {
  const { res, calls } = fakeRes()
  const reported: unknown[] = []
  const guard = requestGuard(res, newResState(), (err) => reported.push(err), () => ({ 'X-Request-Id': 'abc' }))
  const boom = new Error('boom')
  t.doesNotThrow(() => guard(() => { throw boom })())
  t.same(reported, [boom], 'the error is reported')
  t.ok(calls.includes('status 500 Internal Server Error'), 'and answered 500')

  const quiet = fakeRes()
  const failingReport = requestGuard(quiet.res, newResState(), () => { throw new Error('log sink down') }, () => { throw new Error('no headers') })
  t.doesNotThrow(() => failingReport(() => { throw boom })(), 'a logger that throws does not get through either')
  t.ok(quiet.calls.includes('status 500 Internal Server Error'), 'and the client still gets its 500')

  const args: unknown[] = []
  guard((a: number, b: string) => { args.push(a, b) })(1, 'x')
  t.same(args, [1, 'x'], 'arguments pass through')
})

t.test('the real front door: failures while answering, with a logger that throws, still answer 500', async (t) => {
  const app = uWS.App()
  // A logger whose error() throws: the old handler's `fail` threw out of the uWS callback (or
  // out of a promise continuation, an unhandled rejection), and the process ended.
  const errors: string[] = []
  const log: any = {
    info() {}, warn() {}, debug() {}, child: () => log,
    error(obj: { reqId?: string }) { errors.push(obj.reqId ?? '?'); throw new Error('log sink down') },
  }
  const requests = newRequestCounter()
  const svc = { config: { rateLimitPerMinute: 100000, bodyLimitBytes: 4096, trustProxy: { kind: 'off' } }, log, metrics: createMetrics(false), lifecycle: { requests } } as never
  const routes = [
    route({ method: 'GET', path: '/sync', tag: 'T', summary: 'handler throws', auth: 'none', handler: () => { throw new Error('sync bug') } }),
    route({ method: 'GET', path: '/async', tag: 'T', summary: 'handler rejects', auth: 'none', handler: async () => { throw new Error('async bug') } }),
    route({ method: 'GET', path: '/unserialisable', tag: 'T', summary: 'JSON.stringify throws', auth: 'none', handler: () => ({ n: 1n }) }),
    route({ method: 'GET', path: '/authed', tag: 'T', summary: 'authenticator throws', auth: 'owner', handler: () => ({}) }),
  ] as Route[]
  const auth = { none: () => null, owner: () => { throw new Error('auth store gone') } } as never
  mountHttp(app, svc, routes, auth)
  const port = await new Promise<number>((resolve, reject) => app.listen('127.0.0.1', 0, (sock) => sock ? resolve(uWS.us_socket_local_port(sock)) : reject(new Error('listen'))))
  t.teardown(() => { (app as unknown as { close(): void }).close() })

  for (const path of ['/sync', '/async', '/unserialisable', '/authed']) {
    const r = await fetch(`http://127.0.0.1:${port}/api/v1${path}`, { headers: { 'x-request-id': `req-${path.slice(1)}`, authorization: 'Bearer x' } })
    t.equal(r.status, 500, `${path}: 500`)
    t.equal(envelopeProblem(await r.json(), 'internal_error'), null, `${path}: the §7 envelope`)
    t.equal(r.headers.get('x-request-id'), `req-${path.slice(1)}`, `${path}: with its request id`)
    t.ok(errors.includes(`req-${path.slice(1)}`), `${path}: logged with the request id`)
  }
  const after = await fetch(`http://127.0.0.1:${port}/api/v1/nope`)
  t.equal(after.status, 404, 'the process is alive and still answering')
  await after.body?.cancel()
  t.equal(requests.inFlight, 0, 'every request, failed ones included, is settled for the shutdown drain')
})
