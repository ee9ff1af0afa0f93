/**
 * Developer operations (issue 12 item 7, api-v1 §4.11 dev server; issue 15 themes): public, no
 * credential, read-only. The dev MCP server (src/mcp/servers/dev.ts) and a few HTTP routes
 * (src/http/routes/dev.ts) bind them: the platform overview an agent reads first, search and
 * fetch over the product's own docs, the webhook event catalog, and the theme tools on the
 * theme engine (src/themes).
 */
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { obj, str } from '../schemas/named.ts'
import { ApiError, notFound, tableInWords, WHOLE_REQUEST } from '../../errors.ts'
import { EVENT_CATALOG } from '../../domain/webhook-events.ts'
import { docNames, fetchDoc, searchDocs } from './dev-docs.ts'
import { LIQUID_REFERENCE, THEME_LIMITS } from '../../themes/reference.ts'
import { BUILTIN_THEMES, builtinTheme } from '../../themes/builtin/index.ts'
import { checkTheme } from '../../themes/pool.ts'
import { extractSchema } from '../../themes/schema.ts'
import { PROBLEM_CODES } from '../../themes/problems.ts'

const tag = 'Developers'
const access = { public: true } as const
const list = (items: Record<string, unknown>) => ({ type: 'array', items })
// The Liquid reference's entries (src/themes/reference.ts: FieldRef, ObjectRef, FilterRef, TagRef, SettingTypeRef).
const fieldProps = { name: str, type: str, description: str, nullable: { type: 'boolean' }, fields: list({ type: 'object' }) }
const kind = { type: 'string', enum: ['liquid', 'store'] }

export const learnPlatform = defineOp({
  id: 'dev.platform.learn', tag, access, scope: [],
  summary: 'What this platform is and how to work with it: read this first',
  description: 'An overview for a developer or an AI agent: the API families and their credentials, the MCP servers, events and webhooks, themes, and where the docs are (search them with dev.docs.search).',
  output: obj({
    name: str, summary: str, base_url: str, site_url: str,
    api: list(obj({ family: str, base: str, auth: str, what: str })),
    authentication: list(str),
    mcp_servers: list(obj({ path: str, name: str, auth: str, for: str })),
    events: { type: 'object' }, themes: { type: 'object' },
    docs: list({ ...str, description: 'A doc name for dev.docs.fetch (`README.md`, `docs/<name>.md`, `openapi.json`).' }),
    errors: str, limits: str, next_steps: list(str),
  }),
  run: (ctx) => {
    const { siteUrl, baseUrl } = ctx.svc.config
    return {
      name: 'Dispatch server',
      summary: 'A hosted, self-hostable platform for stores (restaurants and goods stores): menus, orders from every channel, a kitchen display, drivers with live tracking, customers, staff, coupons, signed webhooks, store websites on Liquid themes, and MCP servers so AI agents operate it through the same operations as the REST API.',
      base_url: baseUrl,
      site_url: siteUrl,
      api: [
        { family: 'Owner API', base: `${baseUrl}/restaurants…`, auth: 'owner token', what: 'stores, menus, orders, customers (CRM), coupons, drivers, deliveries, analytics, staff, webhooks' },
        { family: 'Storefront API', base: `${baseUrl}/storefront…`, auth: 'X-Storefront-Token', what: 'one store\'s menu and guest orders (takeaway, table); returns track_token and continue_url' },
        { family: 'Customer app API', base: `${baseUrl}/customer…`, auth: 'customer token', what: 'sign-in (password or SMS code), profile, addresses, orders, balance' },
        { family: 'Driver app API', base: `${baseUrl}/driver…`, auth: 'driver token', what: 'shifts, offers, live location (HTTP or WebSocket), proof of delivery' },
        { family: 'Staff app API', base: `${baseUrl}/staff…`, auth: 'staff token', what: 'orders, kitchen display (KDS), till, per-role permissions' },
        { family: 'Public', base: `${baseUrl}/menu/{id}, ${baseUrl}/track/{token}`, auth: 'none', what: 'public menu and order tracking' },
        { family: 'Discovery', base: `${baseUrl}/ and ${baseUrl}/openapi.json`, auth: 'none', what: 'machine-readable index and the OpenAPI 3.1 document of every route' },
      ],
      authentication: [
        'Owner: `Authorization: Bearer <token>`; capabilities read, write, * or resource:action (restaurants, menu, orders, customers, analytics, drivers, webhooks).',
        'Storefront: `X-Storefront-Token`, scopes menu:read, order:write, agent (for the storefront MCP server).',
        'Customer, driver, staff: `Authorization: Bearer <token>` of that family, limited to its own store/driver/customer.',
        'Another owner\'s resource is always 404 not_found, never 403.',
      ],
      mcp_servers: [
        { path: `${siteUrl}/mcp`, name: 'admin', auth: 'owner bearer token', for: 'operate your stores: menu, orders, customers, coupons, hours, reports' },
        { path: `${siteUrl}/mcp/storefront`, name: 'storefront', auth: 'X-Storefront-Token with the agent scope', for: 'order at one store for a diner: browse, price a cart, place and track an order' },
        { path: `${siteUrl}/mcp/customer`, name: 'customer', auth: 'customer bearer token', for: 'one customer\'s orders, tracking, reorder, profile' },
        { path: `${siteUrl}/mcp/catalog`, name: 'catalog', auth: 'none', for: 'find public stores and items by keyword, city, dietary flags, price' },
        { path: `${siteUrl}/mcp/dev`, name: 'dev', auth: 'none', for: 'this overview, docs search, webhook events, Liquid theme reference and validation' },
      ],
      events: {
        names: Object.keys(EVENT_CATALOG),
        delivery: 'Signed POSTs (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature) to endpoints registered with a webhooks:write owner token; at least once, 5 attempts over about 1h20. Payload schemas: dev.webhook_events.list.',
      },
      themes: {
        what: 'A store website is rendered from a Liquid theme: layout/theme.liquid, templates per page, sections with JSON settings schemas.',
        builtin: Object.keys(BUILTIN_THEMES),
        tools: 'get_liquid_reference, get_section_schema, validate_theme (docs/themes.md)',
      },
      docs: docNames(ctx.svc.config),
      errors: `Every error is {message, code, reason, errors?, details?}: branch on code (api-v1 §7: always ${tableInWords()}), on reason for the finer cause (store_closed, plan_limit_reached, …); docs/errors.md lists them. Every 422 has errors keyed by field path, or ${WHOLE_REQUEST} for the request as a whole.`,
      limits: '120 requests per minute per token (429 with Retry-After), page sizes 20-30; see README and docs/mcp.md for MCP limits.',
      next_steps: [
        'search_docs with a few keywords (e.g. "storefront order", "webhook signature"), then fetch_full_doc on the best path.',
        `Read ${baseUrl}/openapi.json (or fetch_full_doc "openapi.json") for every route and schema.`,
        'list_webhook_events before writing a webhook receiver; validate_theme before uploading a theme.',
      ],
    }
  },
})

