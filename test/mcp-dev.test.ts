/**
 * The dev MCP server (issue 12 item 7, api-v1 §4.11; docs/mcp-dev.md) driven by the official SDK
 * client with no credential: the seven tools, the platform overview, docs search and fetch (and
 * that fetch serves nothing off its allow-list), the webhook catalog with payload schemas, and the
 * theme tools on the theme engine (good and broken themes, a built-in section's schema).
 */
import t from 'tap'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { startServer } from './helpers/server.ts'
import { connectMcp, callTool } from './helpers/mcp.ts'
import { builtinTheme } from '../src/themes/builtin/index.ts'
import { OBJECTS, FILTERS, THEME_LIMITS } from '../src/themes/reference.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const dev = await connectMcp(s, '/mcp/dev')
t.teardown(() => dev.close())

t.test('tools/list has the seven dev tools, without any credential', async (t) => {
  const { tools } = await dev.listTools()
  t.same(tools.map((x) => x.name).sort(), ['fetch_full_doc', 'get_liquid_reference', 'get_section_schema', 'learn_platform', 'list_webhook_events', 'search_docs', 'validate_theme'])
  for (const x of tools) t.equal(x.annotations?.readOnlyHint, true, `${x.name} is read-only`)
})

t.test('learn_platform gives the overview an agent reads first', async (t) => {
  const r = await callTool(dev, 'learn_platform')
  t.equal(r.isError, false)
  t.match(r.json.summary, /MCP/)
  t.same(r.json.mcp_servers.map((m: { path: string }) => new URL(m.path).pathname), ['/mcp', '/mcp/storefront', '/mcp/customer', '/mcp/catalog', '/mcp/dev'])
  t.ok(r.json.docs.includes('README.md') && r.json.docs.includes('docs/themes.md'), 'where the docs are')
  t.ok(r.json.events.names.includes('order.created'))
})

t.test('search_docs finds sections of the README, docs/ and the OpenAPI document', async (t) => {
  const themes = await callTool(dev, 'search_docs', { query: 'section schema settings', limit: 5 })
  t.equal(themes.isError, false)
  t.ok(themes.json.results.length > 0 && themes.json.results.length <= 5)
  t.equal(themes.json.results[0].path, 'docs/themes.md', 'the themes doc ranks first for a themes question')
  const signing = await callTool(dev, 'search_docs', { query: 'webhook signature secret' })
  t.ok(signing.json.results.some((x: { path: string }) => x.path === 'docs/webhooks.md'))
  const api = await callTool(dev, 'search_docs', { query: 'validate theme files', limit: 20 })
  t.ok(api.json.results.some((x: { path: string; heading: string }) => x.path === 'openapi.json' && x.heading === 'POST /themes/validate'), 'OpenAPI operations are searchable')
  const none = await callTool(dev, 'search_docs', { query: 'qwxzyv' })
  t.same(none.json.results, [])
})

t.test('fetch_full_doc serves whole docs from its allow-list only', async (t) => {
  const readme = await callTool(dev, 'fetch_full_doc', { path: 'README.md' })
  t.equal(readme.isError, false)
  t.equal(readme.json.path, 'README.md')
  t.ok(readme.json.content.length > 100)
  const short = await callTool(dev, 'fetch_full_doc', { path: 'themes' })
  t.equal(short.json.path, 'docs/themes.md', 'a doc by its bare name')
  const openapi = await callTool(dev, 'fetch_full_doc', { path: 'openapi.json' })
  t.equal(JSON.parse(openapi.json.content).openapi, '3.1.0')
  for (const path of ['../package.json', 'docs/../package.json', '/etc/passwd', 'package.json', 'src/config.ts', 'docs/../../etc/passwd']) {
    const r = await callTool(dev, 'fetch_full_doc', { path })
    t.equal(r.isError, true, `${path} is refused`)
    t.equal(r.json.code, 'not_found', `${path}: not_found`)
    t.notMatch(JSON.stringify(r.json), /"name":\s*"dispatch-server"/, `${path}: nothing of the file leaks`)
  }
})

