/**
 * No WebSocket callback can take the server down (issue 10 #1, docs/realtime.md "Errors"):
 * malformed percent-escapes in upgrade paths are refused with the §7 envelope, and whatever a
 * handler throws is logged with the request or socket id and answered (500) or closed (1011).
 */
import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import uWS from 'uWebSockets.js'
import { pino } from 'pino'
import WebSocket from 'ws'
import { startServer } from './helpers/server.ts'
import { createFleet, deliveryOrder } from './helpers/delivery.ts'
import { createStaff } from './helpers/people.ts'
import { rawUpgrade, type HttpAnswer } from './helpers/raw-ws.ts'
import { guarded } from '../src/ws/guard.ts'
import { authedUpgrade } from '../src/ws/upgrade.ts'
import type { LiveSocket } from '../src/ws/socket.ts'
import { ApiError } from '../src/errors.ts'

const MALFORMED = ['%E2%82', '%ZZ', '%FF', '%C0%AF', '%', '%E2%82%28', '%ED%A0%80', '%F0%9F%98', 'ok%', 'a%2']

function isEnvelope(t: Test, a: HttpAnswer, status: number, code: string, what: string) {
  t.equal(a.status, status, `${what}: ${status}`)
  t.match(a.headers['content-type'], /application\/json/, `${what}: JSON`)
  t.match(JSON.parse(a.body), { code, message: String }, `${what}: the §7 envelope`)
}

t.test('malformed escapes on every socket address are refused with the envelope, and the server keeps serving', async (t) => {
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
  t.teardown(() => s.close())
  const db = s.app.svc.db
  const f = createFleet(db)
  const order = await deliveryOrder(s, f)
  const kitchen = createStaff(db, f.storeId, { role: 'kitchen' })
  const auth = (token: string) => ({ Authorization: `Bearer ${token}` })

  for (const esc of MALFORMED) {
    // Path parameters: a segment that cannot be decoded names nothing.
    isEnvelope(t, await rawUpgrade(s.port, `/api/v1/ws/track/${esc}`), 404, 'not_found', `track/${esc}`)
    isEnvelope(t, await rawUpgrade(s.port, `/api/v1/ws/dispatch/${esc}`, auth(f.ownerToken)), 404, 'not_found', `dispatch/${esc} with a token`)
    isEnvelope(t, await rawUpgrade(s.port, `/api/v1/ws/dispatch/${esc}`), 401, 'unauthenticated', `dispatch/${esc} without a token`)
    // The sockets without path parameters: the escape in the credential or the query.
    isEnvelope(t, await rawUpgrade(s.port, `/api/v1/ws/driver?token=${esc}`), 401, 'unauthenticated', `driver?token=${esc}`)
    isEnvelope(t, await rawUpgrade(s.port, `/api/v1/ws/kds?token=${esc}`), 401, 'unauthenticated', `kds?token=${esc}`)
    isEnvelope(t, await rawUpgrade(s.port, `/api/v1/ws/dispatch/${f.storeId}?token=${esc}`), 401, 'unauthenticated', `dispatch?token=${esc}`)
    const station = await rawUpgrade(s.port, `/api/v1/ws/kds?station_id=${esc}`, auth(kitchen.token))
    t.ok(station.status === 101 || /application\/json/.test(station.headers['content-type'] ?? ''), `kds?station_id=${esc}: opened or refused with the envelope`)
    // Below a socket address: not a socket route, answered by the HTTP front door.
    for (const p of [`/api/v1/ws/driver/${esc}`, `/api/v1/ws/kds/${esc}`, `/api/v1/ws/track/${order.track_token}/${esc}`]) {
      const a = await rawUpgrade(s.port, p)
      t.ok(a.status >= 400 && a.status < 500, `${p}: ${a.status}`)
    }
  }
  t.equal((await s.req('GET', `${s.site}/healthz`)).status, 200, 'the server still answers')
  const ok = await rawUpgrade(s.port, `/api/v1/ws/track/${encodeURIComponent(order.track_token)}`)
  t.equal(ok.status, 101, 'and still upgrades a good request')
})

