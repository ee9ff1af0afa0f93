/**
 * Webhook URLs cannot be turned against internal hosts (api-v1 §6 registration rules; issue 4
 * items 1 and 6): registration refuses a table of hostile URLs — loopback, private, link-local,
 * CGNAT, multicast, unspecified, reserved, IPv4-mapped IPv6, decimal/hex/octal IPv4 spellings,
 * credentials, non-https schemes, names that do not resolve — and the delivery client checks the
 * address again at connect time, so a row whose host now points inside is never connected to.
 * WEBHOOK_ALLOW_LOOPBACK admits loopback receivers and nothing else.
 *
 * No request ever leaves this machine: the public addresses used here only appear in endpoints
 * registered and deleted again by an owner that has no store, so no event is ever sent to them.
 */
import t from 'tap'
import { createServer as createNetServer, type Socket } from 'node:net'
import { startServer } from './helpers/server.ts'
import { createAccount, createOwner, tokenFor, isError } from './helpers/fixtures.ts'
import { sleep } from './helpers/webhook-receiver.ts'
import { nowIso } from '../src/storage/db.ts'

const strict = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_TIMEOUT_MS: '1000' })
const dev = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_LOOPBACK: '1' })
t.teardown(async () => { await strict.close(); await dev.close() })

// An owner with no store: nothing it owns can emit an event.
const quietOwner = (db: typeof strict.app.svc.db) => tokenFor(db, createOwner(db), ['*'])
const strictToken = quietOwner(strict.app.svc.db)
const devToken = quietOwner(dev.app.svc.db)

const HOSTILE: Array<[string, string]> = [
  ['https://127.0.0.1/hook', 'IPv4 loopback'],
  ['https://127.8.9.10/hook', 'anywhere in 127/8'],
  ['https://localhost/hook', 'localhost'],
  ['https://LOCALHOST./hook', 'localhost, upper case with a trailing dot'],
  ['https://api.localhost/hook', 'a *.localhost name'],
  ['https://10.0.0.1/hook', '10/8'],
  ['https://10.255.255.254/hook', '10/8 top'],
  ['https://172.16.0.1/hook', '172.16/12'],
  ['https://172.31.255.254/hook', '172.16/12 top'],
  ['https://192.168.1.1/hook', '192.168/16'],
  ['https://169.254.169.254/latest/meta-data/', 'link-local cloud metadata'],
  ['https://100.64.0.1/hook', 'CGNAT 100.64/10'],
  ['https://100.127.255.254/hook', 'CGNAT top'],
  ['https://0.0.0.0/hook', 'unspecified'],
  ['https://224.0.0.1/hook', 'multicast'],
  ['https://239.255.255.250/hook', 'multicast (SSDP)'],
  ['https://255.255.255.255/hook', 'broadcast'],
  ['https://192.0.2.10/hook', 'documentation range (reserved)'],
  ['https://240.0.0.1/hook', 'reserved 240/4'],
  ['https://[::1]/hook', 'IPv6 loopback'],
  ['https://[::]/hook', 'IPv6 unspecified'],
  ['https://[::ffff:127.0.0.1]/hook', 'IPv4-mapped loopback'],
  ['https://[::ffff:7f00:1]/hook', 'IPv4-mapped loopback, hex form'],
  ['https://[::ffff:10.1.2.3]/hook', 'IPv4-mapped private'],
  ['https://[::ffff:169.254.169.254]/hook', 'IPv4-mapped metadata'],
  ['https://[::7f00:1]/hook', 'IPv4-compatible (deprecated) loopback'],
  ['https://[::a01:203]/hook', 'IPv4-compatible (deprecated) private'],
  ['https://[fe80::1]/hook', 'IPv6 link-local'],
  ['https://[fc00::1]/hook', 'IPv6 unique local'],
  ['https://[fd12:3456:789a::1]/hook', 'IPv6 unique local fd'],
  ['https://[ff02::1]/hook', 'IPv6 multicast'],
  ['https://[64:ff9b::7f00:1]/hook', 'NAT64 of 127.0.0.1'],
  ['https://[2002:7f00:1::]/hook', '6to4 of 127.0.0.1'],
  ['https://[2001:db8::1]/hook', 'IPv6 documentation'],
  ['https://2130706433/hook', 'decimal IPv4 (127.0.0.1)'],
  ['http://2130706433/hook', 'decimal IPv4 over http'],
  ['https://0x7f000001/hook', 'hex IPv4'],
  ['https://0x7f.0x0.0x0.0x1/hook', 'hex dotted IPv4'],
  ['https://0177.0.0.1/hook', 'octal IPv4'],
  ['https://127.1/hook', 'short IPv4'],
  ['https://3232235777/hook', 'decimal 192.168.1.1'],
  ['https://0xa9fea9fe/hook', 'hex 169.254.169.254'],
  ['https://user:secret@93.184.216.34/hook', 'userinfo with password'],
  ['https://user@93.184.216.34/hook', 'userinfo without password'],
  ['http://93.184.216.34/hook', 'plain http to a public address'],
  ['http://example.com/hook', 'plain http'],
  ['ftp://93.184.216.34/hook', 'ftp'],
  ['file:///etc/passwd', 'file'],
  ['gopher://93.184.216.34:70/_', 'gopher'],
  ['javascript:alert(1)', 'javascript'],
  ['//93.184.216.34/hook', 'scheme-relative'],
  ['not a url', 'garbage'],
  ['https://does-not-exist.invalid/hook', 'a name that does not resolve'],
]

