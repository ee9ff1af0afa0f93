/**
 * The customer account pages of the store website (docs/website.md "Accounts"): sign-in by email
 * and password or by SMS code, and saved addresses. Platform markup shown inside the store theme's
 * layout (so header, footer and styles are the store's), built only from escaped values.
 */
import { esc, scriptJson } from '../html.ts'

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
  addresses: Array<{ id: number; label: string | null; address: string; notes: string | null; positioned: boolean; is_default: boolean }>
}

/**
 * The address form's extras (issue 34 item 4): what was posted (kept on a refusal or a search), the
 * places a search found with its message, whether the server has a geocoder, and what the pin map
 * needs (the store's position, the operator's tiles) with the page's style nonce and script.
 */
export interface AddressFormState {
  values: Record<string, string>
  places: Array<{ label: string; lat: number; lng: number }> | null
  placesMessage: string | null
  geocoder: boolean
  pin: { store: { lat: number; lng: number } | null; tiles: string | null; attribution: string }
  styleNonce: string
}


/** The pin map's few rules (the theme styles the rest): under the page's style nonce. */
const PIN_STYLE = `.pin[hidden],.pin-map[hidden]{display:none}.pin{border:0;padding:0;margin:1rem 0}.pin-map{position:relative;border:1px solid #767676;border-radius:6px;overflow:hidden;touch-action:none;cursor:crosshair;height:260px;background:#f4f1ea;margin:.5rem 0}
.pin-map:focus-visible{outline:3px solid #1a4d8f;outline-offset:2px}.pin-map svg{display:block}.pin-map .attribution{position:absolute;right:0;bottom:0;background:#fff;color:#222;font-size:.75rem;padding:0 .25rem}
.places{border:0;padding:0;margin:.5rem 0}.places label{display:block;margin:.25rem 0}.btn.place{display:block;text-align:left;margin:.25rem 0}`

function addressForm(base: string, s: FormState, a: AddressFormState): string {
  const v = (k: string) => esc(a.values[k] ?? '')
  const places = a.places === null ? '' : `<fieldset class="places"><legend>${esc(a.placesMessage ?? '')}</legend>${a.places.map((p, i) =>
    `<label><input type="radio" name="place" value="${esc(`${p.lat},${p.lng},${p.label}`)}"${i === 0 && a.places!.length === 1 ? ' checked' : ''}> ${esc(p.label)}</label>`).join('')}</fieldset>`
  return `<style nonce="${esc(a.styleNonce)}">${PIN_STYLE}</style>
<form class="card" method="post" action="${esc(base)}/account/addresses" data-address-form>${csrfField(s.csrf)}
<label for="label">Name of the place (optional)</label><input id="label" name="label" maxlength="60" placeholder="Home" value="${v('label')}">
<label for="address">Address</label><input id="address" name="address" autocomplete="street-address" maxlength="500" required value="${v('address')}">
${a.geocoder ? `<p><button class="btn" type="submit" formaction="${esc(base)}/account/addresses/find" formnovalidate data-find>Find this address</button></p>
<div data-places aria-live="polite">${places}</div>` : ''}
<fieldset class="pin" data-pin hidden><legend>Where is it? (optional, helps the driver and the delivery estimate)</legend>
<p><button class="btn" type="button" data-locate>Use my location</button> <button class="btn" type="button" data-pin-clear hidden>Remove the pin</button></p>
<p id="pin-help" class="muted">Click or tap the map to place the pin, or drag it. On the map, the arrow keys move the pin (Shift: farther), + and − zoom.</p>
<div class="pin-map" data-pin-map tabindex="0" role="application" aria-label="Map of the address" aria-describedby="pin-help pin-status" hidden></div>
<p id="pin-status" role="status" data-pin-status></p>
</fieldset>
<input type="hidden" name="lat" value="${v('lat')}"><input type="hidden" name="lng" value="${v('lng')}">
<label for="notes">Notes for the driver (optional)</label><input id="notes" name="notes" maxlength="500" placeholder="Gate code, floor, where to leave it" value="${v('notes')}">
<label class="check"><input type="checkbox" name="is_default"${a.values.is_default === 'on' ? ' checked' : ''}> Make it my default</label>
<p><button class="btn" type="submit">Save address</button></p></form>
<script type="application/json" id="pin-config">${scriptJson(a.pin)}</script>`
}

export function accountContent(base: string, s: FormState, me: AccountView, a: AddressFormState): string {
  const list = me.addresses.length
    ? `<ul class="card addresses">${me.addresses.map((x) => `<li class="row"><span>${x.label ? `<strong>${esc(x.label)}</strong>: ` : ''}${esc(x.address)}${x.is_default ? ' <span class="tag">default</span>' : ''}
<span class="muted">${x.positioned ? 'On the map' : 'No position'}${x.notes ? ` · For the driver: ${esc(x.notes)}` : ''}</span></span>
<form method="post" action="${esc(base)}/account/addresses/${x.id}/delete">${csrfField(s.csrf)}<button class="btn" type="submit" aria-label="Delete ${esc(x.label ?? x.address)}">Delete</button></form></li>`).join('')}</ul>`
    : '<p class="muted">No saved addresses yet.</p>'
  return `<h1>Your account</h1>${errorsBlock(s)}
<p>${esc(me.name ?? me.phone ?? me.email ?? '')}${me.email && me.name ? ` · ${esc(me.email)}` : ''}</p>
<h2>Saved addresses</h2>${list}
<h2>Add an address</h2>
${addressForm(base, s, a)}
<p><a class="btn" href="${esc(base)}/menu">Order now</a></p>
<form method="post" action="${esc(base)}/account/logout">${csrfField(s.csrf)}<button class="btn" type="submit">Sign out</button></form>`
}
