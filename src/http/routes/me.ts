/** `GET /me` (api-v1 §4.2): who the token belongs to and what it may do. */
import { route } from '../route.ts'
import { MeSchema } from '../docs-schemas.ts'

export const meRoutes = [
  route({
    method: 'GET', path: '/me', tag: 'Account', summary: 'Identity and capabilities of the token', auth: 'owner', response: MeSchema,
    handler: ({ svc, principal }) => {
      const owner = svc.db.prepare('SELECT id, name, email, created_at FROM owners WHERE id = ?').get(principal.ownerId)
      const t = svc.db.prepare<[number], { id: number; name: string; token_prefix: string; capabilities: string; expires_at: string | null; created_at: string }>(
        'SELECT id, name, token_prefix, capabilities, expires_at, created_at FROM owner_tokens WHERE id = ?',
      ).get(principal.tokenId)!
      return {
        kind: 'owner',
        owner,
        token: { id: t.id, name: t.name, prefix: t.token_prefix, capabilities: JSON.parse(t.capabilities) as string[], expires_at: t.expires_at, created_at: t.created_at },
      }
    },
  }),
]
