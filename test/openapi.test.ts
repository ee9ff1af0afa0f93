/**
 * Discovery (api-v1 §4.1, §5, §9): the OpenAPI 3.1 document generated from the live route table
 * (validated with a real OpenAPI validator; real responses checked against its schemas) and the
 * machine-readable index.
 */
import t from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { startServer } from './helpers/server.ts'
import { createAccount, postOrder } from './helpers/fixtures.ts'
import { checkSchema } from './helpers/jsonschema.ts'
import { deref, undocumented } from './helpers/openapi.ts'
import { fill, liveRoutes, paramsOf } from './helpers/routes.ts'
import { fullPath } from '../src/http/server.ts'
import { documentedRoutes } from '../src/http/openapi.ts'
import { ALL_OPS } from '../src/ops/index.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const acct = createAccount(s.app.svc.db)
const res = await s.req('GET', '/openapi.json')
const doc = res.body as Record<string, any>
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace']
const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
  Object.entries(item).filter(([m]) => METHODS.includes(m)).map(([method, op]) => ({ path, method, op })))

t.test('the document is served as JSON and is valid OpenAPI 3.1', async (t) => {
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^application\/json/)
  const validator = new Validator()
  const result = await validator.validate(structuredClone(doc))
  t.ok(result.valid, `valid OpenAPI: ${JSON.stringify(result.errors)?.slice(0, 2000)}`)
  t.equal(validator.version, '3.1')
  t.equal(doc.openapi, '3.1.0')
  t.equal(doc.info.version, 'v1')
  t.equal(doc.servers[0].url, s.base, '{base_url} is SITE_URL/api/v1')
})

t.test('it covers every live route, each with a 2xx and a 4XX response', async (t) => {
  const routes = documentedRoutes(liveRoutes())
  t.same(liveRoutes().filter((r) => r.openapi === false).map((r) => `${r.method} ${r.path}`), ['GET /'], 'all but the site\'s start page, whose key `/` is the discovery index\'s')
  t.equal(doc.paths['/'].get['x-operation'], undefined)
  t.match(doc.paths['/'].get.summary, /index/i, '`/` is the discovery index under {base_url}')
  for (const r of routes) {
    const key = r.site ? r.path : fullPath(r).slice('/api/v1'.length) || '/'
    const op = doc.paths[key]?.[r.method.toLowerCase()]
    if (!t.ok(op, `${r.method} ${key} is documented`)) continue
    const success = String(r.status ?? 200)
    t.ok(op.responses[success], `${r.method} ${key} documents ${success}`)
    if (r.body) t.ok(op.requestBody?.content?.['application/json']?.schema, `${r.method} ${key} documents its JSON body`)
    if (r.site) t.equal(op.servers?.[0]?.url ?? doc.paths[key].servers?.[0]?.url, s.site, `${key} is served from the site root`)
  }
  t.equal(operations.length, routes.length, 'nothing documented that is not a route')
  for (const { path, method, op } of operations) {
    const codes = Object.keys(op.responses)
    // An address that only redirects (`status: 303`: the shell's handoff) has its 303 instead.
    t.ok(codes.some((c) => ['200', '201', '204'].includes(c)) || (op.responses['303'] && !codes.some((c) => c.startsWith('2'))), `${method} ${path} has a 2xx, or only its redirect`)
    t.ok(op.responses['4XX'], `${method} ${path} has 4XX`)
    t.equal(deref(doc, op.responses['4XX'])?.content?.['application/json']?.schema?.$ref, '#/components/schemas/Error', `${method} ${path} 4XX is the §7 envelope`)
    const declared = (op.parameters ?? []).filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name).sort()
    t.same(declared, paramsOf(path).sort(), `${method} ${path} declares its path parameters`)
    t.ok(op.tags?.length === 1 && typeof op.summary === 'string', `${method} ${path} has a tag and summary`)
  }
  const ids = operations.map((o) => o.op.operationId)
  t.equal(new Set(ids).size, ids.length, 'operationIds are unique')
  const orderCreate = doc.paths['/restaurants/{id}/orders'].post
  t.ok(orderCreate.parameters.some((p: { name: string; in: string }) => p.name === 'Idempotency-Key' && p.in === 'header'), 'Idempotency-Key documented')
  const orderBody = deref(doc, orderCreate.requestBody.content['application/json'].schema)
  t.same([...orderBody.required].sort(), ['items', 'type'], 'order input: type and items required')
  t.ok(orderBody.properties.type.enum.includes('takeaway'))
  t.match(deref(doc, orderBody.properties.items.items).properties.quantity, { type: 'integer', minimum: 1 }, 'quantity: positive integer')
  t.equal(orderBody.properties.items.minItems, 1)
  const analyticsParams = doc.paths['/restaurants/{id}/analytics'].get.parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name)
  t.same(analyticsParams.sort(), ['from', 'to'], 'analytics query documented')
  t.ok(doc.paths['/restaurants/{id}/orders'].get.parameters.some((p: { name: string; in: string }) => p.name === 'status' && p.in === 'query'), 'status filter documented')
})

