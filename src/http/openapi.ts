/**
 * OpenAPI 3.1.0 generated from the live route table (api-v1 §4.1, §9; issue 20 item 7): named
 * shapes as `components.schemas`, error statuses and headers as reusable components, query
 * parameters typed as the client sends them, and examples for the main operations. New routes are
 * covered by what they declare; docs/api-docs.md says how the document is built and checked.
 */
import type { Config } from '../config.ts'
import type { AuthFamily } from '../auth/principals.ts'
import { isIdParam, pathParams, type AnySchema, type JsonSchema, type Route } from './route.ts'
import { fullPath } from './server.ts'
import { SchemaComponents } from './docs/schemas.ts'
import { queryParamSchema } from './docs/params.ts'
import { errorResponses, redirectResponse, responseComponents, successHeaders } from './docs/responses.ts'
import { EXAMPLES } from './docs/examples.ts'
import { tagObjects } from './docs/tags.ts'
import { describe } from './docs/describe.ts'
import { ErrorSchema } from '../ops/schemas/named.ts'

export { jsonSchemaOf } from '../ops/schemas/json-schema.ts'

type Requirement = Record<string, string[]>

/** api-v1 §5: "The OpenAPI document lists three alternative schemes on every operation". */
const SPEC_SCHEMES: Requirement[] = [{ bearerAuth: [] }, { storefrontToken: [] }, { oauth2: [] }]

/** The schemes that carry each credential family (`x-auth.security`, the finer fact). */
const SCHEMES_OF: Record<AuthFamily, Requirement[]> = {
  none: [],
  owner: [{ bearerAuth: [] }, { oauth2: [] }],
  storefront: [{ storefrontToken: [] }],
  driver: [{ bearerAuth: [] }],
  staff: [{ bearerAuth: [] }],
  customer: [{ bearerAuth: [] }],
  shell: [{ bearerAuth: [] }],
  session: [{ sessionCookie: [] }],
}

/**
 * `security` lists the three schemes of §5 on every operation, as the spec says; what the
 * operation really takes is `x-auth`: the credential family and the schemes that carry it. Listed
 * too, so tools that only read `security` are not misled: `{}` where no credential is needed (OpenAPI's
 * "optional"), and a scheme outside the three (the dashboard's session cookie) where it is the one.
 */
function securityOf(r: Route): { security: Requirement[]; 'x-auth': { credential: AuthFamily; security: Requirement[] } } {
  const own = SCHEMES_OF[r.auth]
  const beyond = own.filter((req) => !SPEC_SCHEMES.some((s) => Object.keys(s)[0] === Object.keys(req)[0]))
  return { security: [...SPEC_SCHEMES, ...(own.length === 0 ? [{}] : beyond)], 'x-auth': { credential: r.auth, security: own } }
}

/** Webhook payload docs are registered by the webhook feature; see `registerWebhookDocs`. */
const webhookDocs: Record<string, unknown> = {}
export function registerWebhookDocs(docs: Record<string, unknown>): void {
  Object.assign(webhookDocs, docs)
}

/** The path key of a route in `paths`: under `{base_url}`, or the site root for site routes. */
export const docPath = (r: Route): string => (r.site ? r.path : fullPath(r).slice('/api/v1'.length) || '/')

/** The routes the OpenAPI document describes (all but those declaring `openapi: false`). */
export const documentedRoutes = (routes: readonly Route[]): Route[] => routes.filter((r) => r.openapi !== false)

export function buildOpenApi(routes: readonly Route[], config: Config): Record<string, unknown> {
  const schemas = new SchemaComponents()
  const paths: Record<string, Record<string, unknown>> = {}
  const tags = new Set<string>()
  for (const r of documentedRoutes(routes)) {
    const key = docPath(r)
    tags.add(r.tag)
    const op = operation(r, schemas)
    paths[key] ??= r.site ? { servers: [{ url: config.siteUrl }] } : {}
    paths[key]![r.method.toLowerCase()] = op
  }
  const { responses, headers } = responseComponents()
  // Every named schema the routes did not reach (the envelope of §7) is still listed.
  schemas.ref(ErrorSchema)
  const webhooks = signedWebhooks()
  for (const hook of Object.values(webhooks)) for (const o of Object.values(hook as Record<string, { tags?: string[] }>)) for (const t of o.tags ?? []) tags.add(t)
  return {
    openapi: '3.1.0',
    info: {
      title: 'Dispatch API',
      version: 'v1',
      description: 'Ordering, delivery, kitchen and storefront API. Errors use the envelope `{message, code, reason, errors?, details?}` (api-v1 §7): branch on `code` (for 401, 403, 404, 422 and 429 always the spec\'s), and on `reason` for the finer cause; every 422 has `errors`. Every answer carries `X-Request-Id`, `X-RateLimit-Limit` and `X-RateLimit-Remaining`; 429 adds `Retry-After` (§8). Guides, sockets, MCP servers and webhook events: the `/docs` pages of this server.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: config.baseUrl }],
    externalDocs: { description: 'Guides: real-time sockets, kitchen display, MCP servers, webhooks', url: `${config.siteUrl}/docs` },
    tags: tagObjects(tags, (guide) => `${config.siteUrl}/docs/guides/${guide}`),
    paths,
    webhooks,
    components: {
      schemas: schemas.schemas,
      responses,
      headers,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Owner, driver, customer, staff or mobile-shell token: `Authorization: Bearer <token>`. Owner tokens may also be sent as `api_token` (discouraged). Which family an operation takes: its `x-auth`.' },
        storefrontToken: { type: 'apiKey', in: 'header', name: 'X-Storefront-Token', description: 'Per-store storefront token.' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'dsid', description: 'The owner\'s web session (dashboard pages under the site URL only, never /api/v1). State-changing requests also send the session\'s CSRF token as `X-CSRF-Token` or the form field `csrf` (docs/dashboard.md).' },
        oauth2: {
          type: 'oauth2',
          description: 'Third-party apps (docs/apps.md): the authorization-code flow with optional PKCE S256 gives an access token (`dsa_…`) sent as `Authorization: Bearer`. It acts for the installing account within the granted scopes (menu:read|write, orders:read|write, analytics:read, restaurant:read, mcp:use); account-wide operations are refused.',
          flows: { authorizationCode: { authorizationUrl: `${config.siteUrl}/oauth/authorize`, tokenUrl: `${config.siteUrl}/oauth/token`, refreshUrl: `${config.siteUrl}/oauth/token`, scopes: {} } },
        },
        webhookSignature: {
          type: 'apiKey', in: 'header', name: 'webhook-signature',
          description: 'How a receiver authenticates a webhook from this server (api-v1 §6, Standard Webhooks): `webhook-signature: v1,<base64>` is HMAC-SHA256 keyed with the endpoint\'s secret over `{webhook-id}.{webhook-timestamp}.{body}`; reject a `webhook-timestamp` older than about 5 minutes. Legacy: `X-Webhook-Signature` is the hex HMAC of the body alone.',
        },
      },
    },
  }
}

