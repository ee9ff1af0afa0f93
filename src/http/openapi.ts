/** OpenAPI 3.1.0 generated from the live route table (api-v1 §4.1, §9). */
import { toJsonSchema } from '@valibot/to-json-schema'
import type { Config } from '../config.ts'
import type { AnySchema, JsonSchema, Route } from './route.ts'
import { fullPath } from './server.ts'
import { ErrorSchema } from '../ops/docs-schemas.ts'

const isValibot = (s: unknown): s is AnySchema => typeof s === 'object' && s !== null && (s as { kind?: string }).kind === 'schema'

/** valibot → JSON Schema draft 2020-12; transforms and custom checks are skipped, not fatal. */
export function jsonSchemaOf(s: AnySchema | JsonSchema): JsonSchema {
  if (!isValibot(s)) return s
  const out = toJsonSchema(s, { target: 'draft-2020-12', errorMode: 'ignore' }) as JsonSchema
  delete out.$schema
  return out
}

const SECURITY_FOR: Record<string, Array<Record<string, string[]>>> = {
  none: [],
  owner: [{ bearerAuth: [] }, { oauth2: [] }],
  storefront: [{ storefrontToken: [] }],
  driver: [{ bearerAuth: [] }],
  staff: [{ bearerAuth: [] }],
  customer: [{ bearerAuth: [] }],
  session: [{ sessionCookie: [] }],
}

/** Webhook payload docs are registered by the webhook feature; see `registerWebhookDocs`. */
const webhookDocs: Record<string, unknown> = {}
export function registerWebhookDocs(docs: Record<string, unknown>): void {
  Object.assign(webhookDocs, docs)
}

export function buildOpenApi(routes: readonly Route[], config: Config): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  const tags = new Set<string>()
  for (const r of routes) {
    const path = r.site ? r.path : fullPath(r).slice('/api/v1'.length) || '/'
    const key = r.site ? `${path}` : path
    tags.add(r.tag)
    const parameters: unknown[] = []
    for (const m of path.matchAll(/\{(\w+)\}/g)) {
      const name = m[1]!
      const isId = /(^id|Id)$/.test(name)
      parameters.push({ name, in: 'path', required: true, schema: isId ? { type: 'integer', minimum: 1 } : { type: 'string' } })
    }
    if (r.query) {
      const qs = jsonSchemaOf(r.query) as { properties?: Record<string, JsonSchema>; required?: string[] }
      for (const [name, schema] of Object.entries(qs.properties ?? {})) {
        parameters.push({ name, in: 'query', required: (qs.required ?? []).includes(name), schema })
      }
    }
    for (const h of r.headers ?? []) parameters.push({ name: h.name, in: 'header', required: false, description: h.description, schema: { type: 'string' } })
    const status = String(r.status ?? 200)
    const success: Record<string, unknown> = { description: status === '201' ? 'Created' : status === '204' ? 'No content' : 'OK' }
    if (status !== '204') {
      success.content = { [r.produces ?? 'application/json']: { schema: r.response ? jsonSchemaOf(r.response) : r.produces?.startsWith('text/') ? { type: 'string' } : {} } }
    }
    // A page answers its own errors as a page (a browser shows it); anything else that fails on
    // the way (rate limit, wrong method, a bug) is still the §7 envelope, under `4XX`/`5XX`.
    const pageErrors = Object.fromEntries(Object.entries(r.pageErrors ?? {}).map(([code, description]) =>
      [code, { description, content: { [r.produces ?? 'text/html; charset=utf-8']: { schema: { type: 'string' } } } }]))
    const op: Record<string, unknown> = {
      operationId: operationId(r),
      tags: [r.tag],
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      security: SECURITY_FOR[r.auth] ?? [{ bearerAuth: [] }],
      // The operation (src/ops) this address binds; several addresses may bind one operation.
      ...(r.op ? { 'x-operation': r.op.id } : {}),
      ...(r.capability ? { 'x-required-capability': r.capability } : {}),
      ...(r.permission ? { 'x-required-permission': r.permission } : {}),
      parameters,
      responses: {
        [status]: success,
        ...pageErrors,
        '4XX': { description: 'Client error (api-v1 §7 envelope)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        '5XX': { description: 'Server error (api-v1 §7 envelope; the details are logged with the request id)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    }
    // Besides JSON, the body formats a binding decodes into the same input (a theme as a zip archive).
    const decoded = Object.fromEntries(Object.keys(r.binding?.decoders ?? {}).map((type) => [type, { schema: { type: 'string', contentMediaType: type } }]))
    if (r.body) op.requestBody = { required: !isOptional(r.body), content: { 'application/json': { schema: jsonSchemaOf(r.body) }, ...decoded } }
    const server = r.site ? { servers: [{ url: config.siteUrl }] } : {}
    paths[key] ??= { ...server }
    paths[key]![r.method.toLowerCase()] = op
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Dispatch API',
      version: 'v1',
      description: 'Ordering, delivery, kitchen and storefront API. Errors use the envelope `{message, code, errors?}`.',
    },
    servers: [{ url: config.baseUrl }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    webhooks: webhookDocs,
    components: {
      schemas: { Error: ErrorSchema },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Owner, driver, customer or staff token: `Authorization: Bearer <token>`. Owner tokens may also be sent as `api_token` (discouraged).' },
        storefrontToken: { type: 'apiKey', in: 'header', name: 'X-Storefront-Token', description: 'Per-store storefront token.' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'dsid', description: 'The owner\'s web session (dashboard pages under the site URL only, never /api/v1). State-changing requests also send the session\'s CSRF token as `X-CSRF-Token` or the form field `csrf` (docs/dashboard.md).' },
        oauth2: {
          type: 'oauth2',
          description: 'Third-party apps (docs/apps.md): the authorization-code flow with optional PKCE S256 gives an access token (`dsa_…`) sent as `Authorization: Bearer`. It acts for the installing account within the granted scopes (menu:read|write, orders:read|write, analytics:read, restaurant:read, mcp:use); account-wide operations are refused.',
          flows: { authorizationCode: { authorizationUrl: `${config.siteUrl}/oauth/authorize`, tokenUrl: `${config.siteUrl}/oauth/token`, refreshUrl: `${config.siteUrl}/oauth/token`, scopes: {} } },
        },
      },
    },
  }
}

function isOptional(s: AnySchema): boolean {
  return (s as { type?: string }).type === 'optional'
}

function operationId(r: Route): string {
  const words = r.path.replace(/\{(\w+)\}/g, 'by $1').split(/[^A-Za-z0-9]+/).filter(Boolean)
  const camel = words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('')
  return `${r.method.toLowerCase()}${camel[0]?.toUpperCase() ?? ''}${camel.slice(1)}${r.site ? 'Site' : ''}`
}