t.test('list_webhook_events gives every event with its payload schema', async (t) => {
  const r = await callTool(dev, 'list_webhook_events')
  t.equal(r.isError, false)
  const ent = r.json.events.find((e: { name: string }) => e.name === 'entitlement.changed')
  t.ok(ent, 'entitlement.changed is listed')
  t.same(ent.data_schema.required.sort(), ['action', 'feature_key', 'occurred_at', 'source_id', 'source_type', 'user_id'])
  t.same(ent.data_schema.properties.action.enum, ['granted', 'revoked'])
  const one = await callTool(dev, 'list_webhook_events', { event: 'subscription.*' })
  t.ok(one.json.events.length > 1 && one.json.events.every((e: { name: string }) => e.name.startsWith('subscription.')))
  const unknown = await callTool(dev, 'list_webhook_events', { event: 'nope.nothing' })
  t.equal(unknown.json.code, 'not_found')
})

t.test('get_liquid_reference answers the reference the engine enforces', async (t) => {
  const r = await callTool(dev, 'get_liquid_reference')
  t.same(r.json.objects.map((o: { name: string }) => o.name), OBJECTS.map((o) => o.name))
  t.same(r.json.filters.map((f: { name: string }) => f.name), FILTERS.map((f) => f.name))
  t.ok(r.json.tags.some((x: { name: string }) => x.name === 'section'))
  t.ok(r.json.setting_types.some((x: { type: string }) => x.type === 'range'))
  t.ok(r.json.problem_codes.unknown_filter)
})

t.test('get_section_schema answers a built-in section\'s schema', async (t) => {
  const r = await callTool(dev, 'get_section_schema', { section: 'hero' })
  t.equal(r.isError, false)
  t.match(r.json, { theme: 'classic', section: 'hero', file: 'sections/hero.liquid', schema: { name: 'Hero' } })
  t.ok(r.json.schema.settings.some((x: { id: string; type: string }) => x.id === 'padding' && x.type === 'range'))
  const market = await callTool(dev, 'get_section_schema', { theme: 'market', section: 'product-grid' })
  t.equal(market.json.schema.name, 'Product grid')
  const missing = await callTool(dev, 'get_section_schema', { section: 'nope' })
  t.equal(missing.json.code, 'not_found')
  t.ok(missing.json.details.sections.includes('hero'), 'the sections that exist')
  const noTheme = await callTool(dev, 'get_section_schema', { theme: '../classic', section: 'hero' })
  t.equal(noTheme.json.code, 'not_found')
})

t.test('validate_theme: a good theme is valid, a broken one is reported with file and line', async (t) => {
  const files = builtinTheme('market')!.files
  const good = await callTool(dev, 'validate_theme', { files })
  t.match(good.json, { valid: true, problems: [] })
  const broken = {
    ...files,
    'sections/banner.liquid': files['sections/banner.liquid']!.replace('{{ menu.url }}', '{{ menu.url | linkify }}'),
    'templates/home.liquid': `${files['templates/home.liquid']}{% section "missing" %}\n`,
  }
  const bad = await callTool(dev, 'validate_theme', { files: broken })
  t.equal(bad.isError, false, 'problems are a result, not a failure')
  t.equal(bad.json.valid, false)
  t.match(bad.json.problems, [
    { file: 'sections/banner.liquid', line: 4, code: 'unknown_filter' },
    { file: 'templates/home.liquid', line: 3, code: 'missing_section' },
  ])
})

t.test('validate_theme refuses more files than a theme may have', async (t) => {
  const many = Object.fromEntries(Array.from({ length: THEME_LIMITS.maxFiles + 1 }, (_, i) => [`sections/s${i}.liquid`, '']))
  let err: unknown
  try { await dev.callTool({ name: 'validate_theme', arguments: { files: many } }) } catch (e) { err = e }
  t.ok(err instanceof McpError, 'bad arguments are a JSON-RPC error')
  t.equal((err as McpError).code, -32602)
})

t.test('the theme validator is bound over HTTP too (same operation)', async (t) => {
  const r = await s.req('POST', '/themes/validate', { body: { files: { 'layout/theme.liquid': '{{ nope }}' } } })
  t.equal(r.status, 200)
  t.equal(r.body.valid, false)
  t.ok(r.body.problems.some((p: { code: string; file: string; line: number }) => p.code === 'unknown_object' && p.file === 'layout/theme.liquid' && p.line === 1))
  const many = Object.fromEntries(Array.from({ length: THEME_LIMITS.maxFiles + 1 }, (_, i) => [`sections/s${i}.liquid`, '']))
  const tooMany = await s.req('POST', '/themes/validate', { body: { files: many } })
  t.equal(tooMany.status, 422)
  t.equal(tooMany.body.code, 'validation_failed')
})