function operation(r: Route, schemas: SchemaComponents): Record<string, unknown> {
  const path = docPath(r)
  const examples = r.op ? EXAMPLES[r.op.id] : undefined
  const parameters: unknown[] = []
  for (const name of pathParams(path)) {
    parameters.push(isIdParam(name)
      ? { name, in: 'path', required: true, description: 'Numeric id; another account\'s resource answers 404.', schema: { type: 'integer', minimum: 1 } }
      : { name, in: 'path', required: true, schema: { type: 'string', minLength: 1 } })
  }
  if (r.query) {
    const qs = schemas.ref(r.query) as { properties?: Record<string, JsonSchema>; required?: string[] }
    for (const [name, schema] of Object.entries(qs.properties ?? {})) {
      const s = queryParamSchema(schema)
      parameters.push({ name, in: 'query', required: (qs.required ?? []).includes(name), ...(s.description ? { description: s.description } : {}), schema: s })
    }
  }
  for (const h of r.headers ?? []) parameters.push({ name: h.name, in: 'header', required: false, description: h.description, schema: { type: 'string' } })
  const op: Record<string, unknown> = {
    operationId: operationId(r),
    tags: [r.tag],
    summary: r.summary,
    description: describe(r),
    ...securityOf(r),
    // The operation (src/ops) this address binds; several addresses may bind one operation.
    ...(r.op ? { 'x-operation': r.op.id } : {}),
    ...(r.capability ? { 'x-required-capability': r.capability } : {}),
    ...(r.permission ? { 'x-required-permission': r.permission } : {}),
    parameters,
    responses: { ...success(r, schemas, examples?.response), ...redirectResponse(r), ...errorResponses(r) },
  }
  // Besides JSON, the body formats a binding decodes into the same input (a theme as a zip archive).
  const decoded = Object.fromEntries(Object.keys(r.binding?.decoders ?? {}).map((type) => [type, { schema: { type: 'string', contentMediaType: type } }]))
  if (r.body) {
    const json = { schema: schemas.ref(r.body), ...(examples?.request !== undefined ? { example: examples.request } : {}) }
    op.requestBody = { required: !isOptional(r.body), content: { 'application/json': json, ...decoded } }
  } else if (r.form) {
    op.requestBody = { required: false, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', additionalProperties: { type: 'string' } } } } }
  }
  return op
}

/** The success answer by its status; none for a redirecting address (`status: 303`), whose 303 is the redirect's. */
function success(r: Route, schemas: SchemaComponents, example: unknown): Record<string, unknown> {
  const status = r.status ?? 200
  if (status === 303) return {}
  const out: Record<string, unknown> = { description: status === 201 ? 'Created' : status === 204 ? 'No content' : 'OK', headers: successHeaders(r) }
  if (status !== 204) {
    const type = r.produces ?? 'application/json'
    const schema = r.response ? schemas.ref(r.response as AnySchema | JsonSchema) : type.startsWith('text/') ? { type: 'string' } : {}
    out.content = { [type]: { schema, ...(example !== undefined ? { example } : {}) } }
  }
  return { [status]: out }
}

/** The registered webhook events, each declaring how its receiver verifies it (the signature scheme). */
function signedWebhooks(): Record<string, unknown> {
  return Object.fromEntries(Object.entries(webhookDocs).map(([name, item]) => [name, Object.fromEntries(
    Object.entries(item as Record<string, Record<string, unknown>>).map(([method, o]) => [method, { security: [{ webhookSignature: [] }], ...o }]))]))
}

function isOptional(s: AnySchema): boolean {
  return (s as { type?: string }).type === 'optional'
}

function operationId(r: Route): string {
  const words = r.path.replace(/\{(\w+)\}/g, 'by $1').split(/[^A-Za-z0-9]+/).filter(Boolean)
  const camel = words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('')
  return `${r.method.toLowerCase()}${camel[0]?.toUpperCase() ?? ''}${camel.slice(1)}${r.site ? 'Site' : ''}`
}
