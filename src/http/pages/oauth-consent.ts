/**
 * The OAuth consent page (docs/apps.md "OAuth"): the app, the scopes it asks for, its price, and
 * one form with an approve and a deny button. Plain HTML, no script; its CSP lets the form go to
 * this site only, plus the app's redirect origin (browsers apply `form-action` to the redirect).
 */
import type { Reply } from '../route.ts'
import { csrfField } from '../session-gate.ts'
import { authPage } from './owner-auth-pages.ts'
import { esc } from '../html.ts'
import { isAppScope, type AppScope, type AppTerms } from '../../domain/app-scopes.ts'
import { centsToDecimalString } from '../../domain/money.ts'

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:34rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px #0002}
h1{margin-top:0;font-size:1.5rem}ul{padding-left:1.2rem}.price{font-weight:600}
.actions{display:flex;gap:1rem;margin-top:1.5rem}button{padding:.6rem 1.2rem;border:0;border-radius:6px;font:inherit;cursor:pointer}
button.approve{background:#1f5fd1;color:#fff}button.deny{background:#e1e4ea;color:#1d2330}
.error{background:#fdecea;color:#8a1c12;padding:.75rem;border-radius:6px}@media(max-width:600px){main{margin:0;border-radius:0}}`

/** What each scope lets the app do, in the owner's words (a new scope without its words does not compile). */
export const SCOPE_TEXT: Record<AppScope, string> = {
  'restaurant:read': 'See your stores and their settings',
  'menu:read': 'See your menus',
  'menu:write': 'Change your menus',
  'orders:read': 'See your orders',
  'orders:write': 'Create and update orders',
  'analytics:read': 'See your sales reports',
  'mcp:use': 'Use the admin MCP server (AI agents) within these permissions',
}

export function priceText(t: AppTerms): string {
  const amount = `${centsToDecimalString(t.price)} ${t.currency}`
  if (t.pricing === 'recurring') return `${amount} every 30 days, charged to your wallet from today`
  if (t.pricing === 'usage') return `${amount} per unit the app reports, charged to your wallet${t.cap !== null ? ` (at most ${centsToDecimalString(t.cap)} ${t.currency} every 30 days)` : ''}`
  return 'Free'
}

/** The sign-in pages' frame and headers (their Referrer-Policy keeps the request's address from the app), with the consent's style. */
const page = (status: number, title: string, body: string, formTo: string | null): Reply =>
  authPage(status, title, body, {}, { style: STYLE, formTo })

/** An authorization request that cannot go back to the app (unknown client, unregistered redirect URI) or a refusal. */
export const oauthErrorPage = (status: number, message: string): Reply =>
  page(status, 'This app cannot be connected', `<p class="error" role="alert">${esc(message)}</p><p><a href="/dashboard">Back to the dashboard</a></p>`, null)

export interface ConsentView {
  csrf: string
  appName: string
  description: string
  scopes: string[]
  terms: AppTerms
  /** The hidden fields that repeat the authorization request. */
  fields: Record<string, string>
  redirectOrigin: string
  reinstall: boolean
  /** Set when the account cannot install (the plan message): no approve button then. */
  refusal?: string | null
  /**
   * An AI agent (issue 36): who vouches for its name (the host of its client ID metadata document,
   * null when it registered itself) and the server its token will be for (RFC 8707 resource).
   */
  agent?: { verifiedBy: string | null; resource: string | null } | null
}

export function consentPage(v: ConsentView): Reply {
  const hidden = Object.entries(v.fields).map(([k, val]) => `<input type="hidden" name="${esc(k)}" value="${esc(val)}">`).join('')
  const scopes = v.scopes.map((s) => `<li><code>${esc(s)}</code>: ${esc(isAppScope(s) ? SCOPE_TEXT[s] : s)}</li>`).join('')
  const a = v.agent
  const intro = a
    ? `<p>The AI agent <strong>${esc(v.appName)}</strong> ${v.reinstall ? 'asks to update its access to' : 'asks for access to'} your account${a.resource ? ` through <code>${esc(a.resource)}</code>` : ''}.</p>
<p class="agent-origin">${a.verifiedBy ? `Its name is published by <strong>${esc(a.verifiedBy)}</strong>.` : 'It registered itself: its name is not verified.'} After you approve, you are sent back to <strong>${esc(v.redirectOrigin)}</strong>. You can revoke its access at any time on the dashboard's Apps page.</p>`
    : `<p><strong>${esc(v.appName)}</strong> ${v.reinstall ? 'asks to update its access to' : 'asks to be installed in'} your account.</p>
${v.description ? `<p>${esc(v.description)}</p>` : ''}`
  const body = `${intro}
<h2>It will be able to</h2><ul>${scopes}</ul>
${a ? '' : `<h2>Price</h2><p class="price">${esc(priceText(v.terms))}</p>`}
${v.refusal ? `<p class="error" role="alert">${esc(v.refusal)}</p>` : ''}
<form method="post" action="/oauth/authorize">${csrfField({ csrf: v.csrf })}${hidden}
<div class="actions">${v.refusal ? '' : '<button class="approve" type="submit" name="decision" value="approve">Approve</button>'}
<button class="deny" type="submit" name="decision" value="deny">Deny</button></div></form>`
  return page(v.refusal ? 403 : 200, `Connect ${v.appName}`, body, v.redirectOrigin)
}
