/**
 * The webhook-endpoint API (api-v1 §2.7, §4.2, §5 rule 6): creation answers 201 with the secret,
 * which is never shown again; `events` accepts catalog names, `*` and family wildcards and nothing
 * else; reads need `webhooks:read`, every change `webhooks:write`; another owner's endpoint is a 404.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, isError, tokenFor } from './helpers/fixtures.ts'
import { startReceiver } from './helpers/webhook-receiver.ts'
import { EVENT_NAMES } from '../src/domain/webhook-events.ts'

const s = await startServer({ WEBHOOK_ALLOW_LOOPBACK: '1', RATE_LIMIT_PER_MINUTE: '100000' })
const rcv = await startReceiver()
t.teardown(async () => { await s.close(); await rcv.close() })
const db = s.app.svc.db
const a = createAccount(db)
const b = createAccount(db)
const url = `${rcv.url}/hook`
const create = (token: string, body: unknown) => s.req('POST', '/webhook-endpoints', { token, body })

t.test('create answers 201 with id, url, events and a whsec_ secret shown only once', async (t) => {
  const r = await create(a.token, { url, events: ['order.created', 'order.status_changed'] })
  t.equal(r.status, 201)
  t.match(r.body, { id: Number, url, events: ['order.created', 'order.status_changed'], paused: false, secret: /^whsec_[A-Za-z0-9+/]{43}=$/ })
  t.equal(Buffer.from(r.body.secret.slice(6), 'base64').length, 32, '32 random bytes')
  const again = await create(a.token, { url, events: ['*'] })
  t.not(again.body.secret, r.body.secret, 'every endpoint has its own secret')
  const one = await s.req('GET', `/webhook-endpoints/${r.body.id}`, { token: a.token })
  t.equal(one.status, 200)
  t.notOk('secret' in one.body, 'not in the detail')
  const list = await s.req('GET', '/webhook-endpoints', { token: a.token })
  t.equal(list.status, 200)
  t.match(list.body, { current_page: 1, last_page: 1, per_page: 50, total: 2 })
  t.ok(list.body.data.every((e: object) => !('secret' in e)), 'not in the list')
  t.notOk(JSON.stringify(list.body).includes(r.body.secret), 'nowhere in the list')
  const stored = db.prepare('SELECT secret FROM webhook_endpoints WHERE id = ?').pluck().get(r.body.id)
  t.equal(stored, r.body.secret, 'kept to sign deliveries')
})

t.test('events: catalog names, "*" and family wildcards; duplicates folded; anything else is 422 with errors.events', async (t) => {
  const ok = await create(a.token, { url, events: ['subscription.*', 'order.*', 'app.uninstalled', 'entitlement.changed', 'subscription.*'] })
  t.equal(ok.status, 201)
  t.same(ok.body.events, ['subscription.*', 'order.*', 'app.uninstalled', 'entitlement.changed'])
  const every = await create(a.token, { url, events: EVENT_NAMES })
  t.equal(every.status, 201, 'every catalog name is accepted')
  for (const [events, what] of [
    [['order.created', 'order.exploded'], 'an unknown name'],
    [['orders.*'], 'an unknown family'],
    [['*.*'], 'a wildcard family'],
    [['order.created.extra'], 'a longer name'],
    [['ORDER.CREATED'], 'another case'],
    [['order*'], 'a half wildcard'],
    [['constructor'], 'an object built-in name'],
    [['__proto__'], 'the prototype key'],
    [[], 'an empty list'],
    [[''], 'an empty name'],
    [[42], 'a number'],
    ['*', 'a string instead of a list'],
    [undefined, 'no events'],
  ] as Array<[unknown, string]>) {
    const r = await create(a.token, { url, events })
    isError(t, r, 422, 'validation_failed', what)
    t.ok(Object.keys(r.body?.errors ?? {}).some((k) => k.startsWith('events')), `${what}: errors name events (${JSON.stringify(r.body?.errors)})`)
  }
  const both = await create(a.token, { url: 'ftp://x', events: ['nope'] })
  t.ok(both.body.errors.url && both.body.errors.events, 'url and events errors reported together')
  const noUrl = await create(a.token, { events: ['*'] })
  isError(t, noUrl, 422, 'validation_failed', 'no url')
  t.ok(noUrl.body.errors.url)
})

t.test('reads need webhooks:read, changes need webhooks:write', async (t) => {
  const ep = (await create(a.token, { url, events: ['*'] })).body
  const ping = await s.req('POST', `/webhook-endpoints/${ep.id}/ping`, { token: a.token })
  t.equal(ping.status, 200)
  const reads = [['GET', '/webhook-endpoints'], ['GET', `/webhook-endpoints/${ep.id}`], ['GET', `/webhook-endpoints/${ep.id}/deliveries`], ['GET', `/webhook-endpoints/${ep.id}/deliveries/${ping.body.id}`]]
  const writes: Array<[string, string, unknown?]> = [
    ['POST', '/webhook-endpoints', { url, events: ['*'] }], ['POST', `/webhook-endpoints/${ep.id}/ping`], ['POST', `/webhook-endpoints/${ep.id}/pause`],
    ['POST', `/webhook-endpoints/${ep.id}/resume`], ['POST', `/webhook-endpoints/${ep.id}/deliveries/${ping.body.id}/requeue`],
  ]
  const readOnly = tokenFor(db, a.ownerId, ['webhooks:read'])
  const legacyRead = tokenFor(db, a.ownerId, ['read'])
  const writer = tokenFor(db, a.ownerId, ['webhooks:write'])
  const other = tokenFor(db, a.ownerId, ['orders:write', 'menu:write', 'drivers:write'])
  for (const [m, p] of reads) {
    t.equal((await s.req(m!, p!, { token: readOnly })).status, 200, `${m} ${p} with webhooks:read`)
    t.equal((await s.req(m!, p!, { token: legacyRead })).status, 200, `${m} ${p} with read`)
    t.equal((await s.req(m!, p!, { token: writer })).status, 200, `${m} ${p} with webhooks:write (write implies read)`)
    isError(t, await s.req(m!, p!, { token: other }), 403, 'forbidden', `${m} ${p} without a webhooks scope`)
  }
  for (const [m, p, body] of writes) {
    isError(t, await s.req(m, p, { token: readOnly, body }), 403, 'forbidden', `${m} ${p} with webhooks:read`)
    isError(t, await s.req(m, p, { token: legacyRead, body }), 403, 'forbidden', `${m} ${p} with read`)
    const r = await s.req(m, p, { token: writer, body })
    t.ok(r.status === 200 || r.status === 201, `${m} ${p} with webhooks:write → ${r.status}`)
  }
  isError(t, await s.req('DELETE', `/webhook-endpoints/${ep.id}`, { token: readOnly }), 403, 'forbidden', 'DELETE with webhooks:read')
  t.equal((await s.req('DELETE', `/webhook-endpoints/${ep.id}`, { token: writer })).status, 204, 'DELETE with webhooks:write')
  isError(t, await s.req('GET', '/webhook-endpoints'), 401, 'unauthenticated', 'no token')
})

t.test('another owner\'s endpoint is a 404 on every route, and never listed', async (t) => {
  const ep = (await create(a.token, { url, events: ['*'] })).body
  const ping = await s.req('POST', `/webhook-endpoints/${ep.id}/ping`, { token: a.token })
  const routes: Array<[string, string]> = [
    ['GET', `/webhook-endpoints/${ep.id}`], ['DELETE', `/webhook-endpoints/${ep.id}`], ['POST', `/webhook-endpoints/${ep.id}/ping`],
    ['POST', `/webhook-endpoints/${ep.id}/pause`], ['POST', `/webhook-endpoints/${ep.id}/resume`], ['GET', `/webhook-endpoints/${ep.id}/deliveries`],
    ['GET', `/webhook-endpoints/${ep.id}/deliveries/${ping.body.id}`], ['POST', `/webhook-endpoints/${ep.id}/deliveries/${ping.body.id}/requeue`],
  ]
  const before = db.prepare('SELECT COUNT(*) FROM webhook_deliveries').pluck().get()
  for (const [m, p] of routes) isError(t, await s.req(m, p, { token: b.token }), 404, 'not_found', `${m} ${p} as another owner`)
  t.equal(db.prepare('SELECT COUNT(*) FROM webhook_deliveries').pluck().get(), before, 'nothing was queued by the other owner')
  t.equal(db.prepare('SELECT paused_at FROM webhook_endpoints WHERE id = ?').pluck().get(ep.id), null, 'nor paused')
  const theirs = await create(b.token, { url, events: ['*'] })
  const list = await s.req('GET', '/webhook-endpoints', { token: b.token })
  t.same(list.body.data.map((e: { id: number }) => e.id), [theirs.body.id], 'each owner lists only their own')
  isError(t, await s.req('GET', '/webhook-endpoints/999999', { token: a.token }), 404, 'not_found', 'unknown id')
  isError(t, await s.req('GET', '/webhook-endpoints/abc', { token: a.token }), 404, 'not_found', 'non-numeric id')
})