t.test('the three security schemes of §5', async (t) => {
  const schemes = doc.components.securitySchemes as Record<string, any>
  const all = Object.values(schemes)
  t.ok(all.some((x) => x.type === 'http' && x.scheme === 'bearer'), 'bearer token')
  t.ok(all.some((x) => x.type === 'apiKey' && x.in === 'header' && x.name === 'X-Storefront-Token'), 'X-Storefront-Token header')
  const oauth = all.find((x) => x.type === 'oauth2')
  t.ok(oauth?.flows?.authorizationCode, 'oauth2 authorization code')
  t.equal(oauth?.flows?.authorizationCode?.authorizationUrl, `${s.site}/oauth/authorize`)
  t.equal(oauth?.flows?.authorizationCode?.tokenUrl, `${s.site}/oauth/token`)
  t.same(oauth?.flows?.authorizationCode?.scopes, {}, 'no scopes listed there')
  const name = (test: (x: any) => boolean) => Object.entries(schemes).find(([, x]) => test(x))![0]
  const bearer = name((x) => x.type === 'http' && x.scheme === 'bearer')
  const storefront = name((x) => x.type === 'apiKey' && x.name === 'X-Storefront-Token')
  const oauth2 = name((x) => x.type === 'oauth2')
  const cookie = name((x) => x.type === 'apiKey' && x.in === 'cookie')
  const three = [{ [bearer]: [] }, { [storefront]: [] }, { [oauth2]: [] }]
  // What each credential family really takes (api-v1 §5 table; the dashboard's web session).
  const takes: Record<string, unknown[]> = {
    none: [], owner: [{ [bearer]: [] }, { [oauth2]: [] }], storefront: [{ [storefront]: [] }], driver: [{ [bearer]: [] }],
    staff: [{ [bearer]: [] }], customer: [{ [bearer]: [] }], shell: [{ [bearer]: [] }], session: [{ [cookie]: [] }],
  }
  for (const r of documentedRoutes(liveRoutes())) {
    const key = r.site ? r.path : fullPath(r).slice('/api/v1'.length) || '/'
    const op = doc.paths[key][r.method.toLowerCase()]
    const at = `${r.method} ${key}`
    t.same(op.security.slice(0, 3), three, `${at} lists the three schemes of §5`)
    t.same(op['x-auth'], { credential: r.auth, security: takes[r.auth] }, `${at}: x-auth names the ${r.auth} credential and the schemes that carry it`)
    // Nothing else, except what keeps `security` true for tools that read only it.
    t.same(op.security.slice(3), r.auth === 'none' ? [{}] : r.auth === 'session' ? [{ [cookie]: [] }] : [], `${at}: ${r.auth === 'none' ? 'no credential needed ({})' : 'no other scheme'}`)
    t.equal(op['x-required-capability'], r.capability, `${at} names its capability`)
    t.equal(op['x-required-permission'], r.permission, `${at} names its permission or scope`)
    for (const req of op.security) for (const n of Object.keys(req)) t.ok(schemes[n], `${n} is a declared scheme`)
  }
  // A credential outside what x-auth says is refused; a public operation answers without one.
  const sf = await s.req('GET', '/restaurants', { headers: { 'x-storefront-token': 'sf_not-for-this' } })
  t.equal(sf.status, 401, 'an owner operation refuses X-Storefront-Token, as its x-auth says')
  t.equal((await s.req('GET', `/menu/${acct.storeId}`)).status, 200, 'a public operation answers without a credential, as {} says')
})

