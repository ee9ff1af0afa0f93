/**
 * The store website over plain HTTP, as a browser without JavaScript uses it (issue 15 items 2-3;
 * docs/website.md): pages, the cart cookie, form posts with CSRF, checkout ending on the live
 * tracking page, sign-in and saved addresses, closed stores, sold-out items, CSP, ETags, size.
 */
import t from 'tap'
import { gzipSync } from 'node:zlib'
import { startServer, type TestServer } from './helpers/server.ts'
import type { RecordingSmsProvider } from '../src/providers/sms.ts'
import { createAccount, createCustomer, createMenu, createStore, createCategory, createItem, tokenFor } from './helpers/fixtures.ts'

/** A cookie jar and form poster: what a browser does with the site's cookies and forms. */
class Visitor {
  jar = new Map<string, string>()
  constructor(readonly site: string) {}
  cookieHeader() { return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ') }
  keep(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';')
      const i = pair!.indexOf('=')
      const name = pair!.slice(0, i)
      const value = pair!.slice(i + 1)
      if (/Max-Age=0/.test(c)) this.jar.delete(name)
      else this.jar.set(name, value)
    }
  }
  async get(url: string, headers: Record<string, string> = {}) {
    const res = await fetch(url, { headers: { cookie: this.cookieHeader(), ...headers }, redirect: 'manual' })
    this.keep(res)
    return { res, status: res.status, text: await res.text() }
  }
  async post(url: string, fields: Record<string, string | string[]>, headers: Record<string, string> = {}, withCsrf = true) {
    const body = new URLSearchParams()
    for (const [k, v] of Object.entries(fields)) for (const x of [v].flat()) body.append(k, x)
    if (withCsrf && !body.has('csrf')) body.set('csrf', this.jar.get('csrf') ?? '')
    const res = await fetch(url, {
      method: 'POST', body, redirect: 'manual',
      headers: { cookie: this.cookieHeader(), origin: this.site, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    })
    this.keep(res)
    return { res, status: res.status, text: await res.text(), location: res.headers.get('location') }
  }
}

const orderCount = (s: TestServer) => s.app.svc.db.prepare('SELECT COUNT(*) FROM orders').pluck().get() as number
const orderByToken = (s: TestServer, token: string) => s.app.svc.db.prepare('SELECT * FROM orders WHERE track_token = ?').get(token) as Record<string, any>

let s: TestServer
t.before(async () => { s = await startServer() })
t.teardown(() => s.close())

function shop() {
  const acct = createAccount(s.app.svc.db)
  const store = createStore(s.app.svc.db, acct.ownerId, { settings: { business_hours: null } })
  const menu = createMenu(s.app.svc.db, store.id)
  const url = `${s.site}/s/${store.slug}`
  return { acct, store, menu, url }
}

t.test('the pages render with the store theme, a strict CSP with nonces, no external assets, and ETags', async (t) => {
  const { url, menu } = shop()
  const v = new Visitor(s.site)
  for (const path of ['', '/menu', `/items/${menu.burger.id}`, '/cart', '/checkout', '/account/login']) {
    const r = await v.get(url + path)
    t.equal(r.status, 200, `${path || '/'} answers`)
    const csp = r.res.headers.get('content-security-policy') ?? ''
    const scriptNonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1]
    const styleNonce = /style-src 'nonce-([^']+)'/.exec(csp)?.[1]
    t.ok(scriptNonce && styleNonce, 'CSP names a nonce for scripts and one for styles')
    t.not(scriptNonce, styleNonce, 'two different nonces: the theme knows only the style one')
    t.match(csp, /default-src 'none'/)
    t.ok(csp.includes(`form-action ${url}/;`), 'forms post under the store\'s own address only')
    const tags = [...r.text.matchAll(/<(script|style)\b([^>]*)>/g)]
    t.ok(tags.length > 0)
    t.ok(tags.every((m) => m[2]!.includes(`nonce="${m[1] === 'script' ? scriptNonce : styleNonce}"`)), 'every inline script and style carries its nonce')
    t.notMatch(r.text, /(src|href)="https?:\/\//, 'no external assets or links')
    const etag = r.res.headers.get('etag')!
    t.match(etag, /^W\/"/)
    const again = await v.get(url + path, { 'if-none-match': etag })
    t.equal(again.status, 304, 'revalidation with the ETag answers 304')
    t.equal(again.res.headers.get('content-security-policy'), null, '304 keeps the stored CSP (its nonce matches the stored page)')
  }
  t.match((await v.get(url + '/menu')).text, /Sold out/, 'a sold-out item is marked on the menu')
})

