/**
 * The owner's site as a browser uses it (docs/dashboard.md "Signing in"): requests with the site's
 * Origin on posts and no redirects followed, sign-up through the verification mail, sign-in, and
 * the session cookie and CSRF token of the security page.
 */
import type { TestServer } from './server.ts'
import type { RecordingEmailProvider } from '../../src/providers/email.ts'

export interface Page { status: number; headers: Headers; text: string; location: string | null; cookies: string[] }

/** A request as a browser on the site would send it: Origin of the site on posts, no redirects followed. */
export async function visit(s: TestServer, method: string, path: string, opts: { cookie?: string; form?: Record<string, string>; headers?: Record<string, string>; origin?: string | null } = {}): Promise<Page> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) }
  if (opts.cookie) headers.cookie = opts.cookie
  if (method !== 'GET' && opts.origin !== null) headers.origin = opts.origin ?? new URL(s.site).origin
  let body: string | undefined
  if (opts.form) {
    body = new URLSearchParams(opts.form).toString()
    headers['content-type'] = 'application/x-www-form-urlencoded'
  }
  const r = await fetch(s.site + path, { method, headers, body, redirect: 'manual' })
  return { status: r.status, headers: r.headers, text: await r.text(), location: r.headers.get('location'), cookies: r.headers.getSetCookie() }
}

/** `dsid=<value>` of a response's Set-Cookie, for the next request's Cookie header. */
export const sessionOf = (p: Page): string | undefined => p.cookies.find((c) => c.startsWith('dsid='))?.split(';')[0]
export const csrfOf = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? ''
export const mail = (s: TestServer) => s.app.svc.email as RecordingEmailProvider
export const linkIn = (text: string) => /\/verify-email\/[A-Za-z0-9_-]+/.exec(text)?.[0] ?? ''

let seq = 0
export const newEmail = () => `owner${++seq}-${Date.now()}@example.test`
export const PASSWORD = 'correct horse battery'

/** Sign up and verify through the pages; returns the owner id. */
export async function signedUp(s: TestServer, email = newEmail(), password = PASSWORD): Promise<{ email: string; ownerId: number }> {
  const r = await visit(s, 'POST', '/signup', { form: { name: 'Olga', email, password } })
  if (r.status !== 200) throw new Error(`sign-up: ${r.status} ${r.text}`)
  const v = await visit(s, 'GET', linkIn(mail(s).lastTo(email)!.text))
  if (v.status !== 200) throw new Error(`verify: ${v.status}`)
  return { email, ownerId: s.app.svc.db.prepare('SELECT id FROM owners WHERE email = ?').pluck().get(email) as number }
}

export async function signIn(s: TestServer, email: string, password = PASSWORD, extra: Record<string, string> = {}, cookie?: string): Promise<Page> {
  return visit(s, 'POST', '/login', { form: { email, password, ...extra }, cookie })
}

export async function session(s: TestServer, email: string, password = PASSWORD): Promise<{ cookie: string; csrf: string }> {
  const r = await signIn(s, email, password)
  const cookie = sessionOf(r)
  if (r.status !== 303 || !cookie) throw new Error(`sign-in: ${r.status} ${r.text}`)
  const page = await visit(s, 'GET', '/account/security', { cookie })
  return { cookie, csrf: csrfOf(page.text) }
}

