/**
 * Owner API tokens over the API (api-v1 §5: "issued by the dashboard; shown once", "can be revoked at
 * once from the dashboard"; docs/dashboard.md "API tokens"): list, create, revoke. The dashboard's
 * Tokens page calls these, so the API can do what the dashboard does.
 *
 * Managing tokens is account-wide (`*:read` / `*:write`, i.e. the spec's plain `read` / `write`), and
 * a token never mints a token that could do more than itself: each requested capability must be
 * granted by the caller's own (else 403), so a `write` token cannot make a `*` one.
 */
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { ownerOf } from '../scope.ts'
import { Id, ShortText } from '../schemas/common.ts'
import { ApiError, notFound } from '../../errors.ts'
import { grants, isValidCapability, type Capability } from '../../domain/capabilities.ts'
import { newToken, sha256Hex } from '../../auth/tokens.ts'
import { nowIso } from '../../storage/db.ts'
import { requireQuota } from '../../storage/entitlements.ts'
import { ownerTokens, type OwnerTokenRow } from '../../storage/owner-tokens.ts'

const tag = 'Account'

const TokenSchema = {
  type: 'object', required: ['id', 'name', 'prefix', 'capabilities', 'expires_at', 'created_at', 'revoked_at'],
  properties: {
    id: { type: 'integer' }, name: { type: 'string' },
    prefix: { type: 'string', description: 'The first characters of the token, to recognise it' },
    capabilities: { type: 'array', items: { type: 'string' } },
    expires_at: { type: ['string', 'null'] }, created_at: { type: 'string' }, revoked_at: { type: ['string', 'null'] },
  },
}

const tokenView = (r: OwnerTokenRow) => ({
  id: r.id, name: r.name, prefix: r.token_prefix, capabilities: JSON.parse(r.capabilities) as string[],
  expires_at: r.expires_at, created_at: r.created_at, revoked_at: r.revoked_at,
})

/** Does a token holding `held` cover the capability `c` (api-v1 §5 rule 3: `read`/`write` are `*:read`/`*:write`)? */
export function covers(held: readonly string[], c: string): boolean {
  if (c === '*') return held.includes('*')
  const needed = (c === 'read' || c === 'write' ? `*:${c}` : c) as Capability
  return grants(held, needed)
}

/** Expiries must lie ahead, and within ten years (a typo of the year is refused, not kept forever). */
const MAX_LIFETIME_MS = 10 * 365 * 86_400_000
const ExpiresAt = v.pipe(
  v.string(), v.isoTimestamp('Use an ISO 8601 date-time with a time zone, e.g. 2030-01-01T00:00:00Z.'),
  v.check((s) => Date.parse(s) > Date.now(), 'The expiry must be in the future.'),
  v.check((s) => Date.parse(s) < Date.now() + MAX_LIFETIME_MS, 'The expiry must be within ten years.'),
)

export const listOwnerTokens = defineOp({
  id: 'account.tokens.list', tag, access: { owner: '*:read' }, scope: [],
  output: { type: 'array', items: TokenSchema },
  summary: 'The account\'s API tokens, newest first (never the tokens themselves)',
  description: 'Revoked and expired tokens are listed too, with `revoked_at` / `expires_at`. Short-lived tokens of dashboard sessions are not listed (docs/dashboard.md).',
  run: (ctx) => ownerTokens.list(ctx.svc.db, ownerOf(ctx).ownerId).map(tokenView),
})

export const createOwnerToken = defineOp({
  id: 'account.tokens.create', tag, access: { owner: '*:write' }, scope: [],
  input: v.object({
    name: v.optional(v.pipe(ShortText(100), v.trim()), ''),
    capabilities: v.pipe(
      v.array(v.pipe(v.string(), v.check(isValidCapability, 'Not a capability: use *, read, write or resource:action (api-v1 §5).'))),
      v.minLength(1, 'Give at least one capability.'), v.maxLength(20),
    ),
    expires_at: v.optional(v.nullable(ExpiresAt), null),
  }),
  output: { ...TokenSchema, required: [...TokenSchema.required, 'token'], properties: { ...TokenSchema.properties, token: { type: 'string', description: 'The raw token: in this answer only' } } },
  summary: 'Create an API token (returned once)',
  description: 'Body `{name?, capabilities: ["orders:read", …], expires_at?}`. Each capability must be one the calling token holds (403 otherwise). The plan\'s `api_tokens` quota applies (403 `plan_limit_reached`). The raw token is in this answer only; send it as `Authorization: Bearer`.',
  run: async (ctx, input) => {
    const me = ownerOf(ctx)
    const beyond = input.capabilities.filter((c) => !covers(me.capabilities, c))
    if (beyond.length) throw new ApiError('forbidden', `This token cannot grant what it does not hold: ${beyond.join(', ')}.`)
    const token = newToken('owner')
    const row = await ctx.svc.committer.write((db) => {
      // In the inserting transaction, so two concurrent creates cannot both take the last slot.
      requireQuota(db, me.ownerId, 'api_tokens')
      return ownerTokens.insert(db, {
        ownerId: me.ownerId, hash: sha256Hex(token), prefix: token.slice(0, 10), name: input.name,
        capabilities: [...new Set(input.capabilities)], // Stored in the server's own ISO form, as every other time (the quota compares them as text).
        expiresAt: input.expires_at ? nowIso(Date.parse(input.expires_at)) : null, now: nowIso(),
      })
    })
    return { ...tokenView(row), token }
  },
})

export const revokeOwnerToken = defineOp({
  id: 'account.tokens.revoke', tag, access: { owner: '*:write' }, scope: [], empty: true,
  input: v.object({ token_id: Id }),
  summary: 'Revoke an API token (at once: open sockets using it close)',
  run: async (ctx, { token_id }) => {
    const me = ownerOf(ctx)
    if (!await ctx.svc.committer.write((db) => ownerTokens.revoke(db, me.ownerId, token_id, nowIso()))) throw notFound('token')
    // Sockets opened with it close now (src/ws/sessions.ts), not at their next check.
    ctx.svc.realtime.credentialsChanged({ ownerId: me.ownerId })
  },
})

export const ownerTokenOps = [listOwnerTokens, createOwnerToken, revokeOwnerToken]