t.test('a guest orders takeaway without JavaScript: cart cookie, checkout post, 303 to the tracking page', async (t) => {
  const { url, menu } = shop()
  const v = new Visitor(s.site)
  const item = await v.get(`${url}/items/${menu.burger.id}`)
  t.match(item.text, new RegExp(`name="csrf" value="${v.jar.get('csrf')}"`), 'the form carries the cookie\'s CSRF token')
  const add = await v.post(`${url}/cart`, { item_id: String(menu.burger.id), variation_id: String(menu.burger.double), extra_ids: [String(menu.burger.cheese)], quantity: '2' })
  t.equal(add.status, 303)
  t.equal(add.location, `/s/${url.split('/s/')[1]}/cart`)
  t.ok(v.jar.get('cart'), 'the cart is a cookie')
  t.match(add.res.headers.getSetCookie().find((c) => c.startsWith('cart='))!, /HttpOnly; SameSite=Lax/)
  const cart = await v.get(`${url}/cart`)
  t.match(cart.text, /2 × Burger \(Double\)/)
  t.match(cart.text, /\$33\.00/, '(15.00 + 1.50) × 2, priced by the server')
  t.match(cart.text, /<span data-cart-count>2<\/span>/)

  const before = orderCount(s)
  const placed = await v.post(`${url}/checkout`, { type: 'takeaway', customer_name: 'Ada', customer_phone: '+15550001111', note: 'no onions', tip: '2' })
  t.equal(placed.status, 303, placed.text.slice(0, 400))
  const m = /\/t\/([\w-]+)$/.exec(placed.location ?? '')
  t.ok(m, 'redirected to the live tracking page')
  t.equal(orderCount(s), before + 1)
  const order = orderByToken(s, m![1]!)
  t.equal(order.type, 'takeaway')
  t.equal(order.total, 3300 + 200, 'total recomputed by the server, with the tip')
  t.equal(order.note, 'no onions')
  t.equal(order.source, 'website')
  t.notOk(v.jar.has('cart'), 'the cart is emptied')
  t.equal((await v.get(placed.location!)).status, 200, 'the tracking page answers')
})

t.test('a checkout posted twice (double tap, retry) places one order', async (t) => {
  const { url, menu } = shop()
  const v = new Visitor(s.site)
  await v.get(url)
  await v.post(`${url}/cart`, { item_id: String(menu.fries), quantity: '1' })
  const jar = new Map(v.jar)
  const form = { type: 'takeaway', customer_name: 'Ada', customer_phone: '+15550001111' }
  const before = orderCount(s)
  const first = await v.post(`${url}/checkout`, form)
  v.jar = jar // the second post left the browser before the first answer cleared the cart
  const second = await v.post(`${url}/checkout`, form)
  t.equal(first.status, 303)
  t.equal(second.location, first.location, 'the same order\'s tracking page')
  t.equal(orderCount(s), before + 1, 'one order')
  // The next cart is another order, even with the same content.
  await v.post(`${url}/cart`, { item_id: String(menu.fries), quantity: '1' })
  const next = await v.post(`${url}/checkout`, form)
  t.not(next.location, first.location)
  t.equal(orderCount(s), before + 2)
})

t.test('on-table as a guest needs a table number; delivery needs an account', async (t) => {
  const { url, menu } = shop()
  const v = new Visitor(s.site)
  await v.get(url)
  await v.post(`${url}/cart`, { item_id: String(menu.fries), quantity: '1' })
  const before = orderCount(s)
  const noTable = await v.post(`${url}/checkout`, { type: 'on-table', customer_name: 'Ada', customer_phone: '+15550001111' })
  t.equal(noTable.status, 422)
  t.match(noTable.text, /table number is required/)
  t.match(noTable.text, /value="Ada"/, 'the form keeps what was typed')
  const delivery = await v.post(`${url}/checkout`, { type: 'delivery', customer_name: 'Ada', customer_phone: '+15550001111', address: '1 Main St' })
  t.equal(delivery.status, 422)
  t.match(delivery.text, /Sign in to order this way/)
  t.equal(orderCount(s), before, 'nothing written')
  const ok = await v.post(`${url}/checkout`, { type: 'on-table', table_number: '7', customer_name: 'Ada', customer_phone: '+15550001111' })
  t.equal(ok.status, 303)
  t.equal(orderByToken(s, ok.location!.split('/t/')[1]!).table_number, '7')
})

