/**
 * The OpenAPI document is usable by people and generators (issue 20 item 7): named component
 * schemas referenced instead of inlined, a description on every operation, query parameters typed
 * as clients send them, response headers and error statuses documented as they really answer,
 * examples that match their schemas, webhooks that say how they are signed.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, postOrder } from './helpers/fixtures.ts'
import { checkSchema } from './helpers/jsonschema.ts'
import { deref } from './helpers/openapi.ts'
import { fill, liveRoutes, type Route } from './helpers/routes.ts'
import { buildOpenApi, docPath } from '../src/http/openapi.ts'
import { named } from '../src/ops/schemas/named.ts'
import { route } from '../src/http/route.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const acct = createAccount(s.app.svc.db)
const doc = (await s.req('GET', '/openapi.json')).body as Record<string, any>
const METHODS = ['get', 'put', 'post', 'delete', 'patch']
const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
  Object.entries(item).filter(([m]) => METHODS.includes(m)).map(([method, op]) => ({ path, method, op })))
const schemaOf = (path: string, method: string, status = '200') => doc.paths[path][method].responses[status].content['application/json'].schema

t.test('shared shapes are named components, referenced by $ref and never inlined', async (t) => {
  const names = Object.keys(doc.components.schemas)
  for (const n of ['Order', 'OrderPage', 'OrderInput', 'Store', 'StorePage', 'MenuItem', 'MenuCategory', 'Driver', 'Delivery', 'Customer', 'Staff', 'Coupon', 'WebhookEndpoint', 'Error']) {
    t.ok(names.includes(n), `components.schemas.${n}`)
  }
  t.same(schemaOf('/restaurants/{id}/orders', 'post'), { $ref: '#/components/schemas/Order' }, 'order create answers an Order')
  t.same(schemaOf('/restaurants/{id}/orders', 'get'), { $ref: '#/components/schemas/OrderPage' }, 'the order list is an OrderPage')
  t.same(doc.components.schemas.OrderPage.properties.data.items, { $ref: '#/components/schemas/Order' }, 'whose items are Orders')
  t.same(schemaOf('/restaurants/{id}/menu', 'get').items, { $ref: '#/components/schemas/MenuCategory' })
  t.same(doc.paths['/restaurants/{id}/orders'].post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/OrderInput' })
  // No component's body is copied anywhere else: every use is a reference.
  const pathsText = JSON.stringify(doc.paths)
  for (const [name, schema] of Object.entries(doc.components.schemas as Record<string, unknown>)) {
    const text = JSON.stringify(schema)
    if (text.length > 60) t.notOk(pathsText.includes(text), `${name} is not inlined in an operation`)
  }
  const refs = [...JSON.stringify(doc).matchAll(/"#\/components\/(\w+)\/([\w.-]+)"/g)]
  for (const [, kind, name] of refs) t.ok(doc.components[kind!]?.[name!], `#/components/${kind}/${name} resolves`)
})

t.test('one name, one shape: a second shape under a taken name is an error', async (t) => {
  const a = named('TwinShape', { type: 'object', properties: { a: { type: 'string' } } })
  const same = named('TwinShape', { type: 'object', properties: { a: { type: 'string' } } })
  const other = named('TwinShape', { type: 'object', properties: { b: { type: 'integer' } } })
  const at = (path: string, response: Record<string, unknown>) => route({ method: 'GET', path, tag: 'T', summary: 's', auth: 'none', response, handler: () => null }) as Route
  const built = buildOpenApi([at('/a', a), at('/b', same)], s.app.svc.config) as any
  t.same(built.paths['/b'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/TwinShape' }, 'the same shape built twice is one component')
  t.throws(() => buildOpenApi([at('/a', a), at('/c', other)], s.app.svc.config), /two different schemas are named TwinShape/)
})

t.test('every array says what it holds, as generators that predate prefixItems read it too', async (t) => {
  const untyped: string[] = []
  const tuples: Array<Record<string, any>> = []
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) return node.forEach((x, i) => walk(x, `${at}/${i}`))
    if (typeof node !== 'object' || node === null) return
    const o = node as Record<string, any>
    const isArray = o.type === 'array' || (Array.isArray(o.type) && o.type.includes('array'))
    if (isArray && (typeof o.items !== 'object' || o.items === null)) untyped.push(at)
    if (o.prefixItems) tuples.push(o)
    for (const [k, v] of Object.entries(o)) walk(v, `${at}/${k}`)
  }
  walk(doc, '#')
  t.same(untyped, [], 'no array without items (Spectral array-items)')
  // Business hours' [open, close] intervals: a tuple says its element type and its exact length.
  t.ok(doc.paths['/restaurants/{id}/business-hours'].put && tuples.length > 0, 'the business-hours intervals are tuples')
  // …and delivery zones' [lng, lat] positions (docs/dispatch.md) are pairs of numbers.
  for (const x of tuples) {
    const kind = x.prefixItems.every((p: { type?: string }) => p.type === 'number') ? 'number' : 'string'
    t.match(x, { items: { type: kind }, minItems: x.prefixItems.length, maxItems: x.prefixItems.length }, `a pair of ${kind}s`)
  }
  t.ok(tuples.some((x) => x.items.type === 'number'), 'zone positions are tuples too')
})

t.test('every operation has a description', async (t) => {
  for (const { path, method, op } of operations) t.ok(typeof op.description === 'string' && op.description.trim().length > 20, `${method} ${path} is described`)
  t.match(doc.paths['/restaurants/{id}/orders'].get.description, /orders:read/, 'the generated part names the capability')
})

t.test('query parameters are typed as the client sends them', async (t) => {
  const query = operations.flatMap(({ path, method, op }) => (op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => ({ at: `${method} ${path}`, ...p })))
  const page = query.filter((p) => p.name === 'page')
  t.ok(page.length > 5, 'paged lists take page')
  for (const p of page) t.match(p.schema, { type: 'integer', minimum: 1 }, `${p.at}: page is an integer`)
  t.match(query.find((p) => p.at === 'get /driver/deliveries' && p.name === 'active')?.schema, { type: 'boolean' }, 'active is a boolean')
  t.match(query.find((p) => p.at === 'get /catalog/stores' && p.name === 'limit')?.schema, { type: 'integer', minimum: 1, maximum: 50 })
  for (const p of query) {
    t.notOk(p.schema.type === 'string' && /^\^(?:\[[0-9-]+\]|\\d|\{\d+(?:,\d+)?\}|[0-9]|[()|])+\$$/.test(p.schema.pattern ?? ''), `${p.at} ${p.name}: no number left typed as a digit string`)
    t.notOk(p.schema.anyOf, `${p.at} ${p.name}: one type, not a union of the parsed forms`)
  }
  // The typed forms are what the server accepts.
  t.equal((await s.req('GET', `/restaurants/${acct.storeId}/orders?page=2`, { token: acct.token })).status, 200)
})

t.test('response headers are documented and really sent', async (t) => {
  t.same(Object.keys(doc.components.headers).sort(), ['Idempotent-Replayed', 'Location', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-Request-Id'])
  for (const { path, method, op } of operations) {
    // The success answer; an address that only redirects (`status: 303`) succeeds with its 303.
    const ok = (Object.entries(op.responses).find(([c]) => /^2/.test(c)) ?? ['303', op.responses['303']])[1] as any
    t.ok(ok.headers?.['X-Request-Id'] && ok.headers?.['X-RateLimit-Remaining'], `${method} ${path}: success headers`)
  }
  const create = doc.paths['/restaurants/{id}/orders'].post
  t.ok(create.responses['200'].headers['Idempotent-Replayed'], 'Idempotent-Replayed on the idempotent order create')
  t.notOk(doc.paths['/restaurants/{id}/orders/{orderId}/status'].put.responses['200'].headers['Idempotent-Replayed'], 'and not where no key is taken')
  t.ok(deref(doc, create.responses['429']).headers['Retry-After'], 'Retry-After on 429')

  const body = { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] }
  const first = await s.req('POST', `/restaurants/${acct.storeId}/orders`, { token: acct.token, body, headers: { 'idempotency-key': 'docs-replay-1' } })
  const again = await s.req('POST', `/restaurants/${acct.storeId}/orders`, { token: acct.token, body, headers: { 'idempotency-key': 'docs-replay-1' } })
  t.equal(again.body.id, first.body.id)
  t.equal(again.headers.get('idempotent-replayed'), 'true', 'the replay says so, as documented')
  for (const name of Object.keys(create.responses['200'].headers).filter((h) => h !== 'Idempotent-Replayed')) t.ok(first.headers.get(name), `${name} is sent`)
})

t.test('error statuses: each with its codes, and every status a route really answers is documented', async (t) => {
  for (const [name, r] of Object.entries(doc.components.responses as Record<string, any>)) {
    const media = r.content['application/json']
    const examples = media.examples ? Object.values(media.examples as Record<string, { value: any }>).map((e) => e.value) : [media.example]
    for (const ex of examples) {
      t.same(checkSchema(doc.components.schemas.Error, ex, doc), [], `${name}: the example ${ex?.reason} is an envelope`)
      t.match(r.description, new RegExp('`' + ex.code + '`'), `${name} names its code ${ex.code}`)
      t.match(r.description, new RegExp('`' + ex.reason + '`'), `${name} lists the reason ${ex.reason}`)
    }
  }
  const unprocessable = doc.components.responses.ValidationFailed.content['application/json'].examples
  t.same(Object.values(unprocessable).map((e: any) => Object.keys(e.value.errors)), [['items.0.quantity'], ['body']], '422 examples: a field, and the request as a whole')
  t.match(deref(doc, doc.paths['/restaurants/{id}/orders'].post.responses['422']).description, /validation_failed/)
  // Probe every route where nothing can run: no credential, an id that does not exist, a broken
  // body. Whatever each answers must be a status its operation lists by number, not only `4XX`.
  const probes: Array<{ r: Route; url: string; headers: Record<string, string>; body?: string }> = []
  const broken = { 'content-type': 'application/json' }
  for (const r of liveRoutes()) {
    const key = docPath(r)
    const root = r.site ? s.site : s.base
    const url = root + fill(key, {}, 999999)
    const body = r.body ? '{"broken' : undefined
    probes.push({ r, url, headers: r.body ? broken : {}, body })
    const owner = { authorization: `Bearer ${acct.token}` }
    if (r.auth === 'owner' && (r.body || /\{\w+\}/.test(key))) probes.push({ r, url, headers: { ...owner, ...(r.body ? broken : {}) }, body })
    if (r.auth === 'owner' && r.body) probes.push({ r, url: root + fill(key, { id: acct.storeId }, 999999), headers: { ...owner, 'content-type': 'text/plain' }, body: 'x' })
  }
  const missing: string[] = []
  for (const { r, url, headers, body } of probes) {
    const res = await fetch(url, { method: r.method, headers, body, redirect: 'manual' })
    const text = await res.text()
    const op = doc.paths[docPath(r)][r.method.toLowerCase()]
    if (res.status >= 300 && !op.responses[String(res.status)]) missing.push(`${r.method} ${docPath(r)} answered ${res.status} ${text.slice(0, 80)}`)
  }
  t.same(missing, [], `${probes.length} probes: every status answered is documented`)
})

t.test('examples match the schemas they illustrate', async (t) => {
  let n = 0
  for (const { path, method, op } of operations) {
    for (const [status, res] of Object.entries(op.responses as Record<string, any>)) {
      const media = res.content?.['application/json']
      if (media?.example !== undefined) { n++; t.same(checkSchema(media.schema, media.example, doc), [], `${method} ${path} ${status} example`) }
    }
    const req = op.requestBody?.content?.['application/json']
    if (req?.example !== undefined) { n++; t.same(checkSchema(deref(doc, req.schema), req.example, doc), [], `${method} ${path} request example`) }
  }
  t.ok(n >= 15, `${n} examples`)
  const create = doc.paths['/restaurants/{id}/orders'].post
  t.ok(create.requestBody.content['application/json'].example && create.responses['200'].content['application/json'].example, 'order create has a request and a response example')
  // The order example is what the server really accepts.
  const ex = create.requestBody.content['application/json'].example
  const real = await postOrder(s, acct.token, acct.storeId, { ...ex, items: [{ item_id: acct.menu.burger.id, quantity: 2, variation: acct.menu.burger.double, extras: [acct.menu.burger.cheese] }] })
  t.equal(real.status, 200, 'the example order, with this store\'s ids, is accepted')
  t.same(checkSchema(create.responses['200'].content['application/json'].schema, real.body, doc), [])
})

t.test('webhooks say how a receiver verifies them; tags are described', async (t) => {
  const hooks = Object.entries(doc.webhooks as Record<string, any>)
  t.ok(hooks.length > 10)
  for (const [name, item] of hooks) t.same(item.post.security, [{ webhookSignature: [] }], `${name} is signed`)
  t.match(doc.components.securitySchemes.webhookSignature, { type: 'apiKey', in: 'header', name: 'webhook-signature' })
  for (const tag of doc.tags) t.ok(tag.description, `tag ${tag.name} is described`)
  t.match(doc.info.license, { name: 'MIT' })
})
