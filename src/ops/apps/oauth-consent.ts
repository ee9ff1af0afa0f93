/**
 * The owner's answer on the OAuth consent page (api-v1 §4.10; docs/apps.md "OAuth"), as an operation
 * of the web session family (issue 33 item 1), bound as the page's form (src/http/routes/oauth.ts).
 * The rules are src/ops/apps/oauth.ts's: the request is checked again (it came back through the browser),
 * then deny redirects with `access_denied`, approve installs the app and redirects with a code.
 * Answers where the browser goes: the app (`redirect`), or an error page that must not redirect.
 */
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import type { SessionPrincipal } from '../../auth/owner-sessions.ts'
import { approve, checkAuthorize, denyLocation, type AuthorizeParams } from './oauth.ts'
import { isMetadataClientId, resolveMetadataClient } from './agent-clients.ts'

/** The authorization request's fields, sent back by the consent form. */
export const AUTHORIZE_FIELDS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'resource'] as const

export type ConsentOutcome = { redirect: string } | { page: { status: number; message: string } }

export const decideConsent = defineOp({
  id: 'oauth.authorize.decide', tag: 'OAuth', summary: 'OAuth 2.0 authorization: the owner\'s answer (approve or deny), then back to the app',
  access: { session: true }, scope: [],
  input: v.object({ params: v.record(v.string(), v.string()), decision: v.string() }),
  run: async (ctx, { params, decision }): Promise<ConsentOutcome> => {
    // A client named by its metadata document (docs/mcp.md "Authorization for agents"): fetched again, it must still be usable.
    if (params.client_id && isMetadataClientId(ctx.svc, params.client_id)) {
      const r = await resolveMetadataClient(ctx.svc, params.client_id)
      if ('problem' in r) return { page: { status: 400, message: r.problem } }
    }
    const c = checkAuthorize(ctx.svc, params as AuthorizeParams)
    if (c.kind === 'page') return { page: { status: c.status, message: c.message } }
    if (c.kind === 'redirect') return { redirect: c.location }
    if (decision !== 'approve') return { redirect: denyLocation(ctx.svc, c.req) }
    return { redirect: (await approve(ctx.svc, (ctx.principal as SessionPrincipal).ownerId, c.req)).location }
  },
})
