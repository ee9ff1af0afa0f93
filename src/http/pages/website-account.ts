/**
 * The customer account pages of the store website (docs/website.md "Accounts"): sign-in by email
 * and password or by SMS code, and saved addresses. Platform markup shown inside the store theme's
 * layout (so header, footer and styles are the store's), built only from escaped values.
 */
import { esc } from './html.ts'

export interface FormState { csrf: string; errors: Array<{ message: string }>; notice?: string | undefined }

const csrfField = (csrf: string) => `<input type="hidden" name="csrf" value="${esc(csrf)}">`
const errorsBlock = (s: FormState) =>
  (s.errors.length ? `<div class="errors" role="alert">${s.errors.map((e) => `<p>${esc(e.message)}</p>`).join('')}</div>` : '') +
  (s.notice ? `<p class="card" role="status">${esc(s.notice)}</p>` : '')

/** Sign in: email and password, or a code sent by SMS (`codeFor`: the phone a code was just sent to). */
export function loginContent(base: string, s: FormState, codeFor?: string): string {
  const codeForm = codeFor
    ? `<form class="card" method="post" action="${esc(base)}/account/otp/verify">${csrfField(s.csrf)}
<input type="hidden" name="phone" value="${esc(codeFor)}">
<label for="code">Code sent to ${esc(codeFor)}</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
<p><button class="btn" type="submit">Sign in</button></p></form>`
    : `<form class="card" method="post" action="${esc(base)}/account/otp">${csrfField(s.csrf)}
<label for="phone">Phone number</label><input id="phone" name="phone" type="tel" autocomplete="tel" maxlength="40" required>
<p><button class="btn" type="submit">Text me a code</button></p></form>`
  return `<h1>Sign in</h1>${errorsBlock(s)}
<p class="muted">Sign in to order delivery and keep your addresses.</p>
<h2>With a code by SMS</h2>${codeForm}
<h2>With email and password</h2>
<form class="card" method="post" action="${esc(base)}/account/login">${csrfField(s.csrf)}
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="email" maxlength="254" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" maxlength="200" required>
<p><button class="btn" type="submit">Sign in</button></p></form>
<h2>New here? Create an account</h2>
<form class="card" method="post" action="${esc(base)}/account/register">${csrfField(s.csrf)}
<label for="new-name">Your name</label><input id="new-name" name="name" autocomplete="name" maxlength="120" required>
<label for="new-email">Email for the new account</label><input id="new-email" name="email" type="email" autocomplete="email" maxlength="254" required>
<label for="new-password">Choose a password (8 characters or more)</label><input id="new-password" name="password" type="password" autocomplete="new-password" minlength="8" maxlength="200" required>
<p><button class="btn" type="submit">Create account</button></p></form>`
}

export interface AccountView {
  name: string | null
  email: string | null
  phone: string | null
  addresses: Array<{ id: number; label: string | null; address: string; is_default: boolean }>
}

export function accountContent(base: string, s: FormState, me: AccountView): string {
  const list = me.addresses.length
    ? `<ul class="card addresses">${me.addresses.map((a) => `<li class="row"><span>${a.label ? `<strong>${esc(a.label)}</strong>: ` : ''}${esc(a.address)}${a.is_default ? ' <span class="tag">default</span>' : ''}</span>
<form method="post" action="${esc(base)}/account/addresses/${a.id}/delete">${csrfField(s.csrf)}<button class="btn" type="submit" aria-label="Delete ${esc(a.label ?? a.address)}">Delete</button></form></li>`).join('')}</ul>`
    : '<p class="muted">No saved addresses yet.</p>'
  return `<h1>Your account</h1>${errorsBlock(s)}
<p>${esc(me.name ?? me.phone ?? me.email ?? '')}${me.email && me.name ? ` · ${esc(me.email)}` : ''}</p>
<h2>Saved addresses</h2>${list}
<form class="card" method="post" action="${esc(base)}/account/addresses">${csrfField(s.csrf)}
<label for="label">Name of the place (optional)</label><input id="label" name="label" maxlength="60" placeholder="Home">
<label for="address">Address</label><input id="address" name="address" autocomplete="street-address" maxlength="500" required>
<label for="notes">Notes for the driver (optional)</label><input id="notes" name="notes" maxlength="500">
<label class="check"><input type="checkbox" name="is_default"> Make it my default</label>
<p><button class="btn" type="submit">Save address</button></p></form>
<p><a class="btn" href="${esc(base)}/menu">Order now</a></p>
<form method="post" action="${esc(base)}/account/logout">${csrfField(s.csrf)}<button class="btn" type="submit">Sign out</button></form>`
}
