/** `GET /me` (api-v1 §4.2): who the owner token belongs to and what it may do. */
import { defineOp } from '../op.ts'
import { ownerOf } from '../scope.ts'
import { MeSchema } from '../schemas/named.ts'
import { ApiError } from '../../errors.ts'
import { ownerById, ownerTokenById } from '../../storage/owners.ts'

export const whoAmI = defineOp({
  id: 'account.me.get', tag: 'Account', summary: 'Identity and capabilities of the token', access: { owner: 'any' }, scope: [],
  output: MeSchema,
  run: (ctx) => {
    const me = ownerOf(ctx)
    const owner = ownerById(ctx.svc.db, me.ownerId)
    const t = ownerTokenById(ctx.svc.db, me.tokenId)
    // The token authenticated a moment ago; its rows missing now is a bug, not a 404.
    if (!t) throw new ApiError('internal_error')
    return {
      kind: 'owner',
      owner,
      token: { id: t.id, name: t.name, prefix: t.token_prefix, capabilities: JSON.parse(t.capabilities) as string[], expires_at: t.expires_at, created_at: t.created_at },
    }
  },
})

export const accountOps = [whoAmI]
