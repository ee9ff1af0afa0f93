/**
 * TRUST_PROXY (README "Configuration", docs/deployment.md "Client addresses"): behind trusted
 * proxies, rate limits, request logs and WebSocket upgrades use the client address from
 * `X-Forwarded-For` / `Forwarded`; from any other peer those headers are ignored. Over real HTTP
 * from 127.0.0.1, plus the pure parsing and walking rules.
 */
import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import { connect } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { loadConfig } from '../src/config.ts'
import { buildApp } from '../src/app.ts'
import { clientAddress, FORWARDED_BY, FORWARDED_CLIENT, forwardedByNode, parseTrustProxy, withClusterSecret } from '../src/net/client-address.ts'
import { createAccount, postOrder } from './helpers/fixtures.ts'
import { findFreePort, request, type TestServer } from './helpers/server.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'

interface Booted { s: TestServer; lines: () => Array<Record<string, any>>; plans(xff?: Record<string, string>): Promise<{ remaining: number; reqId: string }> }

/** A server with an info-level log captured, and a tiny request to a public route (per-address budget of 5). */
async function boot(t: Test, env: Record<string, string>): Promise<Booted> {
  const raw: string[] = []
  const sink = new Writable({ write(chunk, _enc, cb) { raw.push(String(chunk)); cb() } })
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-test-'))
  const port = await findFreePort()
  const site = `http://127.0.0.1:${port}`
  const config = loadConfig({ LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: String(port), DB_PATH: join(dir, 'test.db'), SITE_URL: site, RATE_LIMIT_PER_MINUTE: '5', DEMO_SEED: '0', ...env })
  const app = buildApp(config, { log: pino({ level: 'info' }, sink) })
  await app.listen()
  t.teardown(async () => { await app.close(); rmSync(dir, { recursive: true, force: true }) })
  const base = `${site}/api/v1`
  const s = { app, port, site, base, req: (method: string, path: string, opts = {}) => request(base + path, method, opts) } as unknown as TestServer
  let n = 0
  return {
    s,
    lines: () => raw.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>),
    async plans(headers = {}) {
      const reqId = `tp-${++n}`
      const r = await request(`${base}/plans`, 'GET', { headers: { ...headers, 'x-request-id': reqId } })
      t.equal(r.status, 200)
      return { remaining: Number(r.headers.get('x-ratelimit-remaining')), reqId }
    },
  }
}

