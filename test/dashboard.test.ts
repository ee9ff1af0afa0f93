/**
 * The owner dashboard over HTTP (docs/dashboard.md): the pages are signed in by the web session and
 * load nothing from outside; the API pieces the pages need — owner API tokens (`/tokens`), orders
 * and revenue per day, and the orders board socket `/ws/orders/{restaurantId}`.
 */
import t from 'tap'
import { request, refusal, startServer } from './helpers/server.ts'
import { createAccount, createOwner, createPlan, envelopeProblem, postOrder, tokenFor } from './helpers/fixtures.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { nowIso } from '../src/storage/db.ts'
import { signedIn as signedInAs } from './helpers/apps.ts'
import { DASHBOARD_PAGES } from '../src/http/pages/dashboard/shell.ts'
import { STORE_TYPES } from '../src/domain/verticals.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const b = createAccount(db)

/** A signed-in browser of `ownerId`: its session row, cookie and CSRF token (as /login makes them). */
const signedIn = (ownerId: number) => signedInAs(db, ownerId)
const page = (path: string, cookie?: string) => fetch(`${s.site}${path}`, { redirect: 'manual', headers: cookie ? { cookie } : {} })
const sessionToken = async (who: { cookie: string; csrf: string }) =>
  (await request(`${s.site}/dashboard/api-token`, 'POST', { headers: { cookie: who.cookie, 'x-csrf-token': who.csrf } })).body as { token: string; expires_at: string }

t.test('signed out, every dashboard page sends the browser to /login and back', async (t) => {
  for (const path of ['/dashboard', ...DASHBOARD_PAGES.map((p) => `/dashboard/${p.path}`)]) {
    const r = await page(path)
    t.equal(r.status, 303, path)
    t.equal(r.headers.get('location'), `/login?next=${encodeURIComponent(path)}`, `${path} → /login?next=`)
  }
  const r = await page('/dashboard/menu', 'dsid=' + 'x'.repeat(43))
  t.equal(r.status, 303, 'an unknown session cookie is no one')
})