t.test('every operation of ALL_OPS is documented, under the id of the operation each address binds', async (t) => {
  const documented = new Set<string>()
  for (const r of documentedRoutes(liveRoutes())) {
    const key = r.site ? r.path : fullPath(r).slice('/api/v1'.length) || '/'
    const op = doc.paths[key][r.method.toLowerCase()]
    t.equal(op['x-operation'], r.op?.id, `${r.method} ${key} names its operation`)
    if (r.op) documented.add(r.op.id)
  }
  for (const op of ALL_OPS) t.ok(documented.has(op.id), `${op.id} is documented`)
  const index = (await s.req('GET', '/')).body as { groups: Record<string, Array<{ operation?: string }>> }
  const listed = new Set(Object.values(index.groups).flat().map((e) => e.operation).filter(Boolean))
  for (const op of ALL_OPS) t.ok(listed.has(op.id), `${op.id} is in the discovery index`)
})

t.test('real responses match the documented schemas', async (t) => {
  const schemaFor = (path: string, method: string, status: string) =>
    doc.paths[path][method].responses[status].content['application/json'].schema
  const check = (what: string, schema: Record<string, unknown>, body: unknown) => {
    const problems = checkSchema(schema, body, doc)
    t.same(problems, [], `${what} matches its schema`)
  }
  const tk = { token: acct.token }
  const o = await postOrder(s, acct.token, acct.storeId, { type: 'delivery', address: 'a', tip_amount: 1, items: [{ item_id: acct.menu.burger.id, quantity: 1, variation: acct.menu.burger.double, extras: [acct.menu.burger.cheese] }] })
  check('order create', schemaFor('/restaurants/{id}/orders', 'post', '200'), o.body)
  const st = await s.req('PUT', `/restaurants/${acct.storeId}/orders/${o.body.id}/status`, { ...tk, body: { status: 'ready' } })
  t.equal(st.status, 200, 'PUT status')
  check('order status', schemaFor('/restaurants/{id}/orders/{orderId}/status', 'put', '200'), st.body)
  const cases: Array<[string, string]> = [
    ['/me', '/me'],
    ['/restaurants', '/restaurants'],
    ['/restaurants/{id}', `/restaurants/${acct.storeId}`],
    ['/restaurants/{id}/menu', `/restaurants/${acct.storeId}/menu`],
    ['/restaurants/{id}/orders', `/restaurants/${acct.storeId}/orders`],
    ['/restaurants/{id}/orders/{orderId}', `/restaurants/${acct.storeId}/orders/${o.body.id}`],
    ['/restaurants/{id}/analytics', `/restaurants/${acct.storeId}/analytics`],
    ['/restaurants/{id}/menu/items/{itemId}/variants', `/restaurants/${acct.storeId}/menu/items/${acct.menu.burger.id}/variants`],
    ['/restaurants/{id}/menu/items/{itemId}/variants/{variantId}', `/restaurants/${acct.storeId}/menu/items/${acct.menu.burger.id}/variants/${acct.menu.burger.single}`],
    ['/menu/{restaurantId}', `/menu/${acct.storeId}`],
    ['/track/{token}', `/track/${o.body.track_token}`],
    ['/dev/platform', '/dev/platform'],
    ['/themes/liquid-reference', '/themes/liquid-reference'],
    ['/', ''],
  ]
  for (const [docPath, url] of cases) {
    const r = await s.req('GET', url, tk)
    t.equal(r.status, 200, `GET ${url}`)
    check(`GET ${docPath}`, schemaFor(docPath, 'get', '200'), r.body)
  }
  const cat = await s.req('POST', `/restaurants/${acct.storeId}/menu/categories`, { ...tk, body: { name: 'C' } })
  check('category create', schemaFor('/restaurants/{id}/menu/categories', 'post', '200'), cat.body)
  const item = await s.req('POST', `/restaurants/${acct.storeId}/menu/items`, { ...tk, body: { category_id: cat.body.id, name: 'I', price: 1, extras: [{ name: 'E', price: 0.5 }], variations: [{ name: 'V' }] } })
  check('item create', schemaFor('/restaurants/{id}/menu/items', 'post', '200'), item.body)
  const so = await s.req('PATCH', `/restaurants/${acct.storeId}/menu/items/${item.body.id}/sold-out`, tk)
  check('sold-out', schemaFor('/restaurants/{id}/menu/items/{itemId}/sold-out', 'patch', '200'), so.body)
  for (const [what, r] of [['401', await s.req('GET', '/me')], ['404', await s.req('GET', '/nope')], ['422', await s.req('GET', '/restaurants?page=0', tk)]] as const) {
    check(`error ${what}`, doc.components.schemas.Error, r.body)
  }
  t.same(checkSchema({ type: 'object', required: ['x'] }, {}, doc).length, 1, 'the checker itself catches a missing field')
})