/** One GET written by hand (fetch would merge repeated header lines); resolves with the response head. */
function rawGet(port: number, path: string, headerLines: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () => sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headerLines.map((h) => h + '\r\n').join('')}Connection: close\r\n\r\n`))
    let got = ''
    sock.on('data', (d) => { got += String(d) })
    sock.on('end', () => resolve(got))
    sock.on('error', reject)
  })
}

/** The `ip` of the request log line with this request id. */
const loggedIp = (b: Booted, reqId: string) => b.lines().find((l) => l.msg === 'request' && l.reqId === reqId)?.ip

const A = { 'x-forwarded-for': '203.0.113.7' }
const B = { 'x-forwarded-for': '198.51.100.23' }

t.test('TRUST_PROXY unset: forwarding headers are ignored, every client shares the peer\'s bucket', async (t) => {
  const b = await boot(t, {})
  const first = await b.plans(A)
  const second = await b.plans(B)
  t.equal(first.remaining, 4)
  t.equal(second.remaining, 3, 'a different X-Forwarded-For spent the same budget')
  t.equal(loggedIp(b, first.reqId), '127.0.0.1', 'the log shows the peer, not the header')
  t.equal(loggedIp(b, second.reqId), '127.0.0.1')
})

t.test('TRUST_PROXY=127.0.0.1: each forwarded client has its own bucket and appears in the log', async (t) => {
  const b = await boot(t, { TRUST_PROXY: '127.0.0.1' })
  const a1 = await b.plans(A)
  const a2 = await b.plans(A)
  const b1 = await b.plans(B)
  t.equal(a1.remaining, 4)
  t.equal(a2.remaining, 3, 'the same client spends its own budget')
  t.equal(b1.remaining, 4, 'another client starts with a full budget')
  t.equal(loggedIp(b, a1.reqId), '203.0.113.7', 'the log line shows the client address')
  t.equal(loggedIp(b, b1.reqId), '198.51.100.23')
  // Only the proxy's own entry is believed: what the client put to its left is not.
  const spoof = await b.plans({ 'x-forwarded-for': '203.0.113.7, 192.0.2.50' })
  t.equal(loggedIp(b, spoof.reqId), '192.0.2.50', 'the entry the trusted proxy appended wins over the client\'s own')
  t.equal(spoof.remaining, 4, 'so a client cannot borrow another client\'s bucket')
  // Repeated header lines are one list; the last line is the nearest proxy's.
  const head = await rawGet(b.s.port, '/api/v1/plans', ['X-Forwarded-For: 203.0.113.7', 'X-Forwarded-For: 192.0.2.51', 'X-Request-Id: tp-lines'])
  t.match(head, /^HTTP\/1\.1 200/)
  t.equal(loggedIp(b, 'tp-lines'), '192.0.2.51', 'repeated X-Forwarded-For lines are joined in order')
  // A request without any forwarding header is the proxy itself (its health checks, say).
  const direct = await b.plans()
  t.equal(loggedIp(b, direct.reqId), '127.0.0.1')
})

t.test('a header from an untrusted peer is ignored', async (t) => {
  const b = await boot(t, { TRUST_PROXY: '10.0.0.1' })
  const first = await b.plans(A)
  const second = await b.plans(B)
  t.equal(second.remaining, first.remaining - 1, '127.0.0.1 is not a trusted proxy: one bucket')
  t.equal(loggedIp(b, first.reqId), '127.0.0.1')
  const fwd = await b.plans({ forwarded: 'for=203.0.113.7' })
  t.equal(loggedIp(b, fwd.reqId), '127.0.0.1', 'Forwarded from an untrusted peer is ignored too')
})

t.test('hop count: the N nearest addresses are proxies, the next one is the client', async (t) => {
  const chain = { 'x-forwarded-for': '192.0.2.1, 198.51.100.2, 203.0.113.3' }
  for (const [hops, want] of [['1', '203.0.113.3'], ['2', '198.51.100.2'], ['3', '192.0.2.1'], ['9', '192.0.2.1']] as const) {
    const b = await boot(t, { TRUST_PROXY: hops })
    const r = await b.plans(chain)
    t.equal(loggedIp(b, r.reqId), want, `TRUST_PROXY=${hops} → ${want}`)
  }
})

t.test('RFC 7239 Forwarded, and the two headers disagreeing', async (t) => {
  const b = await boot(t, { TRUST_PROXY: 'loopback' })
  const v6 = await b.plans({ forwarded: 'for="[2001:db8:cafe::17]:4711";proto=https' })
  t.equal(loggedIp(b, v6.reqId), '2001:db8:cafe::17', 'for= with an IPv6 address and port')
  const both = await b.plans({ forwarded: 'for=203.0.113.7', 'x-forwarded-for': '203.0.113.7' })
  t.equal(loggedIp(b, both.reqId), '203.0.113.7', 'both headers agreeing')
  const conflict = await b.plans({ forwarded: 'for=203.0.113.7', 'x-forwarded-for': '198.51.100.23' })
  t.equal(loggedIp(b, conflict.reqId), '127.0.0.1', 'one of them came from the client: neither is believed')
})

t.test('WebSocket upgrades use the same client address', async (t) => {
  for (const [trust, want] of [['127.0.0.1', '203.0.113.7'], ['', '127.0.0.1']] as const) {
    const b = await boot(t, { TRUST_PROXY: trust, RATE_LIMIT_PER_MINUTE: '1000' })
    const acct = createAccount(b.s.app.svc.db)
    const created = await postOrder(b.s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
    t.equal(created.status, 200)
    const ws = await WsClient.open(`${wsBase(b.s)}/ws/track/${created.body.track_token}`, { headers: { ...A, 'x-request-id': `ws-${trust || 'off'}` } })
    await ws.next()
    await ws.close()
    const open = b.lines().find((l) => l.msg === 'websocket open' && l.socket === `ws-${trust || 'off'}`)
    t.equal(open?.ip, want, `TRUST_PROXY=${trust || '(unset)'}: the socket's log line shows ${want}`)
  }
})