t.test('registration refuses every hostile URL with 422 and errors.url', async (t) => {
  for (const [url, what] of HOSTILE) {
    const r = await strict.req('POST', '/webhook-endpoints', { token: strictToken, body: { url, events: ['*'] } })
    isError(t, r, 422, 'validation_failed', `${what} (${url})`)
    t.ok(Array.isArray(r.body?.errors?.url) && r.body.errors.url.length > 0, `${what}: errors.url says why: ${r.body?.errors?.url?.[0]}`)
  }
  const count = strict.app.svc.db.prepare('SELECT COUNT(*) FROM webhook_endpoints').pluck().get()
  t.equal(count, 0, 'nothing was registered')
})

t.test('public https URLs are accepted (registered, then deleted at once: no event is ever sent)', async (t) => {
  for (const url of ['https://93.184.216.34/hooks/orders?x=1', 'https://[2606:2800:220:1:248:1893:25c8:1946]:8443/hook']) {
    const r = await strict.req('POST', '/webhook-endpoints', { token: strictToken, body: { url, events: ['order.created'] } })
    t.equal(r.status, 201, `${url} accepted`)
    t.equal(r.body.url, new URL(url).href, 'stored as the normalised URL')
    t.equal((await strict.req('DELETE', `/webhook-endpoints/${r.body.id}`, { token: strictToken })).status, 204)
  }
})

t.test('WEBHOOK_ALLOW_LOOPBACK admits loopback receivers (http too) and nothing else', async (t) => {
  for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'http://[::1]:9/hook', 'https://127.0.0.1:9/hook', 'http://[::ffff:127.0.0.1]:9/']) {
    const r = await dev.req('POST', '/webhook-endpoints', { token: devToken, body: { url, events: ['*'] } })
    t.equal(r.status, 201, `${url} accepted with the switch on`)
    await dev.req('DELETE', `/webhook-endpoints/${r.body.id}`, { token: devToken })
  }
  for (const url of ['http://10.0.0.1/hook', 'https://192.168.0.10/hook', 'http://169.254.169.254/', 'https://[fe80::1]/', 'http://user:pw@127.0.0.1:9/', 'ftp://127.0.0.1/', 'http://93.184.216.34/', 'http://0.0.0.0:9/']) {
    const r = await dev.req('POST', '/webhook-endpoints', { token: devToken, body: { url, events: ['*'] } })
    isError(t, r, 422, 'validation_failed', `${url} still refused with the switch on`)
  }
})

t.test('the delivery client checks the address at connect time (a host that now points inside is never reached)', async (t) => {
  // A TCP listener that counts connections: the client must not open a single one.
  const sockets: Socket[] = []
  const listener = createNetServer((sock) => { sockets.push(sock); sock.destroy() })
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()))
  t.teardown(() => new Promise<void>((r) => listener.close(() => r())))
  const port = (listener.address() as { port: number }).port
  const db = strict.app.svc.db
  const acct = createAccount(db)
  // As if the name had resolved to a public address at registration and was re-pointed since
  // (DNS rebinding), or the row was written by another tool: straight into SQLite.
  const insert = db.prepare("INSERT INTO webhook_endpoints (owner_id, url, events, secret, from_event_id, created_at) VALUES (?, ?, '[\"*\"]', 'whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0', 0, ?)")
  const urls = [`https://localhost:${port}/hook`, `http://localhost:${port}/hook`, `https://127.0.0.1:${port}/hook`, `https://[::ffff:127.0.0.1]:${port}/hook`]
  for (const url of urls) {
    const id = Number(insert.run(acct.ownerId, url, nowIso()).lastInsertRowid)
    const p = await strict.req('POST', `/webhook-endpoints/${id}/ping`, { token: acct.token })
    t.equal(p.status, 200)
    let attempt: { error: string | null; http_status: number | null } | undefined
    for (let i = 0; i < 100 && !attempt; i++) {
      await sleep(20)
      attempt = (await strict.req('GET', `/webhook-endpoints/${id}/deliveries/${p.body.id}`, { token: acct.token })).body.attempts[0]
    }
    t.ok(attempt, `${url}: an attempt was made and logged`)
    t.equal(attempt?.http_status, null, `${url}: no response`)
    t.match(attempt?.error ?? '', /^blocked: /, `${url}: refused before connecting (${attempt?.error})`)
  }
  t.equal(sockets.length, 0, 'no connection reached the internal listener')
})