t.test('posts without the CSRF token or from another origin are refused and change nothing', async (t) => {
  const { url, menu } = shop()
  const v = new Visitor(s.site)
  await v.get(url)
  const add = { item_id: String(menu.fries), quantity: '1' }
  t.equal((await v.post(`${url}/cart`, add, {}, false)).status, 403, 'no csrf field')
  t.equal((await v.post(`${url}/cart`, { ...add, csrf: 'x'.repeat(32) })).status, 403, 'a csrf field that is not the cookie\'s')
  t.equal((await v.post(`${url}/cart`, add, { origin: 'https://evil.example' })).status, 403, 'another Origin')
  t.equal((await v.post(`${url}/cart`, add, { origin: '', referer: 'https://evil.example/x' })).status, 403, 'no Origin and another Referer')
  t.equal((await v.post(`${url}/cart`, add, { origin: 'null' })).status, 403, 'Origin: null (names no site) and no Referer')
  t.equal((await v.post(`${url}/cart`, add, { origin: 'null', referer: 'https://evil.example/x' })).status, 403, 'Origin: null and another Referer')
  t.notOk(v.jar.has('cart'), 'no cart was set')
  t.equal((await v.post(`${url}/cart`, add, { origin: '', referer: `${url}/menu` })).status, 303, 'no Origin but the site\'s Referer: accepted')
  t.equal((await v.post(`${url}/cart`, add, { origin: 'null', referer: `${url}/menu` })).status, 303, 'Origin: null with the site\'s Referer: accepted')
  const before = orderCount(s)
  const forged = await v.post(`${url}/checkout`, { type: 'takeaway', customer_name: 'Eve', customer_phone: '+15550002222' }, { origin: 'https://evil.example' })
  t.equal(forged.status, 403)
  t.equal(orderCount(s), before, 'no order from a forged post')
  const json = await fetch(`${url}/cart`, { method: 'POST', headers: { origin: s.site, 'content-type': 'application/json', cookie: v.cookieHeader() }, body: '{}' })
  t.equal(json.status, 415, 'forms only')
})

t.test('sold-out items cannot be added, and a cart holding one cannot order it', async (t) => {
  const { url, menu } = shop()
  const v = new Visitor(s.site)
  const page = await v.get(`${url}/items/${menu.soup}`)
  t.match(page.text, /<button class="btn" type="button" disabled>Sold out<\/button>/)
  const add = await v.post(`${url}/cart`, { item_id: String(menu.soup), quantity: '1' })
  t.equal(add.status, 422)
  t.match(add.text, /Soup is sold out/)
  t.notOk(v.jar.has('cart'))
  const js = await v.post(`${url}/cart`, { item_id: String(menu.soup), quantity: '1' }, { accept: 'application/json' })
  t.equal(js.status, 422)
  t.same(JSON.parse(js.text), { added: false, message: 'Soup is sold out.', item_count: 0 })
  // A cart cookie written by hand (the browser keeps it): the server prices it again and leaves the soup out.
  v.jar.set('cart', Buffer.from(JSON.stringify({ l: [[menu.soup, 1, null, []]], c: null })).toString('base64url'))
  const before = orderCount(s)
  const checkout = await v.post(`${url}/checkout`, { type: 'takeaway', customer_name: 'Ada', customer_phone: '+15550001111' })
  t.equal(checkout.status, 422)
  t.match(checkout.text, /Soup is no longer available/)
  t.equal(orderCount(s), before)
})

t.test('the script\'s add answers JSON with the new count', async (t) => {
  const { url, menu } = shop()
  const v = new Visitor(s.site)
  await v.get(url)
  const r = await v.post(`${url}/cart`, { item_id: String(menu.fries), quantity: '3' }, { accept: 'application/json' })
  t.equal(r.status, 200)
  t.same(JSON.parse(r.text), { added: true, message: 'Added to your cart.', item_count: 3 })
  t.ok(v.jar.get('cart'))
})