/** A bare uWS app with guarded behaviors that fail on purpose, and the log lines they leave. */
async function faultyApp() {
  const lines: any[] = []
  const log = pino({ level: 'info' }, new Writable({ write(chunk, _enc, cb) { lines.push(JSON.parse(String(chunk))); cb() } }))
  const app = uWS.App()
  type Sock = LiveSocket & { mode: string }
  app.ws<Sock>('/ws/:mode', guarded('test', log, {
    maxMessageBytes: 64,
    upgrade: authedUpgrade<Sock>(1, ({ params }) => {
      const mode = params[0] ?? ''
      if (mode === 'upgrade-throws') throw new TypeError('boom in upgrade')
      if (mode === 'refused') throw new ApiError('forbidden')
      return { mode }
    }),
    open: (ws) => {
      if (ws.getUserData().mode === 'open-throws') throw new Error('boom in open')
      ws.send('hello')
    },
    message: async (ws, msg) => {
      const text = Buffer.from(msg).toString()
      if (text === 'throw') throw new Error('boom in message')
      await new Promise((r) => setImmediate(r))
      if (text === 'reject') throw new Error('boom after await')
      if (!ws.getUserData().closed) ws.send(`echo ${text}`)
    },
    close: (ws) => {
      if (ws.getUserData().mode === 'close-throws') throw new Error('boom in close')
    },
  }))
  let listen: uWS.us_listen_socket | false = false
  const port = await new Promise<number>((resolve, reject) => app.listen('127.0.0.1', 0, (sock) => {
    listen = sock
    if (!sock) return reject(new Error('listen failed'))
    resolve(uWS.us_socket_local_port(sock))
  }))
  return { port, lines, close: () => { if (listen) uWS.us_listen_socket_close(listen) } }
}

function connect(url: string): Promise<{ ws: WebSocket; frames: string[]; closed: Promise<{ code: number; reason: string }> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url)
    const frames: string[] = []
    ws.on('message', (d) => frames.push(String(d)))
    const closed = new Promise<{ code: number; reason: string }>((r) => ws.on('close', (code, reason) => r({ code, reason: String(reason) })))
    ws.once('open', () => resolve({ ws, frames, closed }))
    ws.once('error', reject)
  })
}

t.test('the guard: a throwing upgrade answers 500 with the envelope and its request id; the process lives', async (t) => {
  const a = await faultyApp()
  t.teardown(a.close)
  const r = await rawUpgrade(a.port, '/ws/upgrade-throws', { 'X-Request-Id': 'req-upgrade-1' })
  t.equal(r.status, 500)
  t.equal(r.headers['x-request-id'], 'req-upgrade-1')
  t.same(JSON.parse(r.body), { message: 'Something went wrong on our side.', code: 'internal_error', reason: 'internal_error' })
  t.match(a.lines.find((l) => l.msg === 'websocket upgrade failed'), { reqId: 'req-upgrade-1', kind: 'test', err: { message: 'boom in upgrade' } }, 'logged with the request id')
  const refused = await rawUpgrade(a.port, '/ws/refused')
  t.equal(refused.status, 403, 'an ApiError is a refusal, not a failure')
  t.match(refused.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'a request id is made up when none came')
  t.equal((await rawUpgrade(a.port, '/ws/fine')).status, 101, 'and the app still upgrades')
})

t.test('the guard: open, message (thrown or rejected) and close failures close with 1011 and are logged', async (t) => {
  const a = await faultyApp()
  t.teardown(a.close)
  const url = `ws://127.0.0.1:${a.port}/ws`

  const o = await connect(`${url}/open-throws`)
  t.same(await o.closed, { code: 1011, reason: 'internal_error' }, 'open threw: 1011')

  const m = await connect(`${url}/fine`)
  m.ws.send('throw')
  t.same(await m.closed, { code: 1011, reason: 'internal_error' }, 'message threw: 1011')

  const r = await connect(`${url}/fine`)
  r.ws.send('reject')
  t.same(await r.closed, { code: 1011, reason: 'internal_error' }, 'message rejected after an await: 1011')

  const c = await connect(`${url}/close-throws`)
  c.ws.close(1000)
  t.equal((await c.closed).code, 1000, 'a close handler that throws still closes normally')

  const fine = await connect(`${url}/fine`)
  fine.ws.send('hi')
  while (!fine.frames.includes('echo hi')) await new Promise((res) => setTimeout(res, 10))
  t.pass('other sockets are unaffected')
  fine.ws.close()

  const failures = a.lines.filter((l) => l.msg === 'websocket handler failed')
  t.same(failures.map((l) => l.where).sort(), ['message', 'message', 'open'])
  t.ok(failures.every((l) => typeof l.socket === 'string' && l.socket.length > 0), 'each names the socket')
  t.ok(a.lines.some((l) => l.msg === 'websocket close handler failed'), 'the close failure is logged')
})
