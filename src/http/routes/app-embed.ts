/**
 * App session tokens and the embed page (api-v1 §4.10; docs/apps.md "Embedding"), site routes of
 * the owner's web session: signed out, the page goes to /login and back. The rules are in
 * src/ops/apps/app-session.ts.
 */
import { randomBytes } from 'node:crypto'
import * as v from 'valibot'
import { route, Reply } from '../route.ts'
import { ApiError } from '../../errors.ts'
import { installedApp, issueAppSessionToken } from '../../ops/apps/app-session.ts'
import { embedHeaders, embedNotFoundPage, embedPage, embedRefusedPage } from '../pages/app-embed.ts'

const HTML = 'text/html; charset=utf-8'
const tag = 'Apps'
/** `store`: one of the account's store ids, for the `dest` claim. */
const StoreQuery = v.object({ store: v.optional(v.string()) })

const TokenSchema = {
  type: 'object', required: ['token', 'expires_in'],
  properties: {
    token: { type: 'string', description: 'HS256 JWT signed with the app\'s client secret; claims iss, aud (client_id), sub (owner id), dest, iat, nbf, exp, jti, sid' },
    expires_in: { type: 'integer', const: 60 },
  },
}

/** The app's origin, or null when its embed URL is not an http(s) URL. */
function originOf(url: string | null): string | null {
  if (!url) return null
  try {
    const u = new URL(url)
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.origin : null
  } catch { return null }
}

export const appEmbedRoutes = [
  route({
    method: 'GET', path: '/apps/{appId}/session-token', site: true, auth: 'session', tag,
    summary: 'A 60-second session token of an installed app, for the signed-in owner',
    description: 'Web session (cookie) only. 404 when the app is not actively installed for the account; 403 `feature_not_in_plan` while the account\'s plan lacks `apps` (the installation is kept). Optional query `store` (one of the account\'s store ids) sets the `dest` claim to that store\'s dashboard. Verify it as docs/apps.md "Embedding" shows.',
    query: StoreQuery, response: TokenSchema,
    handler: async ({ svc, principal, params, query }) =>
      new Reply(200, await issueAppSessionToken(svc, principal, Number(params.appId), query.store), { 'Cache-Control': 'no-store' }),
  }),
  route({
    method: 'GET', path: '/apps/{appId}/embed', site: true, auth: 'session', tag, produces: HTML,
    summary: 'The dashboard page hosting an installed app\'s embed_url in an iframe',
    description: 'CSP `frame-src` is the app\'s origin only; the page posts fresh session tokens to the iframe with postMessage addressed to that origin (`{type: "dispatch:session-token", token, expires_in}`), and answers `{type: "dispatch:session-token-request"}` from it.',
    query: StoreQuery,
    pageErrors: {
      403: 'The account\'s plan lacks `apps`: a page with the plan\'s message (the installation is kept).',
      404: 'The app is not installed for the account, or has no embed URL: a page saying so.',
    },
    handler: ({ svc, principal, params, query }) => {
      const nonce = randomBytes(16).toString('base64')
      let found
      try {
        found = installedApp(svc, principal.ownerId, Number(params.appId))
      } catch (err) {
        if (!(err instanceof ApiError)) throw err
        if (err.code === 'feature_not_in_plan') return new Reply(403, embedRefusedPage(err.message), embedHeaders(nonce, "'none'"), HTML)
      }
      const origin = originOf(found?.app.embed_url ?? null)
      if (!found || !origin) return new Reply(404, embedNotFoundPage(), embedHeaders(nonce, "'none'"), HTML)
      const store = query.store
      const tokenPath = `/apps/${found.app.id}/session-token${store && /^[1-9]\d{0,15}$/.test(store) ? `?store=${store}` : ''}`
      return new Reply(200, embedPage({ appName: found.app.name, embedUrl: found.app.embed_url!, appOrigin: origin, tokenPath, nonce }), embedHeaders(nonce, origin), HTML)
    },
  }),
]
