/** Discovery (api-v1 §4.1): the endpoint index, the live OpenAPI document, and health. */
import { route, type Route } from '../route.ts'
import { buildOpenApi } from '../openapi.ts'
import { fullPath } from '../server.ts'
import { DiscoveryIndexSchema, OpenApiDocumentSchema } from '../../ops/schemas/named.ts'

/** How each MCP server authenticates, as the discovery index says it. */
const MCP_AUTH: Record<string, string> = {
  owner: 'owner bearer token (Authorization: Bearer)',
  storefront: 'X-Storefront-Token with the agent scope',
  customer: 'customer bearer token (Authorization: Bearer)',
  none: 'none',
}

/** Discovery routes need the whole table; `routes` is filled in by the route index. */
export function discoveryRoutes(all: () => readonly Route[]) {
  let cached: string | null = null
  return [
    route({
      method: 'GET', path: '/', tag: 'Discovery', summary: 'Machine-readable index of the API', auth: 'none',
      response: DiscoveryIndexSchema,
      handler: ({ svc }) => {
        const groups: Record<string, Array<{ method: string; path: string; summary: string; auth: string; operation?: string }>> = {}
        for (const r of all()) {
          // `operation` names the operation (src/ops) a route binds: the same id an MCP tool will bind.
          ;(groups[r.tag] ??= []).push({
            method: r.method, path: r.site ? `${svc.config.siteUrl}${r.path}` : fullPath(r).slice('/api/v1'.length) || '/', summary: r.summary, auth: r.auth,
            ...(r.op ? { operation: r.op.id } : {}),
          })
        }
        return {
          name: 'Dispatch API',
          version: 'v1',
          base_url: svc.config.baseUrl,
          authentication: 'Send `Authorization: Bearer <token>` (owner, driver, customer, staff or mobile-shell token) or `X-Storefront-Token` for storefront routes. Errors: {message, code, errors?}.',
          docs: `${svc.config.siteUrl}/docs`,
          openapi: `${svc.config.baseUrl}/openapi.json`,
          groups,
          // MCP servers (api-v1 §4.11, docs/mcp.md): JSON-RPC 2.0 over POST at each address.
          mcp_servers: svc.mcpServers.map((m) => ({
            name: m.name, title: m.title, url: `${svc.config.siteUrl}${m.path}`, auth: MCP_AUTH[m.auth] ?? m.auth, tools: m.tools,
          })),
        }
      },
    }),
    route({
      method: 'GET', path: '/openapi.json', tag: 'Discovery', summary: 'OpenAPI 3.1 document of the live routes', auth: 'none',
      response: OpenApiDocumentSchema, produces: 'application/json',
      handler: ({ svc }) => (cached ??= JSON.stringify(buildOpenApi(all(), svc.config))),
    }),
    route({
      method: 'GET', path: '/healthz', site: true, tag: 'Discovery', summary: 'Liveness and readiness', auth: 'none', rateLimit: false,
      response: { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } },
      handler: () => ({ status: 'ok' }),
    }),
  ]
}
