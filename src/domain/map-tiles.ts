/**
 * The map tile source of the tracking page (issue 20 item 8, docs/tracking-page.md): an operator's
 * `MAP_TILE_URL` template such as `https://tile.openstreetmap.org/{z}/{x}/{y}.png`. Pure: the
 * configuration checks it at start, the page's CSP names its origin and nothing else.
 */

/** Leaflet's placeholders: zoom and tile coordinates (required), subdomain and retina suffix (optional). */
const PLACEHOLDERS = /\{(z|x|y|s|r)\}/g
const REQUIRED = ['{z}', '{x}', '{y}'] as const

/**
 * Why `template` is not a usable tile URL template, or null when it is: an absolute http(s) URL
 * with `{z}`, `{x}` and `{y}`, no credentials, no fragment, and `{s}` (if any) only as the host's
 * first label — so the CSP can name the host as `*.rest-of-host`.
 */
export function tileTemplateProblem(template: string): string | null {
  const missing = REQUIRED.filter((p) => !template.includes(p))
  if (missing.length > 0) return `must contain ${missing.join(', ')}`
  const leftover = template.replace(PLACEHOLDERS, '').match(/\{[^}]*\}/)
  if (leftover) return `has an unknown placeholder ${leftover[0]} (allowed: {z} {x} {y} {s} {r})`
  let u: URL
  try { u = new URL(template.replace(PLACEHOLDERS, (_, p: string) => (p === 's' ? 'a' : p === 'r' ? '' : '0'))) } catch { return 'must be an absolute http:// or https:// URL' }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'must be an absolute http:// or https:// URL'
  if (u.username || u.password) return 'must not carry credentials'
  if (u.hash) return 'must not have a fragment'
  const host = hostOf(template)
  if (host.includes('{s}') && !/^\{s\}\.[^{}]+$/.test(host)) return '{s} may only be the first label of the host ({s}.tile.example.org)'
  if (/\{[zxyr]\}/.test(host)) return 'the host must not contain {z}, {x}, {y} or {r}'
  return null
}

/** The CSP source of the tile host: `https://tile.example.org`, `https://*.tile.example.org` for `{s}`, with a port when given. */
export function tileOrigin(template: string): string {
  const scheme = template.slice(0, template.indexOf('://'))
  const host = hostOf(template).replace(/^\{s\}\./, '*.')
  return `${scheme.toLowerCase()}://${host.toLowerCase()}`
}

/** The authority part of the template as written (placeholders kept). */
function hostOf(template: string): string {
  const rest = template.slice(template.indexOf('://') + 3)
  const end = rest.search(/[/?#]/)
  return end < 0 ? rest : rest.slice(0, end)
}
