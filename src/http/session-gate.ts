/**
 * What the HTTP door does for routes of the `session` family (the owner's web session, issue 14;
 * docs/dashboard.md "Signing in"): a signed-out page visit goes to the sign-in page and comes back
 * after it; a state-changing request must not come from another site (a named Origin other than
 * the site's) and must carry the session's CSRF token (header `X-CSRF-Token`, or the form field
 * `csrf`), else 403 and nothing runs.
 */
import { timingSafeEqual } from 'node:crypto'
import { ApiError } from '../errors.ts'
import { esc } from './html.ts'

export const SIGN_IN_PATH = '/login'
export const CSRF_HEADER = 'x-csrf-token'
export const CSRF_FIELD = 'csrf'

/** Where a signed-out visit of `path` goes: `/login?next=<path and query>`. */
export function signInLocation(path: string, rawQuery: string): string {
  return `${SIGN_IN_PATH}?next=${encodeURIComponent(rawQuery ? `${path}?${rawQuery}` : path)}`
}

/**
 * A `next` the sign-in page may send the browser to: a path of this site only (`/dashboard…`),
 * never another origin (`//evil.example`, `/\evil`, `https:…`): no open redirect.
 */
export function safeNext(next: string | null | undefined, fallback = '/dashboard'): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.includes('\\') || /[\u0000-\u001f]/.test(next)) return fallback
  return next
}

/** Constant-time comparison of the token sent with the session's. */
export function csrfMatches(expected: string, sent: string | null | undefined): boolean {
  if (!sent) return false
  const a = Buffer.from(expected)
  const b = Buffer.from(sent)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * The origin a request's `Origin` header names, or undefined when it names none: absent (an older
 * browser, a client that is no browser) or `null`, which a browser sends when it will not tell
 * (a page with `Referrer-Policy: no-referrer`, a sandboxed frame, a post redirected across
 * origins). `null` proves nothing either way: the token, or the Referer, has to.
 */
function namedOrigin(headers: Readonly<Record<string, string>>): string | undefined {
  const origin = headers.origin
  return origin && origin !== 'null' ? origin : undefined
}

/**
 * Forms without a session token (sign-in, sign-up, password reset; the store website's, which also
 * check their own token) must come from the site itself, by `Origin` or, when a browser names none,
 * `Referer` (login CSRF: a foreign page must not sign the browser into another account).
 */
export function fromSite(siteUrl: string, headers: Readonly<Record<string, string>>): boolean {
  const site = new URL(siteUrl).origin
  const origin = namedOrigin(headers)
  if (origin) return origin === site
  return (headers.referer ?? '').startsWith(`${site}/`)
}

export const csrfRefused = (): ApiError =>
  new ApiError('forbidden', 'This request needs the session\'s CSRF token (X-CSRF-Token header or csrf form field); reload the page and try again.')

/**
 * Before a state-changing session request runs: a browser's `Origin`, when it names one, must be
 * the site's (`null` or none: the token alone decides); then `true` when the header already carries
 * the right token, `false` when only a form field could (the caller checks it once the form is
 * read), and a 403 otherwise.
 */
export function checkSessionWrite(siteUrl: string, headers: Readonly<Record<string, string>>, csrf: string, isForm: boolean): boolean {
  const origin = namedOrigin(headers)
  if (origin && origin !== new URL(siteUrl).origin) throw csrfRefused()
  if (csrfMatches(csrf, headers[CSRF_HEADER])) return true
  if (isForm && headers[CSRF_HEADER] === undefined) return false
  throw csrfRefused()
}


/** For pages of the session family: the hidden field every form of the page carries. */
export const csrfField = (p: { csrf: string }): string => `<input type="hidden" name="${CSRF_FIELD}" value="${esc(p.csrf)}">`

/** For pages whose script calls the site with fetch: `<meta name="csrf-token">`, sent back as `X-CSRF-Token`. */
export const csrfMeta = (p: { csrf: string }): string => `<meta name="csrf-token" content="${esc(p.csrf)}">`