export const searchDocsOp = defineOp({
  id: 'dev.docs.search', tag, access, scope: [],
  summary: 'Search the product docs (README, docs/*.md, the OpenAPI document)',
  description: 'Keyword search ranked by BM25 over heading-sized chunks of the docs and over the OpenAPI operations; answers the path to pass to dev.docs.fetch, the heading and a snippet.',
  input: v.object({
    query: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)),
    // A number from MCP arguments, a digit string from an HTTP query.
    limit: v.optional(v.union([v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(20)), v.pipe(v.string(), v.regex(/^([1-9]|1\d|20)$/, 'an integer from 1 to 20'))])),
  }),
  output: obj({ query: str, results: { type: 'array', items: obj({ path: str, heading: str, snippet: str, score: { type: 'number' } }) } }),
  run: (ctx, { query, limit }) => ({ query, results: searchDocs(ctx.svc.config, query, Number(limit ?? 8)) }),
})

export const fetchDocOp = defineOp({
  id: 'dev.docs.fetch', tag, access, scope: [],
  summary: 'One whole doc by its path (README.md, docs/<name>.md, openapi.json)',
  description: 'Only the product\'s own docs: the names dev.docs.search answers or dev.platform.learn lists (`docs/themes.md` may be given as `themes.md` or `themes`). Anything else is not_found.',
  input: v.object({ path: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)) }),
  output: obj({ path: str, title: str, content: str }),
  run: (ctx, { path }) => {
    const doc = fetchDoc(ctx.svc.config, path)
    if (!doc) throw new ApiError('not_found', `No doc named ${JSON.stringify(path)}; use dev.docs.search or the docs list of dev.platform.learn.`, undefined, undefined, { docs: docNames(ctx.svc.config) })
    return doc
  },
})

export const listWebhookEvents = defineOp({
  id: 'dev.webhook_events.list', tag, access, scope: [],
  summary: 'Every webhook event with when it is emitted and the JSON Schema of its data',
  input: v.object({ event: v.optional(v.pipe(v.string(), v.maxLength(100))) }),
  output: obj({ delivery: { type: 'object' }, events: { type: 'array', items: obj({ name: str, when: str, emitted: { type: 'boolean' }, data_schema: { type: 'object' }, example: { type: 'object' } }) } }),
  run: (_ctx, { event }) => {
    const events = Object.entries(EVENT_CATALOG)
      .filter(([name]) => !event || name === event || (event.endsWith('.*') && name.startsWith(event.slice(0, -1))))
      .map(([name, spec]) => ({ name, when: spec.when, emitted: spec.emitted, data_schema: spec.data, example: spec.example }))
    if (event && events.length === 0) throw notFound('event')
    return {
      delivery: {
        body: '{id, event, created_at, data}',
        headers: ['webhook-id', 'webhook-timestamp', 'webhook-signature (v1,<base64 HMAC-SHA256 of id.timestamp.body>, key = base64-decoded whsec_ secret)', 'X-Webhook-Event', 'X-Webhook-Signature (legacy hex HMAC of the body)'],
        retries: 'any 2xx within 10 s acknowledges; otherwise about 1 min, 5 min, 15 min, 1 h; 5 attempts',
        emitted: '`emitted: false` marks reserved events of features this server does not have yet',
      },
      events,
    }
  },
})

