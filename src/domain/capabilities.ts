/** Owner token capabilities (api-v1 §5): `*`, `read`, `write`, `resource:action`; write implies read. */

export const RESOURCES = ['restaurants', 'menu', 'orders', 'customers', 'analytics', 'drivers', 'webhooks'] as const
export type Resource = (typeof RESOURCES)[number]
export type Action = 'read' | 'write'
/** `*:read` / `*:write` are the spec's plain `read` / `write` (rule 3), for operations outside the resource list (the reseller area). */
export type Capability = `${Resource | '*'}:${Action}`

const CAP_RE = /^(\*|read|write|\*:(read|write)|(restaurants|menu|orders|customers|analytics|drivers|webhooks):(read|write))$/

export const isValidCapability = (c: string): boolean => CAP_RE.test(c)

/** Does a token holding `held` may do `needed`? */
export function grants(held: readonly string[], needed: Capability): boolean {
  const [resource, action] = needed.split(':') as [Resource, Action]
  for (const c of held) {
    if (c === '*') return true
    const [r, a] = c.includes(':') ? (c.split(':') as [string, string]) : ['*', c]
    if (r !== '*' && r !== resource) continue
    if (a === action || a === 'write') return true // write implies read
  }
  return false
}