t.test('signed in: each page is the shell with the nav, the CSRF token and a strict CSP, nothing from outside', async (t) => {
  const me = signedIn(a.ownerId)
  const start = await page('/dashboard', me.cookie)
  t.equal(start.status, 303)
  t.equal(start.headers.get('location'), '/dashboard/orders')
  for (const p of DASHBOARD_PAGES) {
    const r = await page(`/dashboard/${p.path}`, me.cookie)
    const html = await r.text()
    t.equal(r.status, 200, p.path)
    t.match(r.headers.get('content-type'), /^text\/html/)
    const csp = r.headers.get('content-security-policy') ?? ''
    t.match(csp, /default-src 'none'/, `${p.path}: CSP`)
    t.match(csp, /script-src 'self'(;|$)/, 'only its own script files')
    t.notMatch(csp, /unsafe-inline|unsafe-eval|\*/, 'nothing inline or from anywhere')
    t.match(csp, /frame-ancestors 'none'/)
    t.equal(r.headers.get('cache-control'), 'no-store')
    t.match(html, `<meta name="csrf-token" content="${me.csrf}">`, 'the session\'s CSRF token for the script')
    t.match(html, `data-page="${p.path}"`)
    t.match(html, `aria-current="page">${p.title}<`, 'the nav marks the page')
    for (const q of DASHBOARD_PAGES) t.match(html, `href="/dashboard/${q.path}"`, `${p.path} links ${q.path}`)
    t.notMatch(html, /https?:\/\//, 'no absolute address: nothing from outside the server')
    t.notMatch(html, /<script>|<style>| style="/, 'no inline script or style')
    t.match(html, `name="csrf" value="${me.csrf}"`, 'the sign-out form carries the CSRF token')
  }
  t.match(await (await page('/dashboard/apps', me.cookie)).text(), '>Apps<', 'the Apps slot is in the navigation')
})

t.test('Stores: in the navigation right after Orders; an account without a store starts there', async (t) => {
  t.same(DASHBOARD_PAGES.slice(0, 2).map((p) => p.path), ['orders', 'stores'], 'Stores right after Orders')
  const storeless = signedIn(createOwner(db))
  const start = await page('/dashboard', storeless.cookie)
  t.equal(start.status, 303)
  t.equal(start.headers.get('location'), '/dashboard/stores', 'no store yet: the start is the Stores page, not a board that cannot draw')
  const html = await (await page('/dashboard/stores', storeless.cookie)).text()
  t.match(html, `data-store-types="${STORE_TYPES.join(' ')}"`, 'the store types the API accepts, for the create form')
  const withStore = signedIn(a.ownerId)
  t.equal((await page('/dashboard', withStore.cookie)).headers.get('location'), '/dashboard/orders', 'with a store: the orders board')
})

t.test('the script and the stylesheet: served to anyone, long-cached by content tag, no outside address', async (t) => {
  const me = signedIn(a.ownerId)
  const html = await (await page('/dashboard/orders', me.cookie)).text()
  const js = html.match(/src="(\/dashboard\/assets\/app\.js\?v=[0-9a-f]+)"/)?.[1]
  const css = html.match(/href="(\/dashboard\/assets\/app\.css\?v=[0-9a-f]+)"/)?.[1]
  t.ok(js && css, 'the shell loads both by content tag')
  const rj = await page(js!)
  t.equal(rj.status, 200)
  t.match(rj.headers.get('content-type'), /^text\/javascript/)
  t.match(rj.headers.get('cache-control'), /immutable/)
  const code = await rj.text()
  t.notMatch(code.replaceAll('http://www.w3.org/2000/svg', ''), /https?:\/\//, 'the script names no outside address (the SVG namespace is a name, not a request)')
  t.notMatch(code, /\.style\b|innerHTML/, 'no inline styles and no HTML built from strings')
  const rc = await page(css!)
  t.match(rc.headers.get('content-type'), /^text\/css/)
  t.notMatch(await rc.text(), /url\(|@import|https?:/, 'no fonts, images or imports')
})

t.test('the session\'s API token calls the API as the owner; the session never does on its own', async (t) => {
  const me = signedIn(a.ownerId)
  const refused = await request(`${s.site}/dashboard/api-token`, 'POST', { headers: { cookie: me.cookie } })
  t.equal(refused.status, 403, 'no CSRF token, no API token')
  const { token } = await sessionToken(me)
  t.equal((await s.req('GET', `/restaurants/${a.storeId}/orders`, { token })).status, 200)
  t.equal((await s.req('GET', `/restaurants/${a.storeId}/orders`, { headers: { cookie: me.cookie } })).status, 401, 'the cookie alone is no API credential')
  t.equal((await s.req('GET', `/restaurants/${b.storeId}/orders`, { token })).status, 404, 'another owner\'s store')
})

t.test('API tokens: created with chosen capabilities and shown once, listed without the secret, revoked at once', async (t) => {
  const expires = new Date(Date.now() + 365 * 86_400_000).toISOString()
  const made = await s.req('POST', '/tokens', { token: a.token, body: { name: 'POS', capabilities: ['orders:read', 'menu:write'], expires_at: expires } })
  t.equal(made.status, 200)
  t.match(made.body, { name: 'POS', capabilities: ['orders:read', 'menu:write'], revoked_at: null })
  t.match(made.body.token, /^dso_/)
  t.equal(made.body.prefix, made.body.token.slice(0, 10))
  t.equal(Date.parse(made.body.expires_at), Date.parse(expires))
  const raw = made.body.token as string

  t.equal((await s.req('GET', `/restaurants/${a.storeId}/orders`, { token: raw })).status, 200, 'the new token works')
  t.equal((await s.req('GET', `/restaurants/${a.storeId}/analytics`, { token: raw })).status, 403, 'within its capabilities only')

  const list = await s.req('GET', '/tokens', { token: a.token })
  t.equal(list.status, 200)
  const row = list.body.find((x: any) => x.id === made.body.id)
  t.match(row, { name: 'POS', prefix: made.body.prefix, revoked_at: null })
  t.notOk(JSON.stringify(list.body).includes(raw), 'the list never holds a token')
  t.notOk('token' in row)

  const me = signedIn(a.ownerId)
  const session = await sessionToken(me)
  const listed = (await s.req('GET', '/tokens', { token: a.token })).body.map((x: any) => x.prefix)
  t.notOk(listed.includes(session.token.slice(0, 10)), 'a dashboard session\'s own token is not listed')

  t.equal((await s.req('DELETE', `/tokens/${made.body.id}`, { token: a.token })).status, 204)
  t.equal((await s.req('GET', `/restaurants/${a.storeId}/orders`, { token: raw })).status, 401, 'revoked: refused at once')
  t.ok((await s.req('GET', '/tokens', { token: a.token })).body.find((x: any) => x.id === made.body.id).revoked_at, 'listed as revoked')
  t.equal((await s.req('DELETE', `/tokens/${made.body.id}`, { token: b.token })).status, 404, 'another owner: 404')
  t.equal((await s.req('DELETE', '/tokens/999999', { token: a.token })).status, 404)
})

t.test('API tokens: a token cannot mint more than it holds; bad input is 422 and writes nothing', async (t) => {
  const count = () => db.prepare('SELECT COUNT(*) FROM owner_tokens WHERE owner_id = ?').pluck().get(a.ownerId) as number
  const before = count()
  const writer = tokenFor(db, a.ownerId, ['write'])
  const up = await s.req('POST', '/tokens', { token: writer, body: { capabilities: ['*'] } })
  t.equal(up.status, 403, '`write` cannot make `*`')
  t.equal(envelopeProblem(up.body, 'forbidden'), null)
  t.equal((await s.req('POST', '/tokens', { token: writer, body: { capabilities: ['orders:write', 'read'] } })).status, 200, 'but can make what it holds')
  const menuOnly = tokenFor(db, a.ownerId, ['menu:write'])
  t.equal((await s.req('POST', '/tokens', { token: menuOnly, body: { capabilities: ['menu:read'] } })).status, 403, 'managing tokens needs the account-wide write')
  t.equal((await s.req('GET', '/tokens', { token: menuOnly })).status, 403)
  const afterOk = count()
  t.equal(afterOk, before + 3, 'two fixture tokens and one made')
  for (const body of [{ capabilities: [] }, { capabilities: ['orders:delete'] }, { capabilities: ['*'], expires_at: '2001-01-01T00:00:00Z' },
    { capabilities: ['*'], expires_at: 'tomorrow' }, { capabilities: ['*'], expires_at: '2099-01-01T00:00:00Z' }, { capabilities: ['*'], name: 'x'.repeat(101) }, {}]) {
    const r = await s.req('POST', '/tokens', { token: a.token, body })
    t.equal(r.status, 422, JSON.stringify(body))
    t.equal(envelopeProblem(r.body, 'validation_failed'), null)
  }
  t.equal(count(), afterOk, 'nothing written')
})

t.test('API tokens: the plan\'s api_tokens quota applies; session tokens do not count', async (t) => {
  const plan = createPlan(db, ['analytics'], { api_tokens: 2 })
  const c = createAccount(db, { plan })
  // `createAccount` made one token: one more fits.
  t.equal((await s.req('POST', '/tokens', { token: c.token, body: { capabilities: ['orders:read'] } })).status, 200)
  const full = await s.req('POST', '/tokens', { token: c.token, body: { capabilities: ['orders:read'] } })
  t.equal(full.status, 403)
  t.equal(envelopeProblem(full.body, 'plan_limit_reached'), null)
  const me = signedIn(c.ownerId)
  t.ok((await sessionToken(me)).token, 'the dashboard still gets its session token at the limit')
})

t.test('orders and revenue per day: every day of the range, cancelled orders earn nothing, refunds net of paid', async (t) => {
  const c = createAccount(db)
  const today = new Date().toISOString().slice(0, 10)
  const o1 = await postOrder(s, c.token, c.storeId, { type: 'takeaway', items: [{ item_id: c.menu.fries, quantity: 2 }] })
  const o2 = await postOrder(s, c.token, c.storeId, { type: 'takeaway', items: [{ item_id: c.menu.fries, quantity: 1 }] })
  const o3 = await postOrder(s, c.token, c.storeId, { type: 'takeaway', items: [{ item_id: c.menu.fries, quantity: 1 }] })
  t.equal(o1.status, 200)
  await s.req('PUT', `/restaurants/${c.storeId}/orders/${o2.body.id}/status`, { token: c.token, body: { status: 'cancelled' } })
  // o1 paid, then 1.00 of it refunded; o3 not paid.
  t.equal((await s.req('POST', `/restaurants/${c.storeId}/orders/${o1.body.id}/payments`, { token: c.token, body: { amount: o1.body.total, method: 'card' } })).status, 200)
  t.equal((await s.req('POST', `/restaurants/${c.storeId}/orders/${o1.body.id}/refunds`, { token: c.token, body: { amount: 1 } })).status, 200)
  const from = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10)
  const r = await s.req('GET', `/restaurants/${c.storeId}/analytics/daily?from=${from}&to=${today}`, { token: c.token })
  t.equal(r.status, 200)
  t.equal(r.body.days.length, 7, 'seven days, quiet ones included')
  const cents = (n: number) => Math.round(n * 100)
  t.same(r.body.days[6], { date: today, orders: 3, revenue: (cents(o1.body.total) + cents(o3.body.total)) / 100, paid: o1.body.total, refunded: 1, net: (cents(o1.body.total) - 100) / 100 })
  t.same(r.body.days[0], { date: from, orders: 0, revenue: 0, paid: 0, refunded: 0, net: 0 })
  // The chart and the summary agree: the days add up to the range's figures.
  const sum = (await s.req('GET', `/restaurants/${c.storeId}/analytics?from=${from}&to=${today}`, { token: c.token })).body.revenue as Record<string, number>
  const total = (k: string) => (r.body.days as Array<Record<string, number>>).reduce((n, d) => n + cents(d[k]!), 0) / 100
  t.same({ gross: total('revenue'), paid: total('paid'), refunded: total('refunded'), net: total('net') }, { gross: sum.gross, paid: sum.paid, refunded: sum.refunded, net: sum.net }, 'the days add up to the summary')
  const dflt = await s.req('GET', `/restaurants/${c.storeId}/analytics/daily`, { token: c.token })
  t.equal(dflt.body.days.length, 30, 'the last 30 days by default, as the summary')
  t.equal((await s.req('GET', `/restaurants/${c.storeId}/analytics/daily?from=2020-01-01&to=2021-12-31`, { token: c.token })).status, 422, 'at most 366 days')
  t.equal((await s.req('GET', `/restaurants/${c.storeId}/analytics/daily?from=${today}&to=${from}`, { token: c.token })).status, 422, 'from after to')
  t.equal((await s.req('GET', `/restaurants/${c.storeId}/analytics/daily`, { token: tokenFor(db, c.ownerId, ['orders:read']) })).status, 403, 'needs analytics:read')
})

t.test('the orders socket: refusals as over HTTP', async (t) => {
  const url = (id: number) => `${wsBase(s)}/ws/orders/${id}`
  t.match(await refusal(WsClient.open(url(a.storeId))), { status: 401 })
  t.match(await refusal(WsClient.open(url(a.storeId), { token: tokenFor(db, a.ownerId, ['menu:read']) })), { status: 403, body: { code: 'forbidden' } })
  t.match(await refusal(WsClient.open(url(b.storeId), { token: a.token })), { status: 404, body: { code: 'not_found' } })
  const ok = await WsClient.open(`${url(a.storeId)}?token=${tokenFor(db, a.ownerId, ['orders:read'])}`)
  t.equal((await ok.next()).type, 'snapshot', '?token= as a browser sends it')
  await ok.close()
})

t.test('the orders socket: today\'s orders, then every change of the store\'s orders', async (t) => {
  const c = createAccount(db)
  const other = createAccount(db)
  const first = await postOrder(s, c.token, c.storeId, { type: 'takeaway', items: [{ item_id: c.menu.fries, quantity: 1 }] })
  const feed = await WsClient.open(`${wsBase(s)}/ws/orders/${c.storeId}`, { token: c.token })
  const snap = await feed.next()
  t.match(snap, { type: 'snapshot', restaurant_id: c.storeId, date: new Date().toISOString().slice(0, 10) })
  t.match(snap.orders, [{ id: first.body.id, status: 'new', items: [{ name: String, quantity: 1 }] }])

  const placed = await postOrder(s, c.token, c.storeId, { type: 'takeaway', customer_name: 'Ada', items: [{ item_id: c.menu.burger.id, quantity: 2 }] })
  t.match(await feed.next((f) => f.type === 'order'), { order: { id: placed.body.id, status: 'new', customer_name: 'Ada', total: placed.body.total } }, 'a new order appears')
  await s.req('PUT', `/restaurants/${c.storeId}/orders/${placed.body.id}/status`, { token: c.token, body: { status: 'preparing' } })
  t.match(await feed.next((f) => f.type === 'order'), { order: { id: placed.body.id, status: 'preparing' } }, 'a status change moves it')

  await postOrder(s, other.token, other.storeId, { type: 'takeaway', items: [{ item_id: other.menu.fries, quantity: 1 }] })
  t.ok(await feed.none((f) => f.type === 'order' && f.order.restaurant_id !== c.storeId, 300), 'nothing of another store')
  feed.send({ type: 'refresh' })
  t.equal((await feed.next((f) => f.type === 'snapshot')).orders.length, 2)
  await feed.close()
})

t.test('the orders socket: "today" is the store\'s local day in its time zone', async (t) => {
  const c = createAccount(db)
  // Kiritimati is UTC+14 all year (no DST): its local midnight is 10:00 UTC of the previous UTC day.
  const put = await s.req('PUT', `/restaurants/${c.storeId}/settings`, { token: c.token, body: { timezone: 'Pacific/Kiritimati' } })
  t.equal(put.status, 200, put.text)
  const localNow = new Date(Date.now() + 14 * 3_600_000)
  const localDate = localNow.toISOString().slice(0, 10)
  const localMidnight = Date.parse(`${localDate}T00:00:00Z`) - 14 * 3_600_000
  const order = async (createdAt: number) => {
    const r = await postOrder(s, c.token, c.storeId, { type: 'takeaway', items: [{ item_id: c.menu.fries, quantity: 1 }] })
    db.prepare('UPDATE orders SET created_at = ? WHERE id = ?').run(nowIso(createdAt), r.body.id)
    return r.body.id as number
  }
  const yesterday = await order(localMidnight - 60_000)
  const today = await order(localMidnight + 60_000)
  const feed = await WsClient.open(`${wsBase(s)}/ws/orders/${c.storeId}`, { token: c.token })
  const snap = await feed.next()
  t.equal(snap.date, localDate, 'the local date, not the UTC one')
  const ids = snap.orders.map((o: { id: number }) => o.id)
  t.ok(ids.includes(today), 'an order a minute after local midnight is today\'s')
  t.notOk(ids.includes(yesterday), 'an order a minute before it is yesterday\'s')
  await feed.close()
})

t.test('the orders socket closes when its token is revoked from the dashboard', async (t) => {
  const made = await s.req('POST', '/tokens', { token: a.token, body: { capabilities: ['orders:read'] } })
  const feed = await WsClient.open(`${wsBase(s)}/ws/orders/${a.storeId}`, { token: made.body.token })
  await feed.next()
  await s.req('DELETE', `/tokens/${made.body.id}`, { token: a.token })
  t.equal((await feed.closedWithin()).code, 4001)
})