export const liquidReference = defineOp({
  id: 'dev.themes.liquid_reference', tag, access, scope: [],
  summary: 'The objects, filters, tags and section setting types a store theme may use',
  description: 'The same reference the theme engine enforces (strict: anything not listed is an error) and docs/themes.md shows.',
  output: obj({
    engine: str, files: { type: 'object' },
    templates: list(str),
    objects: list(obj({ ...fieldProps, fields: list(obj(fieldProps, ['name', 'type', 'description'])), availability: str, only: list(str) }, ['name', 'type', 'description', 'availability'])),
    filters: list(obj({ name: str, kind, input: str, syntax: str, description: str })),
    tags: list(obj({ name: str, kind, syntax: str, description: str })),
    setting_types: list(obj({ type: str, description: str, value: { enum: ['string', 'number', 'boolean', null] }, attributes: list(str) })),
    schema: { type: 'object' }, limits: { type: 'object' }, unsafe_names: list(str), problem_codes: { type: 'object' }, builtin_themes: { type: 'object' },
  }),
  run: () => ({ ...LIQUID_REFERENCE, problem_codes: PROBLEM_CODES, builtin_themes: BUILTIN_THEMES }),
})

export const sectionSchema = defineOp({
  id: 'dev.themes.section_schema', tag, access, scope: [],
  summary: 'The settings schema of a section of a built-in theme',
  description: 'By theme (`classic`, `market`) and section name (the file name under sections/ without .liquid). An unknown name is not_found with the names that exist in `details`.',
  input: v.object({
    theme: v.optional(v.pipe(v.string(), v.maxLength(60)), 'classic'),
    section: v.pipe(v.string(), v.minLength(1), v.maxLength(60)),
  }),
  output: obj({ theme: str, section: str, file: str, schema: { type: 'object' }, source: str }),
  run: (_ctx, { theme, section }) => {
    const t = builtinTheme(theme)
    if (!t) throw new ApiError('not_found', `No built-in theme ${JSON.stringify(theme)}.`, undefined, undefined, { themes: Object.keys(BUILTIN_THEMES) })
    const file = `sections/${section}.liquid`
    const src = Object.hasOwn(t.files, file) ? t.files[file]! : undefined
    if (src === undefined) throw new ApiError('not_found', `Theme ${theme} has no section ${JSON.stringify(section)}.`, undefined, undefined, { sections: [...t.compiled.sections.keys()] })
    return { theme, section, file, schema: JSON.parse(extractSchema(src)!.json) as unknown, source: src }
  },
})

const byteLength = (s: string) => Buffer.byteLength(s, 'utf8')

/** Theme files: path → content, within the upload limits (422 beyond them). */
export const ThemeFilesSchema = v.pipe(
  v.record(v.pipe(v.string(), v.maxLength(200)), v.string()),
  v.check((files) => Object.keys(files).length <= THEME_LIMITS.maxFiles, `a theme has at most ${THEME_LIMITS.maxFiles} files`),
  v.check((files) => Object.values(files).reduce((n, s) => n + byteLength(s), 0) <= THEME_LIMITS.maxTotalBytes, `a theme has at most ${THEME_LIMITS.maxTotalBytes} bytes of files`),
)

export const validateThemeOp = defineOp({
  id: 'dev.themes.validate', tag, access, scope: [],
  summary: 'Validate theme files: Liquid syntax, unknown objects/filters/tags, schema violations, with file and line',
  description: `Input \`files\`: a map of path → content (layout/theme.liquid, templates/<page>.liquid, sections/<name>.liquid), at most ${THEME_LIMITS.maxFiles} files and ${THEME_LIMITS.maxTotalBytes} bytes (422 beyond). Answers \`valid\` and every problem {file, line, column?, code, message}; the same check runs when an owner uploads a theme.`,
  input: v.object({ files: ThemeFilesSchema }),
  output: obj({ valid: { type: 'boolean' }, file_count: { type: 'integer' }, problems: { type: 'array', items: obj({ file: str, line: { type: 'integer' }, column: { type: 'integer' }, code: str, message: str }, ['file', 'line', 'code', 'message']) } }),
  run: async (ctx, { files }) => {
    // In the theme pool, never on the event loop; callers without a credential get the small budget.
    const { problems } = await checkTheme(ctx.svc.themes, ctx.principal ? 'owner' : 'public', { kind: 'validate', files })
    return { valid: problems.length === 0, file_count: Object.keys(files).length, problems }
  },
})

export const devOps = [learnPlatform, searchDocsOp, fetchDocOp, listWebhookEvents, liquidReference, sectionSchema, validateThemeOp]
