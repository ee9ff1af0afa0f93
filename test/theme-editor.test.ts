/**
 * The store website's editor (issue 34 item 12; docs/themes.md "Editing from the dashboard"), from
 * outside: `GET /restaurants/{id}/themes` lists the themes a store may use with the schemas a
 * settings form is generated from and the values saved for each; `POST /restaurants/{id}/theme/preview`
 * draws the store's page with unsaved values, checked exactly as `PUT …/theme` checks them, and
 * writes nothing; the dashboard's frame address `POST /dashboard/stores/{id}/theme-preview` answers
 * the same page to the owner's session only (CSRF, 404 for another account's store), never cached,
 * not indexed, sandboxed, framed by the site only.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createStore, tokenFor } from './helpers/fixtures.ts'
import { csrfOf, session, signedUp, visit } from './helpers/owner-site.ts'
import { builtinTheme } from '../src/themes/builtin/index.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const themeRow = (id: number) => db.prepare('SELECT * FROM store_themes WHERE store_id = ?').get(id) as Record<string, unknown> | undefined
const classic = builtinTheme('classic')!

interface Choice { key: string; active: boolean; usable: boolean; settings: Array<{ id?: string; type: string }>; sections: Array<{ key: string; name: string; pages: string[]; settings: Array<{ id?: string }>; blocks: Array<{ type: string }>; max_blocks?: number }>; values: { settings: Record<string, unknown>; sections: Record<string, { settings: Record<string, unknown>; blocks: unknown[] }> } }
const themes = async (id: number, token: string) => {
  const r = await s.req('GET', `/restaurants/${id}/themes`, { token })
  return { status: r.status, body: r.body, list: (r.body?.data ?? []) as Choice[] }
}
const preview = (id: number, token: string, body: unknown) => s.req('POST', `/restaurants/${id}/theme/preview`, { token, body })

t.test('the themes a store may use, with their schemas and the values saved for each', async (t) => {
  const a = createAccount(db)
  const r = await themes(a.storeId, a.token)
  t.equal(r.status, 200)
  t.same(r.list.map((c) => [c.key, c.active, c.usable]), [['classic', true, true], ['market', false, true]], 'the built-in themes; the store\'s choice is active')
  const c = r.list[0]!
  t.same(c.settings.map((x) => x.type), ['header', 'color', 'color', 'select', 'range'], 'the theme-wide settings as the layout declares them')
  t.equal(c.sections[0]!.key, 'header', 'header first')
  t.equal(c.sections.at(-1)!.key, 'footer', 'footer last')
  const hero = c.sections.find((x) => x.key === 'hero')!
  t.match(hero, { name: 'Hero', pages: ['home'], settings: [{ id: 'heading' }, { id: 'subheading' }, { id: 'button_label' }, { id: 'padding', type: 'range', min: 0, max: 96, step: 8 }] })
  t.same(c.sections.find((x) => x.key === 'header')!.pages, ['*'], 'a section of the layout is on every page')
  t.match(c.sections.find((x) => x.key === 'highlights'), { max_blocks: 4, blocks: [{ type: 'highlight', name: 'Highlight' }] })
  t.match(c.values, { settings: { accent_color: '#a4321a', corner_radius: 10 }, sections: { hero: { settings: { padding: 24 } } } }, 'defaults filled in')
  t.equal(c.values.sections.highlights!.blocks.length, 2, 'the preset\'s blocks')
  t.notOk(themeRow(a.storeId), 'reading writes nothing')

  t.equal((await s.req('PUT', `/restaurants/${a.storeId}/theme`, { token: a.token, body: { template: 'market', settings: { corner_radius: 4 } } })).status, 200)
  const after = await themes(a.storeId, a.token)
  t.same(after.list.map((x) => x.active), [false, true], 'the new choice is active')
  t.equal(after.list[1]!.values.settings.corner_radius, 4, 'market\'s saved value')
  t.equal(after.list[0]!.values.settings.corner_radius, 10, 'classic keeps its own values')

  // An uploaded theme is listed after the built-in ones, with its own schemas.
  const files = { ...classic.files, 'sections/promo.liquid': '<p>{{ section.settings.line }}</p>{% schema %}{"name": "Promo", "settings": [{"type": "text", "id": "line", "label": "Line", "default": "Hi"}]}{% endschema %}', 'templates/home.liquid': `${classic.files['templates/home.liquid']}{% section "promo" %}` }
  t.equal((await s.req('PUT', `/restaurants/${a.storeId}/theme/custom`, { token: a.token, body: { files } })).status, 200)
  const custom = (await themes(a.storeId, a.token)).list.find((x) => x.key === 'custom')!
  t.match(custom, { key: 'custom', active: false, usable: true, builtin: false })
  t.match(custom.sections.find((x) => x.key === 'promo'), { name: 'Promo', pages: ['home'] })

  // Its preview is drawn by the theme pool, with an unsaved value of its own section.
  const drawn = await preview(a.storeId, a.token, { template: 'custom', sections: { promo: { settings: { line: 'Promo line 9' } } } })
  t.equal(drawn.status, 200)
  t.match(drawn.body, { template: 'custom', fallback: false, problems: [] })
  t.match(drawn.body.html, /<p>Promo line 9<\/p>/, 'the uploaded theme with the unsaved value')
  t.match((await preview(a.storeId, a.token, { template: 'custom', sections: { promo: { settings: { line: 5 } } } })).body.errors, { 'sections.promo.settings.line': ['must be a string'] }, 'checked against the uploaded schema')
})

t.test('the preview draws unsaved values, checked as saving checks them, and writes nothing', async (t) => {
  const a = createAccount(db)
  const before = await fetch(`${s.site}/s/${a.slug}`).then((r) => r.text())
  const r = await preview(a.storeId, a.token, { template: 'classic', settings: { accent_color: '#123456' }, sections: { hero: { settings: { heading: 'Preview heading 42' } } } })
  t.equal(r.status, 200)
  t.match(r.body, { template: 'classic', page: 'home', fallback: false, problems: [] })
  t.match(r.body.html, /Preview heading 42/, 'the unsaved heading')
  t.match(r.body.html, /#123456/, 'the unsaved colour')
  t.ok(r.body.html.includes(`nonce="${r.body.style_nonce}"`), 'its styles carry the answered nonce')
  t.notOk(themeRow(a.storeId), 'nothing written')
  t.equal(await fetch(`${s.site}/s/${a.slug}`).then((x) => x.text()).then((x) => x.includes('Preview heading 42')), false, 'the public website is unchanged')
  t.ok(before.length > 0)

  const market = await preview(a.storeId, a.token, { template: 'market', page: 'menu' })
  t.match(market.body, { template: 'market', page: 'menu' })
  t.match(market.body.html, /All products/, 'another theme, another page')
  const item = await preview(a.storeId, a.token, { page: 'item' })
  t.match(item.body.html, /Burger/, 'the item page shows the first item')
  t.equal((await preview(a.storeId, a.token, { page: 'item', item_id: 999999 })).status, 422, 'an item of no menu')

  // The same refusal, word for word, as saving the same values.
  const bad = { sections: { hero: { settings: { padding: 1000, heading: 'x' } }, nope: { settings: {} } }, settings: { accent_color: 'red' } }
  const refused = await preview(a.storeId, a.token, bad)
  const saved = await s.req('PUT', `/restaurants/${a.storeId}/theme`, { token: a.token, body: bad })
  t.equal(refused.status, 422)
  t.match(refused.body, { code: 'validation_failed', reason: String })
  t.same(refused.body.errors, saved.body.errors, 'the messages of PUT …/theme')
  t.match(refused.body.errors, { 'sections.hero.settings.padding': ['must be between 0 and 96'], 'settings.accent_color': [/colour/], 'sections.nope': [/no section/] })
  t.equal((await preview(a.storeId, a.token, { template: 'custom' })).status, 422, 'no custom theme to preview')
  t.match((await preview(a.storeId, a.token, { page: 'order' })).body.errors, { page: [String] })
  t.notOk(themeRow(a.storeId), 'still nothing written')
})

t.test('who may preview', async (t) => {
  const a = createAccount(db)
  const other = createAccount(db)
  t.equal((await preview(a.storeId, tokenFor(db, a.ownerId, ['restaurants:read']), {})).status, 200, 'reading the store is enough: nothing is written')
  t.equal((await preview(a.storeId, tokenFor(db, a.ownerId, ['menu:read']), {})).status, 403)
  const foreign = await preview(other.storeId, a.token, { sections: { nope: null } })
  t.equal(foreign.status, 404, 'another account\'s store, whatever the body')
  t.equal((await themes(other.storeId, a.token)).status, 404)
  t.equal((await s.req('POST', `/restaurants/${a.storeId}/theme/preview`, { body: {} })).status, 401)
})

t.test('the dashboard\'s frame address: the session\'s stores only, never cached or indexed, sandboxed', async (t) => {
  const { email, ownerId } = await signedUp(s)
  const store = createStore(db, ownerId)
  const foreign = createAccount(db)
  const { cookie, csrf } = await session(s, email)
  const path = (id: number) => `/dashboard/stores/${id}/theme-preview`
  const values = JSON.stringify({ sections: { hero: { settings: { heading: 'Framed 77' } } } })

  const ok = await visit(s, 'POST', path(store.id), { cookie, form: { csrf, template: 'classic', page: 'home', values } })
  t.equal(ok.status, 200)
  t.match(ok.text, /Framed 77/)
  t.match(ok.text, /<meta name="robots" content="noindex, nofollow">/)
  const csp = ok.headers.get('content-security-policy') ?? ''
  t.match(csp, /^sandbox allow-popups allow-popups-to-escape-sandbox;/, 'sandboxed: no scripts, no forms, no origin of its own; links open a tab')
  t.match(ok.text, /<base target="_blank">/)
  t.match(csp, /frame-ancestors 'self'/)
  t.match(csp, /form-action 'none'/)
  const nonce = /style-src 'nonce-([^']+)'/.exec(csp)?.[1]
  t.ok(nonce && ok.text.includes(`nonce="${nonce}"`), 'the theme\'s styles by this response\'s nonce')
  t.equal(ok.headers.get('cache-control'), 'no-store')
  t.equal(ok.headers.get('x-robots-tag'), 'noindex, nofollow')
  t.equal(ok.headers.get('x-frame-options'), 'SAMEORIGIN')
  t.notOk(themeRow(store.id), 'nothing written')

  const noCsrf = await visit(s, 'POST', path(store.id), { cookie, form: { template: 'classic', values } })
  t.equal(noCsrf.status, 403, 'without the session\'s CSRF token')
  const crossSite = await visit(s, 'POST', path(store.id), { cookie, form: { csrf, values }, origin: 'https://evil.example' })
  t.equal(crossSite.status, 403, 'from another site')
  const signedOut = await visit(s, 'POST', path(store.id), { form: { csrf, values } })
  t.equal(signedOut.status, 303, 'signed out: to the sign-in page')
  const notMine = await visit(s, 'POST', path(foreign.storeId), { cookie, form: { csrf, values } })
  t.equal(notMine.status, 404, 'another account\'s store')
  t.notMatch(notMine.text, /Framed 77/)
  const bad = await visit(s, 'POST', path(store.id), { cookie, form: { csrf, values: JSON.stringify({ sections: { hero: { settings: { padding: 7 } } } }) } })
  t.equal(bad.status, 422)
  t.match(bad.text, /sections\.hero\.settings\.padding: must be on a step of 8/, 'the field and its message')
  t.equal(bad.headers.get('cache-control'), 'no-store')
  const junk = await visit(s, 'POST', path(store.id), { cookie, form: { csrf, values: '{"settings": [' } })
  t.equal(junk.status, 422, 'values that are not JSON')
  t.notOk(themeRow(store.id), 'nothing written by any of them')

  // The Website page may frame this site; the other pages frame nothing.
  const page = await visit(s, 'GET', `/dashboard/website?store=${store.id}`, { cookie })
  t.equal(page.status, 200)
  t.match(page.headers.get('content-security-policy'), /frame-src 'self'/)
  t.equal(csrfOf(page.text) === '' ? 'meta' : 'form', 'form', 'the sign-out form carries the token')
  const orders = await visit(s, 'GET', '/dashboard/orders', { cookie })
  t.notMatch(orders.headers.get('content-security-policy'), /frame-src/)
})