t.test('parseTrustProxy', async (t) => {
  t.same(parseTrustProxy(undefined), { kind: 'off' })
  for (const off of ['', '0', 'false', 'off']) t.same(parseTrustProxy(off), { kind: 'off' }, `"${off}" is off`)
  t.same(parseTrustProxy('2'), { kind: 'hops', hops: 2 })
  t.equal(parseTrustProxy('10.0.0.0/8, ::1, loopback').kind, 'list')
  for (const bad of ['33', 'proxy.example.com', '10.0.0.0/40', '1.2.3', '-1', '0x7f.0.0.1', '010.0.0.1', '256.0.0.1', '1::2::3']) {
    t.throws(() => parseTrustProxy(bad), /^invalid configuration: TRUST_PROXY/, `"${bad}" is refused with a one-line message`)
  }
  t.throws(() => loadConfig({ TRUST_PROXY: 'nope' }), /TRUST_PROXY/, 'the server refuses to start with it')
  t.same(loadConfig({}).trustProxy, { kind: 'off' }, 'off by default')
})

t.test('clientAddress', async (t) => {
  const list = parseTrustProxy('10.0.0.0/8, 127.0.0.1')
  const xff = (v: string) => ({ 'x-forwarded-for': v })
  t.equal(clientAddress('127.0.0.1', xff('10.1.1.1, 10.2.2.2'), list), '10.1.1.1', 'a chain of trusted proxies is walked to its end')
  t.equal(clientAddress('127.0.0.1', xff('8.8.8.8, 1.1.1.1, 10.2.2.2'), list), '1.1.1.1', 'the first untrusted address from the right is the client')
  t.equal(clientAddress('::ffff:127.0.0.1', xff('1.1.1.1'), list), '1.1.1.1', 'an IPv4-mapped peer matches its IPv4 range')
  t.equal(clientAddress('127.0.0.1', xff('garbage'), list), '127.0.0.1', 'a non-address stops at the proxy')
  t.equal(clientAddress('127.0.0.1', xff('1.1.1.1:8443'), list), '1.1.1.1', 'a port is dropped')
  t.equal(clientAddress('127.0.0.1', { forwarded: 'for=unknown' }, list), '127.0.0.1', 'an obfuscated identifier is no address')
  t.equal(clientAddress('192.0.2.9', xff('1.1.1.1'), list), '192.0.2.9', 'an untrusted peer is the client')
  t.equal(clientAddress('127.0.0.1', xff('1.1.1.1'), parseTrustProxy('')), '127.0.0.1', 'off: the peer, untouched')
  for (const odd of ['010.1.1.1', '256.1.1.1', '1.2.3', '0x7f.0.0.1', '1.2.3.4.5']) {
    t.equal(clientAddress('127.0.0.1', xff(odd), list), '127.0.0.1', `"${odd}" is no dotted quad: the walk stops at the proxy`)
  }
  t.equal(clientAddress('127.0.0.1', xff('::ffff:1.1.1.1'), list), '1.1.1.1', 'an IPv4-mapped hop reads as its IPv4 address')
  t.equal(clientAddress('127.0.0.1', xff('[2001:db8::1]:443'), list), '2001:db8::1', 'a bracketed IPv6 hop with a port')
  t.equal(clientAddress('::1', xff('1.1.1.1'), parseTrustProxy('::1')), '1.1.1.1', 'an IPv6 peer in the list')
})

t.test('clientAddress in cluster mode: a node that proves the cluster secret names the client it forwarded', async (t) => {
  const secret = 'c'.repeat(43)
  const off = withClusterSecret(parseTrustProxy(''), secret)
  const by = (shown: string, client: string) => ({ [FORWARDED_BY]: shown, [FORWARDED_CLIENT]: client })
  t.equal(clientAddress('127.0.0.1', by(secret, '203.0.113.7'), off), '203.0.113.7', 'the right secret: the client it names')
  t.equal(clientAddress('127.0.0.1', by('c'.repeat(42) + 'd', '203.0.113.7'), off), '127.0.0.1', 'a wrong secret: the peer')
  t.equal(clientAddress('127.0.0.1', by('guess', '203.0.113.7'), off), '127.0.0.1', 'a short guess: the peer')
  t.equal(clientAddress('127.0.0.1', { [FORWARDED_CLIENT]: '203.0.113.7' }, off), '127.0.0.1', 'a client line without proof: the peer')
  t.equal(clientAddress('127.0.0.1', by(secret, 'not-an-address'), off), '127.0.0.1', 'proof but no address: the peer')
  t.equal(clientAddress('127.0.0.1', by(secret, '203.0.113.7'), parseTrustProxy('')), '127.0.0.1', 'outside cluster mode the lines mean nothing')
  t.notOk(forwardedByNode(by(secret, '203.0.113.7'), parseTrustProxy('')), 'no secret, nobody is a node')
})