t.test('pages are documented as pages: what they serve, their own 404 included, is text/html', async (t) => {
  // Form posts (the store website) answer 303 or their page again: what a GET serves is checked here.
  const pages = documentedRoutes(liveRoutes()).filter((r) => r.method === 'GET' && r.produces?.startsWith('text/html'))
  t.same(pages.map((r) => r.path).filter((p) => ['/t/{token}', '/s/{slug}', '/kds', '/docs'].includes(p)).sort(), ['/docs', '/kds', '/s/{slug}', '/t/{token}'], 'the tracking page, store page, kitchen screen and docs index are pages')
  const o = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
  // appId: the app embed page (issue 16); signed out it leads to the sign-in page, itself a page.
  const existing: Record<string, string> = { token: o.body.track_token, slug: acct.slug, item: String(acct.menu.fries), appId: '1', name: 'webhooks' }
  for (const r of pages) {
    const op = doc.paths[r.path]?.[r.method.toLowerCase()]
    if (!t.ok(op, `${r.path} is documented`)) continue
    if (r.status === 303) t.ok(op.responses['303']?.headers?.Location, `${r.path}: its redirect is documented`)
    else t.ok(op.responses['200']?.content?.[r.produces!], `${r.path}: 200 is documented as ${r.produces}`)
    for (const [code, what] of Object.entries(r.pageErrors ?? {})) {
      t.ok(op.responses[code]?.content?.[r.produces!], `${r.path}: ${code} is documented as ${r.produces} (${what})`)
    }
    // What each address really serves, found or not (signed out: a redirect), is what the document says for that status.
    const urls = paramsOf(r.path).length === 0 ? [r.path] : [fill(r.path, existing), fill(r.path, {}, 'no-such-thing-42')]
    for (const url of urls) {
      const res = await fetch(s.site + url, { redirect: 'manual' })
      const answer = { status: res.status, contentType: res.headers.get('content-type'), body: await res.text(), location: res.headers.get('location') }
      t.equal(undocumented(doc, op, answer), null, `GET ${url} answered ${res.status} ${answer.contentType ?? ''}, as documented`)
    }
  }
  for (const url of ['/t/trk_nope', '/s/no-such-store']) {
    const res = await fetch(s.site + url)
    t.equal(res.status, 404, `${url}: 404`)
    t.match(res.headers.get('content-type'), /^text\/html/, `${url}: a page, as documented`)
    t.match(await res.text(), /<!doctype html>/i)
  }
})

t.test('the discovery index', async (t) => {
  const r = await s.req('GET', '')
  t.equal(r.status, 200)
  const idx = r.body
  t.match(idx, { name: String, version: 'v1', base_url: s.base, authentication: String, docs: String, openapi: `${s.base}/openapi.json` })
  t.match(idx.authentication, /Bearer/)
  t.equal((await s.req('GET', idx.openapi)).status, 200, 'the openapi address answers')
  const docs = await s.req('GET', idx.docs)
  t.equal(docs.status, 200, 'the docs address answers')
  t.match(docs.headers.get('content-type'), /text\/html/)
  const listed = Object.entries(idx.groups as Record<string, Array<{ method: string; path: string; summary: string; auth: string }>>)
    .flatMap(([tag, entries]) => entries.map((e) => ({ tag, ...e })))
  const routes = liveRoutes()
  t.equal(listed.length, routes.length, 'every route listed once')
  for (const r of routes) {
    const path = r.site ? `${s.site}${r.path}` : fullPath(r).slice('/api/v1'.length) || '/'
    t.ok(listed.some((e) => e.tag === r.tag && e.method === r.method && e.path === path && e.auth === r.auth && e.summary === r.summary), `${r.method} ${path} under ${r.tag}`)
  }
  t.same(Object.keys(idx.groups).sort(), doc.tags.map((x: { name: string }) => x.name).sort(), 'the same tags as the OpenAPI document')
  t.ok(idx.groups.Orders && idx.groups.Menu && idx.groups.Restaurants, 'grouped by tag')
})
