/**
 * WebSocket limits under abuse (issue 21 item 5, docs/limits.md): open sockets per credential
 * (WS_MAX_PER_TOKEN) and per client address (WS_MAX_PER_ADDRESS, TRUST_PROXY applied) refused 429
 * `too_many_connections` at the upgrade and given back on every close, abnormal ones too; a
 * message flood closed with 4029; frames nested too deep (MessagePack and JSON) closed with 1008;
 * many small fragments adding up over the limit closed with 1009. The server stays up throughout.
 * Raw sockets (test/helpers/raw-ws.ts): the exact refusal and close frame, and abrupt TCP closes.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createDriver, envelopeProblem } from './helpers/fixtures.ts'
import { OP, RawWs, rawUpgrade } from './helpers/raw-ws.ts'
import { MAX_NESTING } from '../src/net/request-limits.ts'

const PER_TOKEN = 3
const PER_ADDRESS = 5
const BURST = 5
const s = await startServer({
  RATE_LIMIT_PER_MINUTE: '100000', TRUST_PROXY: '127.0.0.1',
  WS_MAX_PER_TOKEN: String(PER_TOKEN), WS_MAX_PER_ADDRESS: String(PER_ADDRESS), WS_MESSAGE_RATE: '1', WS_MESSAGE_BURST: String(BURST),
})
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const DRIVER = '/api/v1/ws/driver'
let nextAddress = 1
/** A client address of its own per test (TRUST_PROXY=127.0.0.1 believes X-Forwarded-For). */
const client = () => ({ 'X-Forwarded-For': `203.0.113.${nextAddress++}` })
const driverHeaders = (token: string, from: Record<string, string>) => ({ Authorization: `Bearer ${token}`, ...from })

/** Retry an upgrade until it is accepted: the server hears of a TCP close a moment later (a failure bound, not a timing). */
async function acceptedEventually(path: string, headers: Record<string, string>): Promise<number> {
  let status = 0
  for (let i = 0; i < 100 && status !== 101; i++) {
    status = (await rawUpgrade(s.port, path, headers)).status
    if (status !== 101) await new Promise((r) => setTimeout(r, 50))
  }
  return status
}

t.test(`per credential: socket ${PER_TOKEN + 1} is refused 429 too_many_connections, an abrupt close gives a place back`, async (t) => {
  const d = createDriver(db, acct.ownerId, acct.storeId)
  const open = [
    await RawWs.open(s.port, DRIVER, driverHeaders(d.token, client())),
    await RawWs.open(s.port, DRIVER, driverHeaders(d.token, client())),
    await RawWs.open(s.port, `${DRIVER}?token=${d.token}`, client()), // ?token= is the same credential
  ]
  t.teardown(() => open.forEach((w) => w.destroy()))
  const refused = await rawUpgrade(s.port, DRIVER, driverHeaders(d.token, client()))
  t.equal(refused.status, 429)
  const body = JSON.parse(refused.body)
  t.equal(envelopeProblem(body, 'too_many_connections'), null, 'the §7 envelope')
  t.match(body.details, { limit: 'token', max: PER_TOKEN })
  t.ok(refused.headers['x-request-id'], 'with a request id')
  const other = createDriver(db, acct.ownerId, acct.storeId)
  t.equal((await rawUpgrade(s.port, DRIVER, driverHeaders(other.token, client()))).status, 101, 'another credential is not affected')
  t.equal((await rawUpgrade(s.port, DRIVER, driverHeaders('drv_bogus', client()))).status, 401, 'a bad token is still 401, not 429')

  open.shift()!.destroy() // no close frame: an abnormal close (1006) must release too
  t.equal(await acceptedEventually(DRIVER, driverHeaders(d.token, client())), 101, 'the place is given back')
  t.equal((await rawUpgrade(s.port, DRIVER, driverHeaders(d.token, client()))).status, 101, 'accepted sockets closed by rawUpgrade give theirs back too')
})

t.test(`per client address (TRUST_PROXY applied): socket ${PER_ADDRESS + 1} from one address is refused, across credentials and socket kinds`, async (t) => {
  const from = client()
  const open: RawWs[] = []
  t.teardown(() => open.forEach((w) => w.destroy()))
  for (let i = 0; i < PER_ADDRESS - 1; i++) open.push(await RawWs.open(s.port, DRIVER, driverHeaders(createDriver(db, acct.ownerId, acct.storeId).token, from)))
  open.push(await RawWs.open(s.port, `/api/v1/ws/orders/${acct.storeId}`, { Authorization: `Bearer ${acct.token}`, ...from }))
  const refused = await rawUpgrade(s.port, DRIVER, driverHeaders(createDriver(db, acct.ownerId, acct.storeId).token, from))
  t.equal(refused.status, 429)
  t.match(JSON.parse(refused.body), { code: 'rate_limited', reason: 'too_many_connections', details: { limit: 'address', max: PER_ADDRESS } })
  t.equal((await rawUpgrade(s.port, DRIVER, driverHeaders(createDriver(db, acct.ownerId, acct.storeId).token, client()))).status, 101, 'another client address is not affected')
  // A graceful close (close frame both ways) releases as well.
  open.shift()!.send(OP.close, Buffer.from([0x03, 0xe8]))
  t.equal(await acceptedEventually(DRIVER, driverHeaders(createDriver(db, acct.ownerId, acct.storeId).token, from)), 101, 'a closed socket gives its place back')
})