t.test('a coupon lowers the total the server charges', async (t) => {
  const s2 = s
  const demo = s2.seed()
  const v = new Visitor(s2.site)
  const menu = await (await fetch(`${s2.base}/storefront/menu`, { headers: { 'x-storefront-token': demo.store.storefront_token } })).json() as Array<{ items: Array<{ id: number; price: number; is_sold_out: boolean; variations: unknown[] }> }>
  const item = menu.flatMap((c) => c.items).find((i) => !i.is_sold_out && i.variations.length === 0)!
  await v.get(demo.store.url)
  const qty = Math.ceil(20 / item.price)
  await v.post(`${demo.store.url}/cart`, { item_id: String(item.id), quantity: String(qty) })
  const coupon = await v.post(`${demo.store.url}/cart`, { op: 'coupon', coupon_code: demo.coupon.code })
  t.equal(coupon.status, 303)
  const cart = await v.get(`${demo.store.url}/cart`)
  t.match(cart.text, /Discount \(WELCOME10\)/)
  const placed = await v.post(`${demo.store.url}/checkout`, { type: 'takeaway', customer_name: 'Ada', customer_phone: '+15550001111' })
  t.equal(placed.status, 303, placed.text.slice(0, 300))
  const order = orderByToken(s2, placed.location!.split('/t/')[1]!)
  const subtotal = Math.round(item.price * 100) * qty
  t.equal(order.total, subtotal - Math.round(subtotal / 10), '10% off')
})

t.test('a closed store says when it opens, disables ordering, and the server refuses anyway', async (t) => {
  const acct = createAccount(s.app.svc.db)
  const store = createStore(s.app.svc.db, acct.ownerId, { settings: { timezone: 'UTC', business_hours: { mon: [['09:00', '09:01']] } } })
  const cat = createCategory(s.app.svc.db, store.id, 'Food')
  const item = createItem(s.app.svc.db, store.id, cat, 'Bread', 300)
  const url = `${s.site}/s/${store.slug}`
  const v = new Visitor(s.site)
  const home = await v.get(url)
  t.match(home.text, /We are closed right now\. Opens Mon 09:00\./)
  await v.post(`${url}/cart`, { item_id: String(item), quantity: '1' })
  const checkout = await v.get(`${url}/checkout`)
  t.match(checkout.text, /<button class="btn" type="submit" disabled>/)
  const before = orderCount(s)
  const placed = await v.post(`${url}/checkout`, { type: 'takeaway', customer_name: 'Ada', customer_phone: '+15550001111' })
  t.equal(placed.status, 422)
  t.match(placed.text, /closed/i)
  t.equal(orderCount(s), before)
})

t.test('a signed-in customer saves an address and orders delivery to it', async (t) => {
  const { url, store, menu } = shop()
  const c = createCustomer(s.app.svc.db, store.id)
  const v = new Visitor(s.site)
  t.equal((await v.get(`${url}/account`)).res.headers.get('location'), `/s/${store.slug}/account/login`, 'the account page signs in first')
  const wrong = await v.post(`${url}/account/login`, { email: c.email, password: 'wrong-password' })
  t.equal(wrong.status, 422)
  t.match(wrong.text, /Wrong email or password/)
  const ok = await v.post(`${url}/account/login`, { email: c.email, password: c.password })
  t.equal(ok.status, 303)
  const set = ok.res.headers.getSetCookie().find((x) => x.startsWith('customer='))!
  t.match(set, new RegExp(`Path=/s/${store.slug}; Max-Age=\\d+; HttpOnly; SameSite=Lax`), 'HttpOnly, Lax, scoped to the store')
  t.equal((await v.post(`${url}/account/addresses`, { label: 'Home', address: '12 Elm Street', is_default: 'on' })).status, 303)
  const account = await v.get(`${url}/account`)
  t.match(account.text, /<strong>Home<\/strong>: 12 Elm Street/)
  await v.post(`${url}/cart`, { item_id: String(menu.fries), quantity: '2' })
  const checkout = await v.get(`${url}/checkout`)
  t.match(checkout.text, /value="delivery"/, 'delivery is offered to a signed-in customer')
  const addressId = /<option value="(\d+)" data-fee="[^"]*" selected>Home: 12 Elm Street/.exec(checkout.text)?.[1]
  t.ok(addressId, 'the saved address is offered')
  const placed = await v.post(`${url}/checkout`, { type: 'delivery', address_id: addressId!, customer_name: 'Cust', customer_phone: c.phone })
  t.equal(placed.status, 303, placed.text.slice(0, 400))
  const order = orderByToken(s, placed.location!.split('/t/')[1]!)
  t.equal(order.type, 'delivery')
  t.equal(order.address, '12 Elm Street')
  t.equal(order.customer_id, c.id)
  t.equal((await v.post(`${url}/account/logout`, {})).status, 303)
  t.notOk(v.jar.has('customer'), 'signed out')
})

