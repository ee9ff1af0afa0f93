/**
 * Storefront tokens from the owner's side (api-v1 §5 "Storefront token", issued per store;
 * docs/storefront.md "Tokens"): issue one (shown once, only its hash is kept), list them, revoke
 * one at once. Capability `restaurants:read` / `restaurants:write`.
 */
import * as v from 'valibot'
import { route, Reply } from '../route.ts'
import { notFound } from '../../errors.ts'
import { STOREFRONT_SCOPES } from '../../auth/storefront.ts'
import { newToken, sha256Hex } from '../../auth/tokens.ts'
import { nowIso } from '../../storage/db.ts'
import { ownedStore } from './owner-access.ts'

const tag = 'Storefront'
const IssueBody = v.optional(v.object({
  scopes: v.optional(v.pipe(v.array(v.picklist(STOREFRONT_SCOPES)), v.minLength(1)), [...STOREFRONT_SCOPES]),
}), {})

interface TokenRow { id: number; scopes: string; revoked_at: string | null; created_at: string }
const TokenSchema = {
  type: 'object', required: ['id', 'scopes', 'created_at', 'revoked_at'],
  properties: { id: { type: 'integer' }, scopes: { type: 'array', items: { type: 'string', enum: [...STOREFRONT_SCOPES] } }, created_at: { type: 'string' }, revoked_at: { type: ['string', 'null'] } },
}
const tokenView = (r: TokenRow) => ({ id: r.id, scopes: JSON.parse(r.scopes) as string[], created_at: r.created_at, revoked_at: r.revoked_at })

export const storefrontTokenRoutes = [
  route({
    method: 'GET', path: '/restaurants/{id}/storefront-tokens', tag, auth: 'owner', capability: 'restaurants:read', response: { type: 'array', items: TokenSchema },
    summary: 'The store\'s storefront tokens (never the tokens themselves)',
    handler: ({ svc, principal, params }) => {
      const store = ownedStore(svc, principal, params.id)
      return svc.db.prepare<[number], TokenRow>('SELECT id, scopes, revoked_at, created_at FROM storefront_tokens WHERE store_id = ? ORDER BY id').all(store.id).map(tokenView)
    },
  }),
  route({
    method: 'POST', path: '/restaurants/{id}/storefront-tokens', tag, auth: 'owner', capability: 'restaurants:write', body: IssueBody, status: 201,
    response: { ...TokenSchema, required: [...TokenSchema.required, 'token'], properties: { ...TokenSchema.properties, token: { type: 'string' } } },
    summary: 'Issue a storefront token for the store (returned once)',
    description: 'Body `{scopes?: ["menu:read", "order:write"]}` (both by default). The raw token is in this answer only; send it as `X-Storefront-Token`.',
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      const token = newToken('storefront')
      const id = await svc.committer.write((db) => Number(db.prepare('INSERT INTO storefront_tokens (store_id, token_hash, scopes, created_at) VALUES (?, ?, ?, ?)')
        .run(store.id, sha256Hex(token), JSON.stringify([...new Set(body.scopes)]), nowIso()).lastInsertRowid))
      const row = svc.db.prepare<[number], TokenRow>('SELECT id, scopes, revoked_at, created_at FROM storefront_tokens WHERE id = ?').get(id)!
      return new Reply(201, { ...tokenView(row), token })
    },
  }),
  route({
    method: 'DELETE', path: '/restaurants/{id}/storefront-tokens/{tokenId}', tag, auth: 'owner', capability: 'restaurants:write', status: 204,
    summary: 'Revoke a storefront token (at once)',
    handler: async ({ svc, principal, params }) => {
      const store = ownedStore(svc, principal, params.id)
      const r = await svc.committer.write((db) => db.prepare('UPDATE storefront_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND store_id = ?').run(nowIso(), Number(params.tokenId), store.id))
      if (r.changes === 0) throw notFound('storefront token')
      return null
    },
  }),
]
