/**
 * The owner's sign-in, sign-up and security pages (issue 14; docs/dashboard.md "Signing in"):
 * plain HTML forms that work without JavaScript, one inline style by nonce, nothing loaded from
 * anywhere. Each function returns the page body; `authPage` wraps it with the headers.
 */
import { randomBytes } from 'node:crypto'
import { Reply } from '../route.ts'
import { csrfField } from '../session-gate.ts'
import type { SessionView } from '../../ops/accounts/owner-sessions.ts'
import type { TwoFactorState } from '../../ops/accounts/owner-auth.ts'
import { esc } from '../html.ts'

const HTML = 'text/html; charset=utf-8'


const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:34rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px #0002}
h1{margin-top:0;font-size:1.5rem}label{display:block;margin:1rem 0 .25rem;font-weight:600}
input[type=email],input[type=password],input[type=text]{width:100%;box-sizing:border-box;padding:.6rem;border:1px solid #8a93a6;border-radius:6px;font:inherit}
button{margin-top:1.25rem;padding:.6rem 1.2rem;border:0;border-radius:6px;background:#1f5fd1;color:#fff;font:inherit;cursor:pointer}
button.link{background:none;color:#1f5fd1;padding:0;margin:0;text-decoration:underline}
.error{background:#fdecea;color:#8a1c12;padding:.75rem;border-radius:6px}.ok{background:#e7f6ec;color:#145c2c;padding:.75rem;border-radius:6px}
table{width:100%;border-collapse:collapse;font-size:.9rem}td,th{text-align:left;padding:.4rem;border-bottom:1px solid #e1e4ea}
code{word-break:break-all}a{color:#1f5fd1}@media(max-width:600px){main{margin:0;border-radius:0}}`

/**
 * A page of its own: CSP with this response's nonce; forms post only to this site (and `formTo`,
 * the OAuth consent's redirect origin); never cached. `extra` headers win over these.
 * `Referrer-Policy: same-origin`: the page's address (a reset link, an authorization request) is
 * never sent to another origin, yet its forms' posts carry the site's `Origin` and `Referer`, which
 * the sign-in forms need (under `no-referrer` a browser posts with `Origin: null` and no Referer).
 */
export function authPage(status: number, title: string, body: string, extra: Record<string, string> = {}, opts: { style?: string; formTo?: string | null } = {}): Reply {
  const nonce = randomBytes(16).toString('base64')
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<link rel="icon" href="data:,"><title>${esc(title)} · Dispatch</title><style nonce="${nonce}">${opts.style ?? STYLE}</style></head><body><main><h1>${esc(title)}</h1>${body}</main></body></html>`
  return new Reply(status, html, {
    'Content-Security-Policy': `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'self' data:; form-action 'self'${opts.formTo ? ` ${opts.formTo}` : ''}; base-uri 'none'; frame-ancestors 'none'`,
    'Referrer-Policy': 'same-origin',
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
    ...extra,
  }, HTML)
}

const notice = (error?: string, ok?: string) =>
  `${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}${ok ? `<p class="ok" role="status">${esc(ok)}</p>` : ''}`

export interface LoginForm { email?: string; next?: string; error?: string; ok?: string; askOtp?: boolean }

export const loginBody = (f: LoginForm): string => `${notice(f.error, f.ok)}
<form method="post" action="/login">
<input type="hidden" name="next" value="${esc(f.next ?? '')}">
<label for="email">Email</label><input id="email" type="email" name="email" autocomplete="username" required value="${esc(f.email ?? '')}">
<label for="password">Password</label><input id="password" type="password" name="password" autocomplete="current-password" required>
${f.askOtp ? '<label for="otp">Two-factor code</label><input id="otp" type="text" name="otp" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required>' : ''}
<button type="submit">Sign in</button>
</form>
<p><a href="/forgot-password">Forgot your password?</a> · New here? <a href="/signup">Create an account</a>.</p>`

export interface SignUpForm { name?: string; email?: string; error?: string }

export const signUpBody = (f: SignUpForm): string => `${notice(f.error)}
<form method="post" action="/signup">
<label for="name">Your name</label><input id="name" type="text" name="name" autocomplete="name" value="${esc(f.name ?? '')}">
<label for="email">Email</label><input id="email" type="email" name="email" autocomplete="email" required value="${esc(f.email ?? '')}">
<label for="password">Password (at least 10 characters)</label><input id="password" type="password" name="password" autocomplete="new-password" minlength="10" required>
<button type="submit">Create account</button>
</form>
<p>Already have an account? <a href="/login">Sign in</a>.</p>`

export const forgotBody = (f: { email?: string; error?: string }): string => `${notice(f.error)}
<p>Enter the address you sign in with: we mail you a link to set a new password.</p>
<form method="post" action="/forgot-password">
<label for="email">Email</label><input id="email" type="email" name="email" autocomplete="username" required value="${esc(f.email ?? '')}">
<button type="submit">Send the link</button>
</form>
<p><a href="/login">Back to sign-in</a></p>`

export const resetSentBody = (email: string): string =>
  `<p class="ok" role="status">If <strong>${esc(email)}</strong> signs in to Dispatch, a link to set a new password is on its way. It works once, for one hour.</p><p><a href="/login">Back to sign-in</a></p>`

/** The form of a live reset link; it posts back to the same address. */
export const resetBody = (token: string, error?: string): string => `${notice(error)}
<form method="post" action="/reset-password/${esc(token)}">
<label for="password">New password (at least 10 characters)</label><input id="password" type="password" name="password" autocomplete="new-password" minlength="10" required>
<button type="submit">Set the new password</button>
</form>
<p>Setting it signs you out everywhere.</p>`

export const checkMailBody = (email: string): string =>
  `<p class="ok" role="status">We have sent a link to <strong>${esc(email)}</strong>. Follow it to confirm your address, then <a href="/login">sign in</a>.</p>`

export interface SecurityView { csrf: string; email: string; sessions: SessionView[]; twoFactor: TwoFactorState; error?: string; ok?: string }

export const securityBody = (s: SecurityView): string => `${notice(s.error, s.ok)}
<p>Signed in as <strong>${esc(s.email)}</strong>. <a href="/dashboard">Back to the dashboard</a></p>
<h2>Sessions</h2>
<table><thead><tr><th>Signed in</th><th>From</th><th>Last seen</th><th></th></tr></thead><tbody>
${s.sessions.map((x) => `<tr><td>${esc(x.created_at.slice(0, 16).replace('T', ' '))} <small>(${esc(x.via)})</small></td><td>${esc(x.ip)}<br><small>${esc(x.user_agent.slice(0, 60))}</small></td><td>${esc(x.last_seen_at.slice(0, 16).replace('T', ' '))}</td>
<td>${x.current ? '<em>this browser</em>' : ''}<form method="post" action="/account/sessions/${x.id}/revoke">${csrfField(s)}<button class="link" type="submit" aria-label="Sign out session ${x.id}">Sign out</button></form></td></tr>`).join('\n')}
</tbody></table>
<h2>Two-factor sign-in</h2>
${s.twoFactor.enabled
    ? `<p>On: sign-in asks for a code from your authenticator app.</p><form method="post" action="/account/two-factor/disable">${csrfField(s)}<label for="code">Current code</label><input id="code" type="text" name="code" inputmode="numeric" pattern="[0-9]{6}" required><button type="submit">Turn off</button></form>`
    : s.twoFactor.pending
      ? `<p>Add this key to your authenticator app, then enter the code it shows.</p><p>Key: <code>${esc(s.twoFactor.pending.secret)}</code></p><p><small><code>${esc(s.twoFactor.pending.uri)}</code></small></p>
<form method="post" action="/account/two-factor/confirm">${csrfField(s)}<label for="code">Code</label><input id="code" type="text" name="code" inputmode="numeric" pattern="[0-9]{6}" required><button type="submit">Turn on</button></form>`
      : `<p>Off.</p><form method="post" action="/account/two-factor/start">${csrfField(s)}<button type="submit">Set up two-factor sign-in</button></form>`}
<h2>Sign out</h2>
<form method="post" action="/logout">${csrfField(s)}<button type="submit">Sign out of this browser</button></form>`