t.test('sign-in by SMS code', async (t) => {
  const { url, menu } = shop()
  const v = new Visitor(s.site)
  await v.get(`${url}/account/login`)
  await v.post(`${url}/cart`, { item_id: String(menu.fries), quantity: '1' })
  const phone = '+15557654321'
  const sent = await v.post(`${url}/account/otp`, { phone })
  t.equal(sent.status, 200)
  t.match(sent.text, /Code sent to \+15557654321/)
  const code = /(\d{6}) is your/.exec((s.app.svc.sms as RecordingSmsProvider).sent.findLast((m) => m.to === phone)!.body)![1]!
  const ok = await v.post(`${url}/account/otp/verify`, { phone, code })
  t.equal(ok.status, 303)
  t.ok(v.jar.has('customer'))
  const checkout = await v.get(`${url}/checkout`)
  t.match(checkout.text, /value="delivery"/, 'signed in: delivery is offered')
})

t.test('creating an account signs in; an email already used is refused with the reason', async (t) => {
  const { url, store } = shop()
  const v = new Visitor(s.site)
  await v.get(`${url}/account/login`)
  const email = `new-${store.id}@customer.test`
  const ok = await v.post(`${url}/account/register`, { name: 'Grace', email, password: 'long-enough-pw' })
  t.equal(ok.status, 303)
  t.ok(v.jar.has('customer'))
  t.match((await v.get(`${url}/account`)).text, /Grace · new-/)
  const again = await new Visitor(s.site).post(`${url}/account/register`, { name: 'Eve', email, password: 'long-enough-pw' }, {}, false)
  t.equal(again.status, 403, 'no CSRF cookie yet: refused before anything')
  const w = new Visitor(s.site)
  await w.get(`${url}/account/login`)
  const dup = await w.post(`${url}/account/register`, { name: 'Eve', email, password: 'long-enough-pw' })
  t.equal(dup.status, 422)
  t.match(dup.text, /already exists/)
  t.notOk(w.jar.has('customer'))
})

t.test('a customer token of another store is no one here', async (t) => {
  const a = shop()
  const b = shop()
  const c = createCustomer(s.app.svc.db, b.store.id)
  const v = new Visitor(s.site)
  v.jar.set('customer', c.token)
  const r = await v.get(`${a.url}/account`)
  t.equal(r.status, 303, 'asked to sign in')
})

t.test('unknown stores and items get pages, not JSON', async (t) => {
  const { url } = shop()
  const r = await fetch(`${s.site}/s/no-such-store-here/menu`)
  t.equal(r.status, 404)
  t.match(r.headers.get('content-type') ?? '', /text\/html/)
  t.equal((await fetch(`${url}/items/999999`)).status, 404)
})

t.test('first page weight: HTML+CSS+JS of the demo store\'s home and menu pages under 50 KB', async (t) => {
  const demo = s.seed()
  for (const path of ['', '/menu']) {
    const r = await fetch(demo.store.url + path)
    const html = await r.text()
    const bytes = Buffer.byteLength(html)
    t.comment(`demo store ${path || '/'}: ${bytes} bytes, ${gzipSync(html).length} gzipped (HTML with inline CSS and JS, no other requests)`)
    t.ok(bytes < 50_000, `${path || '/'} is ${bytes} bytes`)
  }
})

t.test('an owner token on the page is nothing: pages take no API credentials', async (t) => {
  const { url, acct } = shop()
  const token = tokenFor(s.app.svc.db, acct.ownerId, ['restaurants:read'])
  const r = await fetch(`${url}/account`, { headers: { authorization: `Bearer ${token}` }, redirect: 'manual' })
  t.equal(r.status, 303)
})

t.test('sign-in attempts are limited per address and store, as the API\'s customer login', async (t) => {
  const a = shop()
  const b = shop()
  const v = new Visitor(s.site)
  await v.get(`${a.url}/account/login`)
  const statuses: number[] = []
  for (let i = 0; i < 11; i++) statuses.push((await v.post(`${a.url}/account/login`, { email: 'nobody@example.test', password: 'wrong-password' })).status)
  t.same(statuses.slice(0, 10), Array(10).fill(422), 'ten wrong attempts are answered')
  t.equal(statuses[10], 429, 'the eleventh within the minute is refused')
  const w = new Visitor(s.site)
  await w.get(`${b.url}/account/login`)
  t.equal((await w.post(`${b.url}/account/login`, { email: 'nobody@example.test', password: 'wrong-password' })).status, 422, 'another store\'s sign-in still answers')
})