t.test(`a flood of messages (more than ${BURST} at once at 1/s) is closed with 4029 rate_limited`, async (t) => {
  const d = createDriver(db, acct.ownerId, acct.storeId)
  const ws = await RawWs.open(s.port, DRIVER, driverHeaders(d.token, client()))
  await ws.json((f) => f.type === 'hello')
  for (let i = 0; i < BURST - 1; i++) ws.send(OP.text, '{"type":"ping"}')
  for (let i = 0; i < BURST - 1; i++) await ws.json((f) => f.type === 'pong')
  t.pass(`${BURST - 1} messages at once are answered`)
  for (let i = 0; i < 200; i++) ws.send(OP.text, '{"type":"ping"}')
  t.same(await ws.ending(), { code: 4029, reason: 'rate_limited' }, 'the flood ends the socket with 4029')
  t.equal((await s.req('GET', s.site + '/healthz')).status, 200, 'the server is fine')
})

t.test(`frames nested deeper than ${MAX_NESTING} levels are closed with 1008 before decoding; the process stays up`, async (t) => {
  const d = createDriver(db, acct.ownerId, acct.storeId)
  const deepPack = (n: number) => Buffer.concat([Buffer.alloc(n, 0x91), Buffer.from([0x01])]) // n nested one-element arrays
  const shallow = await RawWs.open(s.port, `${DRIVER}?format=msgpack`, driverHeaders(d.token, client()))
  shallow.send(OP.binary, deepPack(MAX_NESTING))
  t.ok(await shallowAnswer(shallow), `${MAX_NESTING} levels: an ordinary bad_frame answer, the socket stays open`)
  shallow.destroy()
  for (const [what, send] of [
    ['MessagePack', (ws: RawWs) => ws.send(OP.binary, deepPack(MAX_NESTING + 1))],
    ['MessagePack as deep as the frame allows', (ws: RawWs) => ws.send(OP.binary, deepPack(4000))],
    ['JSON', (ws: RawWs) => ws.send(OP.text, `{"type":"location","lat":${'['.repeat(MAX_NESTING)}${']'.repeat(MAX_NESTING)}}`)],
  ] as const) {
    const ws = await RawWs.open(s.port, `${DRIVER}?format=msgpack`, driverHeaders(d.token, client()))
    send(ws)
    t.same(await ws.ending(), { code: 1008, reason: 'nesting_too_deep' }, `${what}: closed with 1008`)
  }
  t.equal((await s.req('GET', s.site + '/healthz')).status, 200, 'the server is fine')
})

t.test('a frame declaring more elements than JSON_SHAPE allows is closed with 1008 before decoding', async (t) => {
  const d = createDriver(db, acct.ownerId, acct.storeId)
  const ws = await RawWs.open(s.port, `${DRIVER}?format=msgpack`, driverHeaders(d.token, client()))
  ws.send(OP.binary, Buffer.from([0xdc, 0xff, 0xff, 0x01, 0x02])) // array16 of 65535 elements, two present
  t.same(await ws.ending(), { code: 1008, reason: 'frame_too_complex' })
  t.equal((await s.req('GET', s.site + '/healthz')).status, 200, 'the server is fine')
})

/** The msgpack `error` frame for a decodable frame that is not an object (the socket still open). */
async function shallowAnswer(ws: RawWs): Promise<boolean> {
  const { Packr } = await import('msgpackr')
  const unpack = (b: Buffer) => new Packr({ useRecords: false }).unpack(b) as { type?: string; code?: string }
  for (let i = 0; i < 100; i++) {
    const f = ws.frames.map((x) => unpack(x.payload)).find((x) => x.type === 'error')
    if (f) return f.code === 'bad_frame'
    await new Promise((r) => setTimeout(r, 20))
  }
  return false
}

t.test('many small fragments adding up over the socket limit are closed with 1009', async (t) => {
  const d = createDriver(db, acct.ownerId, acct.storeId)
  const ws = await RawWs.open(s.port, DRIVER, driverHeaders(d.token, client()))
  const piece = Buffer.alloc(64, 0x61)
  ws.send(OP.text, piece, false)
  for (let i = 0; i < 4096 / 64; i++) ws.send(0, piece, false) // continuation frames: 65 × 64 bytes > 4 KiB
  ws.send(0, piece, true)
  t.same(await ws.ending(), { code: 1009, reason: 'message_too_big' })
})
