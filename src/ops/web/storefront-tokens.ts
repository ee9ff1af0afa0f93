/**
 * Storefront tokens from the owner's side (api-v1 §5 "Storefront token", issued per store;
 * docs/storefront.md "Tokens"): issue one (shown once, only its hash is kept), list them, revoke
 * one at once. Capability `restaurants:read` / `restaurants:write`.
 */
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Id } from '../schemas/common.ts'
import { notFound } from '../../errors.ts'
import { DEFAULT_STOREFRONT_SCOPES, STOREFRONT_SCOPES } from '../../auth/storefront.ts'
import { newToken, sha256Hex } from '../../auth/tokens.ts'
import { nowIso } from '../../storage/db.ts'
import { storefrontTokens, type StorefrontTokenRow } from '../../storage/storefront-tokens.ts'

const tag = 'Storefront'

const TokenSchema = {
  type: 'object', required: ['id', 'scopes', 'created_at', 'revoked_at'],
  properties: { id: { type: 'integer' }, scopes: { type: 'array', items: { type: 'string', enum: [...STOREFRONT_SCOPES] } }, created_at: { type: 'string' }, revoked_at: { type: ['string', 'null'] } },
}
const tokenView = (r: StorefrontTokenRow) => ({ id: r.id, scopes: JSON.parse(r.scopes) as string[], created_at: r.created_at, revoked_at: r.revoked_at })

export const listStorefrontTokens = defineOp({
  id: 'storefront_tokens.list', tag, access: { owner: 'restaurants:read' }, scope: ['store'],
  output: { type: 'array', items: TokenSchema },
  summary: 'The store\'s storefront tokens (never the tokens themselves)',
  run: (ctx) => storefrontTokens.list(ctx.svc.db, storeOf(ctx).id).map(tokenView),
})

export const issueStorefrontToken = defineOp({
  id: 'storefront_tokens.issue', tag, access: { owner: 'restaurants:write' }, scope: ['store'],
  // An empty body is fine: the storefront API's two scopes by default; `agent` only when asked for.
  input: v.optional(v.object({
    scopes: v.optional(v.pipe(v.array(v.picklist(STOREFRONT_SCOPES)), v.minLength(1)), [...DEFAULT_STOREFRONT_SCOPES]),
  }), {}),
  output: { ...TokenSchema, required: [...TokenSchema.required, 'token'], properties: { ...TokenSchema.properties, token: { type: 'string' } } },
  summary: 'Issue a storefront token for the store (returned once)',
  description: 'Body `{scopes?: ["menu:read", "order:write", "agent"]}` (`menu:read` and `order:write` by default; `agent` admits the token to the storefront MCP server, docs/mcp-storefront.md). The raw token is in this answer only; send it as `X-Storefront-Token`.',
  run: async (ctx, { scopes }) => {
    const store = storeOf(ctx)
    const token = newToken('storefront')
    const row = await ctx.svc.committer.write((db) => storefrontTokens.insert(db, store.id, sha256Hex(token), [...new Set(scopes)], nowIso()))
    return { ...tokenView(row), token }
  },
})

export const revokeStorefrontToken = defineOp({
  id: 'storefront_tokens.revoke', tag, access: { owner: 'restaurants:write' }, scope: ['store'], empty: true,
  input: v.object({ token_id: Id }),
  summary: 'Revoke a storefront token (at once)',
  run: async (ctx, { token_id }) => {
    const store = storeOf(ctx)
    if (!await ctx.svc.committer.write((db) => storefrontTokens.revoke(db, store.id, token_id, nowIso()))) throw notFound('storefront token')
  },
})

export const storefrontTokenOps = [listStorefrontTokens, issueStorefrontToken, revokeStorefrontToken]
