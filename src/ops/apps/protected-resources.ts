/**
 * OAuth 2.0 protected resource metadata (RFC 9728) of the authenticated MCP servers (src/mcp; issue 36;
 * MCP 2025-06-18 and later "Authorization Server Discovery"): each is published at the well-known
 * address for its path, `{site_url}/.well-known/oauth-protected-resource/mcp…`, and every 401 of
 * the server points at it (`WWW-Authenticate: Bearer resource_metadata="…"`, src/net/respond.ts).
 *
 * The admin server's tokens come from this site's authorization server (src/ops/apps/oauth.ts), so its
 * metadata names it and the scopes an agent asks for. The storefront and customer servers take
 * credentials issued otherwise (an owner's storefront token, a diner's sign-in): their metadata
 * says so and names no authorization server.
 */
import { APP_SCOPES } from '../../domain/app-scopes.ts'

export interface ProtectedResource {
  /** The MCP server's path, e.g. `/mcp`. */
  path: string
  name: string
  /** Where the metadata is served, under `{site_url}`. */
  wellKnown: string
  /** Scopes an agent asks for, space-separated, in the 401 challenge; null when tokens do not come from this server's OAuth. */
  scope: string | null
  metadata(siteUrl: string): Record<string, unknown>
}

const wellKnownOf = (path: string): string => `/.well-known/oauth-protected-resource${path}`

function resource(path: string, name: string, oauth: boolean, credential: string): ProtectedResource {
  return {
    path, name, wellKnown: wellKnownOf(path),
    scope: oauth ? APP_SCOPES.join(' ') : null,
    metadata: (site) => ({
      resource: `${site}${path}`,
      resource_name: name,
      ...(oauth
        ? { authorization_servers: [site], scopes_supported: [...APP_SCOPES], bearer_methods_supported: ['header'] }
        : { bearer_methods_supported: credential === 'header' ? ['header'] : [] }),
      resource_documentation: `${site}/docs`,
      ...(oauth ? {} : { dispatch_credential: credential === 'header' ? 'Authorization: Bearer <customer token> from the store\'s customer sign-in' : 'X-Storefront-Token: a storefront token with the agent scope, issued by the store\'s owner' }),
    }),
  }
}

/** The authenticated MCP servers' protected resource metadata. */
export const protectedResources: ProtectedResource[] = [
  resource('/mcp', 'Restaurant admin MCP server', true, 'header'),
  resource('/mcp/storefront', 'Store ordering agent MCP server', false, 'storefront'),
  resource('/mcp/customer', 'Customer MCP server', false, 'header'),
]

/** The protected resource of an MCP path, if it has one. */
export const protectedResourceOf = (path: string): ProtectedResource | undefined => protectedResources.find((r) => r.path === path)

/** The `WWW-Authenticate` parameters an MCP server's 401 adds to the Bearer challenge. */
export function challengeParams(siteUrl: string, path: string): Record<string, string> | undefined {
  const pr = protectedResourceOf(path)
  if (!pr) return undefined
  return { resource_metadata: `${siteUrl}${pr.wellKnown}`, ...(pr.scope ? { scope: pr.scope } : {}) }
}
