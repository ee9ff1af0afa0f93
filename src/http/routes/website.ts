/**
 * The store website at the store's `url` `{site_url}/s/{slug}` (issue 15; docs/website.md): pages
 * rendered with the store's theme, forms that work without JavaScript (post, then 303), the cart in a
 * cookie, sign-in in an HttpOnly cookie. Only the web's concerns live here — cookies, CSRF, CSP,
 * ETags, redirects; what a page shows and what a form does is src/ops/web/website.ts.
 */
import { createHash, randomBytes } from 'node:crypto'
import { Reply, route, type Ctx, type Route } from '../route.ts'
import { ApiError } from '../../errors.ts'
import type { Services } from '../../services.ts'
import type { StoreRow } from '../../storage/stores.ts'
import { WEBSITE_SCRIPT } from '../pages/website-script.ts'
import { accountContent, loginContent } from '../pages/website-account.ts'
import { inlineScript } from '../pages/browser-code.ts'
import { tileOrigin } from '../../domain/map-tiles.ts'
import { decodeCart, encodeCart, itemCount, EMPTY_CART, type WebCart } from '../../ops/web/website-cart.ts'
import { esc } from '../html.ts'
import { csrfMatches, fromSite } from '../session-gate.ts'
import { admitVisitor } from '../../auth/policy.ts'
import type { VisitorPrincipal } from '../../auth/principals.ts'
import {
  addressFormInput, customerFromToken, formErrors, foundMessage, itemExists, posIntOrNull, pricedCart, websiteCheckout, changeCart, sitePaths, accountView, storePin, type FormError, type PageInput, type Visitor,
} from '../../ops/web/website.ts'
import { renderWebsitePage } from '../pages/website-page.ts'
import { form, type Admitted, type FormRequest } from '../form.ts'
import type { Op } from '../../ops/op.ts'
import * as customerAuth from '../../ops/customers/customer-auth.ts'
import * as customers from '../../ops/customers/customers.ts'

const HTML = 'text/html; charset=utf-8'
const JSON_TYPE = 'application/json'
const tag = 'Store website'


/** Small pages of the platform itself (no store theme to render with: unknown or suspended store, refused post). */
const plainPage = (title: string, body: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title></head>
<body><main><h1>${esc(title)}</h1>${body}</main></body></html>`

// ---- cookies --------------------------------------------------------------------------------------------

const COOKIE = { cart: 'cart', csrf: 'csrf', customer: 'customer' } as const

function cookiesOf(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const part of (headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=')
    if (i > 0) out[part.slice(0, i).trim()] ??= part.slice(i + 1).trim()
  }
  return out
}

/**
 * Cookies live under the store's own path, so two stores on one site never see each other's cart or
 * sign-in; HttpOnly (the script never needs them), SameSite=Lax, Secure on an https site.
 */
function cookie(svc: Services, store: StoreRow, name: string, value: string | null, maxAgeSec = 60 * 60 * 24 * 30): string {
  const secure = svc.config.siteUrl.startsWith('https:') ? '; Secure' : ''
  const age = value === null ? 0 : maxAgeSec
  return `${name}=${value ?? ''}; Path=${sitePaths(svc, store).home}; Max-Age=${age}; HttpOnly; SameSite=Lax${secure}`
}

// ---- the visitor, CSRF ------------------------------------------------------------------------------------

interface Request { svc: Services; store: StoreRow; visitor: Visitor; cookies: Record<string, string>; setCookies: string[] }

function visitorOf(svc: Services, { store, guest }: { store: StoreRow; guest: VisitorPrincipal }, headers: Readonly<Record<string, string>>): Request {
  const cookies = cookiesOf(headers)
  const setCookies: string[] = []
  let csrf = cookies[COOKIE.csrf]
  if (!csrf || !/^[A-Za-z0-9_-]{32,64}$/.test(csrf)) {
    csrf = randomBytes(24).toString('base64url')
    setCookies.push(cookie(svc, store, COOKIE.csrf, csrf, 60 * 60 * 24 * 365))
  }
  const customer = customerFromToken(svc, store, cookies[COOKIE.customer])
  return { svc, store, cookies, setCookies, visitor: { guest, csrf, cart: decodeCart(cookies[COOKIE.cart]), customer } }
}

/**
 * Cross-site request forgery (docs/website.md "Security"): a post must come from the site itself
 * (`fromSite`: Origin, else Referer, names the site's origin) and carry the token of the visitor's
 * cookie in a form field (double submit). Either missing → 403 and nothing happens.
 */
function csrfOk(r: Request, headers: Readonly<Record<string, string>>, form: URLSearchParams): boolean {
  return fromSite(r.svc.config.siteUrl, headers) && csrfMatches(r.cookies[COOKIE.csrf] ?? '', form.get('csrf'))
}

// ---- answering pages ----------------------------------------------------------------------------------------

/**
 * Rendered with these stand-ins for the nonces, so the ETag covers the page and not the nonces of one
 * response. Two nonces: themes print `request.nonce` on their `<style>` tags, so it is theirs to know;
 * the script nonce is never given to a theme, so no theme — a custom one is any owner's HTML — can run
 * a script on this origin, where the owners' dashboard lives too.
 */
const STYLE_MARK = `nonce-${randomBytes(12).toString('hex')}`
const SCRIPT_MARK = `nonce-${randomBytes(12).toString('hex')}`

/**
 * `formAction`: where the page's forms may post. A store's pages post only under the store's own
 * address (`{site}/s/{slug}/`): the HTML may be an owner's custom theme, and a form of it must not
 * post to the owners' sign-in or sign-up on this origin (login CSRF). A path in `form-action` holds
 * for the form's own request only; the redirects that follow (to the tracking page) are allowed by
 * origin (CSP3 "paths and redirects").
 */
function pageHeaders(scriptNonce: string, styleNonce: string, formAction = "'self'", tiles: string | null = null): Record<string, string> {
  return {
    // No external assets (issue 15 item 3): only this response's inline style and script, by nonce;
    // the operator's map tiles (MAP_TILE_URL) for the address form's pin map, when configured.
    'Content-Security-Policy': `default-src 'none'; script-src 'nonce-${scriptNonce}'; style-src 'nonce-${styleNonce}'; img-src 'self' data:${tiles ? ` ${tileOrigin(tiles)}` : ''}; connect-src 'self'; form-action ${formAction}; base-uri 'none'; frame-ancestors 'none'`,
    // Same-origin posts then carry a Referer, which the CSRF check accepts when Origin is absent.
    'Referrer-Policy': 'same-origin',
    'X-Content-Type-Options': 'nosniff',
  }
}

const newNonce = () => randomBytes(16).toString('base64')

/** Cached, but revalidated every time (cart, sign-in and hours change what a page shows). */
const CACHE = { 'Cache-Control': 'private, no-cache', Vary: 'Cookie' }

/**
 * A themed page: weak ETag of the rendered HTML, 304 when the browser has it. The 304 carries no
 * Content-Security-Policy, so the browser keeps the stored one that matches the stored page's nonce.
 */
async function htmlPage(r: Request, h: Readonly<Record<string, string>>, status: number, page: Omit<PageInput, 'nonce'>, scripts: string[] = []): Promise<Reply> {
  const marked = await renderWebsitePage(r.svc, r.store, r.visitor, { ...page, nonce: STYLE_MARK })
  const withScript = marked.replace(/<\/body>/i, [WEBSITE_SCRIPT, ...scripts].map((js) => `<script nonce="${SCRIPT_MARK}">${js}</script>`).join('') + '</body>')
  // Hashed without the marks (random per process): every node of a cluster, and this one after a
  // restart, gives the same page the same ETag (docs/cluster.md "Public reads on replicas").
  const etag = `W/"${createHash('sha256').update(withScript.split(STYLE_MARK).join('\0s').split(SCRIPT_MARK).join('\0c')).digest('base64url').slice(0, 27)}"`
  const cookies: Record<string, string> = r.setCookies.length ? { 'Set-Cookie': r.setCookies.join('\n') } : {}
  if (status === 200 && (h['if-none-match'] ?? '').split(',').map((s) => s.trim()).includes(etag)) return new Reply(304, null, { ETag: etag, ...CACHE, ...cookies })
  const [scriptNonce, styleNonce] = [newNonce(), newNonce()]
  const formAction = `${new URL(r.svc.config.siteUrl).origin}${sitePaths(r.svc, r.store).home}/`
  return new Reply(status, withScript.split(STYLE_MARK).join(styleNonce).split(SCRIPT_MARK).join(scriptNonce), { ...pageHeaders(scriptNonce, styleNonce, formAction, r.svc.config.mapTileUrl), ...CACHE, ETag: etag, ...cookies }, HTML)
}

const redirect = (r: Request, to: string, cookies: string[] = []): Reply =>
  new Reply(303, null, { Location: to, 'Cache-Control': 'no-store', ...([...r.setCookies, ...cookies].length ? { 'Set-Cookie': [...r.setCookies, ...cookies].join('\n') } : {}) })

const plainHeaders = () => ({ ...pageHeaders(newNonce(), newNonce()), 'Cache-Control': 'no-store' })

/** The store of the address and its visitor, or the page a browser gets instead (unknown: 404; suspended account: 403). */
function storeOr(svc: Services, slug: string | undefined): { store: StoreRow; guest: VisitorPrincipal } | Reply {
  const store = svc.stores.bySlug(slug ?? '')
  if (!store) return new Reply(404, plainPage('Store not found', '<p>No store has this address. Check the link you were given.</p>'), plainHeaders(), HTML)
  // The policy admits the visitor (src/auth/policy.ts): a suspended account's store (docs/billing.md
  // "Suspension") keeps its data, and the page says it is unavailable.
  try {
    return { store, guest: admitVisitor(svc, store) }
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'account_suspended') throw err
    return new Reply(403, plainPage('This store is unavailable', '<p>This store is not taking visitors or orders at the moment. Please try again later.</p>'), plainHeaders(), HTML)
  }
}

type AnyCtx = Ctx<'none', undefined, URLSearchParams | undefined>

/** Common to every handler: the store (or its error page), the visitor, and for posts the CSRF check. */
function withVisitor(ctx: AnyCtx, then: (r: Request, form: Record<string, string>) => Reply | Promise<Reply>): Reply | Promise<Reply> {
  const admitted = storeOr(ctx.svc, ctx.params.slug)
  if (admitted instanceof Reply) return admitted
  const r = visitorOf(ctx.svc, admitted, ctx.headers)
  const body = ctx.body
  if (body && !csrfOk(r, ctx.headers, body)) return expired(r)
  return then(r, body ? Object.fromEntries(body) : {})
}

/** A post without the visitor's CSRF token, or from another site: nothing happens. */
const expired = (r: Request): Reply =>
  new Reply(403, plainPage('This form has expired', `<p>For your safety the form was not sent. <a href="${esc(sitePaths(r.svc, r.store).home)}">Go back to the store</a> and try again.</p>`), plainHeaders(), HTML)

/**
 * Who a website form acts as (src/http/form.ts `admit`): the store of `{slug}` (or its 404/403 page),
 * the visitor, the CSRF check; then no one (the sign-ins: public operations of the store), the shopper
 * (the checkout), or the signed-in customer (else the page `as` answers instead).
 */
const admitWebsite = (as: 'no one' | 'shopper' | ((signedOut: Request) => Reply) = 'no one') => (req: FormRequest): Admitted | Reply => {
  const admitted = storeOr(req.svc, req.params.slug)
  if (admitted instanceof Reply) return admitted
  const r = visitorOf(req.svc, admitted, req.headers)
  if (!csrfOk(r, req.headers, req.form)) return expired(r)
  // A shopper is the signed-in customer, or else the store's visitor (the policy's, src/auth/visitor.ts).
  if (as === 'shopper') return { principal: r.visitor.customer ?? r.visitor.guest, ids: { store: r.store.id }, state: r }
  if (as !== 'no one' && !r.visitor.customer) return as(r)
  return { principal: as === 'no one' ? null : r.visitor.customer, ids: { store: r.store.id }, state: r }
}

type Fields = Record<string, string>

/** A website form bound to an operation: the page's own 303 or page again, with the fields as posted. */
function websiteForm<O>(op: Op<any, O>, path: string, summary: string, b: {
  admit: (req: FormRequest) => Admitted | Reply
  input: (f: Fields, req: FormRequest) => unknown
  success: (value: O, r: Request, f: Fields, h: Readonly<Record<string, string>>) => Reply | Promise<Reply>
  failure: (r: Request, err: ApiError, f: Fields, h: Readonly<Record<string, string>>) => Reply | Promise<Reply>
  rateLimit?: { perMinute: number }
}): Route {
  const fields = (req: FormRequest): Fields => Object.fromEntries(req.form)
  return form(op, {
    path: `/s/{slug}${path}`, auth: 'none', tag, summary, description: POST_DESCRIPTION, pageErrors: POST_PAGE_ERRORS, admit: b.admit,
    ...(b.rateLimit ? { rateLimit: b.rateLimit } : {}),
    fields: (req) => b.input(fields(req), req),
    success: (value, req) => b.success(value, req.state as Request, fields(req), req.headers),
    failure: (_errors, req, err) => b.failure(req.state as Request, err, fields(req), req.headers),
  }) as Route
}

const page = (path: string, summary: string, handler: (ctx: AnyCtx) => Reply | Promise<Reply>, extra: Partial<Route> = {}): Route =>
  route({
    method: 'GET', path: `/s/{slug}${path}`, site: true, tag, summary, auth: 'none', produces: HTML,
    pageErrors: { 404: 'No store has this address (or no such item): a page saying so.', 403: 'The store\'s account is suspended: a page saying the store is unavailable.' },
    ...extra, handler: handler as never,
  }) as Route

const POST_DESCRIPTION = 'An HTML form post (`application/x-www-form-urlencoded`) with the `csrf` field of the page; answers 303 to the next page, or the page again with what to fix (422).'
const POST_PAGE_ERRORS = {
  403: 'The post did not come from the store\'s own page (Origin/Referer or the csrf field): nothing happens.', 404: 'No store has this address.',
  422: 'Refused (an invalid field, a sold-out item, a wrong password or code, …): the page again, saying what to fix.',
}

const post = (path: string, summary: string, handler: (ctx: AnyCtx) => Reply | Promise<Reply>, extra: Partial<Route> = {}): Route =>
  route({
    method: 'POST', path: `/s/{slug}${path}`, site: true, tag, summary, auth: 'none', produces: HTML, form: true,
    description: POST_DESCRIPTION, pageErrors: POST_PAGE_ERRORS,
    ...extra, handler: handler as never,
  }) as Route

/** An operation's refusal as form errors; anything else is not the visitor's to fix. */
const refusal = (err: unknown): FormError[] => {
  if (err instanceof ApiError && err.status < 500 && err.status !== 401 && err.status !== 429) return formErrors(err)
  if (err instanceof ApiError && (err.status === 401 || err.status === 429)) return [{ field: '', message: err.message }]
  throw err
}

/** The device name of website sign-ins: signing in again in a browser replaces that browser's token only. */
const DEVICE = 'website'
const toSignIn = (r: Request): Reply => redirect(r, `${sitePaths(r.svc, r.store).account}/login`)
const text = (s: string | undefined): string | null => (s?.trim() ? s.trim() : null)

const setCart = (r: Request, cart: WebCart) => cookie(r.svc, r.store, COOKIE.cart, cart.lines.length || cart.coupon ? encodeCart(cart) : null)
const wantsJson = (h: Readonly<Record<string, string>>) => (h.accept ?? '').includes(JSON_TYPE)

// ---- pages --------------------------------------------------------------------------------------------------

/** The address form's script (src/browser/address-pin.ts): the pin map, "use my location", places found in place. */
const ADDRESS_PIN_SCRIPT = inlineScript('address-pin.js')

/** The address form as posted, and the places a search found (docs/website.md "Accounts"). */
interface AddressFormIn { values?: Record<string, string>; places?: Array<{ label: string; lat: number; lng: number }>; placesMessage?: string }

const accountPage = (r: Request, h: Readonly<Record<string, string>>, status: number, errors: FormError[] = [], notice?: string, form: AddressFormIn = {}) => {
  const { csrf: _csrf, place: _place, ...values } = form.values ?? {}
  const content = accountContent(sitePaths(r.svc, r.store).home, { csrf: r.visitor.csrf, errors, notice }, accountView(r.svc, r.visitor.customer!.customerId), {
    values, places: form.places ?? null, placesMessage: form.placesMessage ?? null, geocoder: r.svc.geocoder.kind !== 'none', styleNonce: STYLE_MARK,
    pin: { store: storePin(r.store), tiles: r.svc.config.mapTileUrl, attribution: r.svc.config.mapTileAttribution },
  })
  return htmlPage(r, h, status, { template: 'home', pageType: 'account', title: 'Your account', path: `${sitePaths(r.svc, r.store).account}`, content }, [ADDRESS_PIN_SCRIPT])
}

const loginPage = (r: Request, h: Readonly<Record<string, string>>, status: number, errors: FormError[] = [], codeFor?: string, notice?: string) =>
  htmlPage(r, h, status, { template: 'home', pageType: 'login', title: 'Sign in', path: `${sitePaths(r.svc, r.store).account}/login`, content: loginContent(sitePaths(r.svc, r.store).home, { csrf: r.visitor.csrf, errors, notice }, codeFor) })

const checkoutPage = (r: Request, h: Readonly<Record<string, string>>, status: number, errors: FormError[] = [], values: Record<string, string> = {}) => {
  const { csrf: _drop, ...kept } = values
  return htmlPage(r, h, status, { template: 'checkout', pageType: 'checkout', title: 'Checkout', path: sitePaths(r.svc, r.store).checkout, errors, values: kept })
}

const itemPage = (r: Request, h: Readonly<Record<string, string>>, status: number, itemId: number, errors: FormError[] = []) =>
  htmlPage(r, h, status, { template: 'item', pageType: 'item', title: r.svc.stores.menu(r.store.id).items.find((i) => i.id === itemId)?.name ?? 'Item', path: sitePaths(r.svc, r.store).item(itemId), itemId, errors })

export const websiteRoutes: Route[] = [
  page('', 'A store\'s website: home page (its `url`)', (ctx) => withVisitor(ctx, (r) =>
    htmlPage(r, ctx.headers, 200, { template: 'home', pageType: 'home', title: r.store.title, path: sitePaths(r.svc, r.store).home }))),
  page('/menu', 'The store website\'s menu: categories, items, sold-out flags', (ctx) => withVisitor(ctx, (r) =>
    htmlPage(r, ctx.headers, 200, { template: 'menu', pageType: 'menu', title: 'Menu', path: sitePaths(r.svc, r.store).menu }))),
  page('/items/{item}', 'An item page: variations, extras, add to cart', (ctx) => withVisitor(ctx, (r) => {
    // `{item}`, not `{itemId}`: a malformed id is this page's own 404 too, not the API's JSON one.
    const id = posIntOrNull(ctx.params.item) ?? 0
    if (!itemExists(r.svc, r.store, id)) return new Reply(404, plainPage('Not on the menu', `<p>This item is not on the menu. <a href="${esc(sitePaths(r.svc, r.store).menu)}">See the menu</a>.</p>`), plainHeaders(), HTML)
    return itemPage(r, ctx.headers, 200, id)
  })),
  page('/cart', 'The cart, priced by the server', (ctx) => withVisitor(ctx, (r) =>
    htmlPage(r, ctx.headers, 200, { template: 'cart', pageType: 'cart', title: 'Cart', path: sitePaths(r.svc, r.store).cart }))),
  page('/checkout', 'The checkout form', (ctx) => withVisitor(ctx, (r) => checkoutPage(r, ctx.headers, 200))),
  page('/account', 'The customer\'s account: saved addresses (signs in first)', (ctx) => withVisitor(ctx, (r) =>
    r.visitor.customer ? accountPage(r, ctx.headers, 200) : redirect(r, `${sitePaths(r.svc, r.store).account}/login`)),
  { redirect: 'A guest (not signed in): to the sign-in page `/s/{slug}/account/login`.' }),
  page('/account/login', 'Customer sign-in: email and password, or a code by SMS', (ctx) => withVisitor(ctx, (r) => loginPage(r, ctx.headers, 200))),

  websiteForm(changeCart, '/cart', 'Change the cart: add a line (`item_id`, `quantity`, `variation_id`, `extra_ids`), remove one (`op=remove`, `line`), or set a coupon (`op=coupon`, `coupon_code`)', {
    admit: admitWebsite('shopper'),
    input: (f, req) => ({ form: f, extra_ids: req.form.getAll('extra_ids'), cart: (req.state as Request).visitor.cart }),
    success: ({ cart, item_count }, r, _f, h) => {
      if (!wantsJson(h)) return redirect(r, sitePaths(r.svc, r.store).cart, [setCart(r, cart)])
      const cookies = [...r.setCookies, setCart(r, cart)]
      return new Reply(200, JSON.stringify({ added: true, message: 'Added to your cart.', item_count }), { 'Set-Cookie': cookies.join('\n'), 'Cache-Control': 'no-store' }, JSON_TYPE)
    },
    // Sold out, unknown, or a variation the item does not offer: refused here, as checkout would.
    failure: (r, err, f, h) => {
      const message = refusal(err)[0]?.message ?? err.message
      if (wantsJson(h)) return new Reply(err.status, JSON.stringify({ added: false, message, item_count: itemCount(r.visitor.cart) }), {}, JSON_TYPE)
      const itemId = posIntOrNull(f.item_id)
      if (err.status === 422 && itemId !== null && itemExists(r.svc, r.store, itemId)) return itemPage(r, h, 422, itemId, [{ field: 'item_id', message }])
      return htmlPage(r, h, err.status, { template: 'cart', pageType: 'cart', title: 'Cart', path: sitePaths(r.svc, r.store).cart, errors: [{ field: 'item_id', message }] })
    },
  }),

  websiteForm(websiteCheckout, '/checkout', 'Place the order of the cart; 303 to its live tracking page `/t/{track_token}`', {
    admit: admitWebsite('shopper'),
    input: (f, req) => ({ form: f, cart: (req.state as Request).visitor.cart }),
    success: (out, r) => redirect(r, out.track_url, [setCart(r, EMPTY_CART)]),
    failure: (r, err, f, h) => checkoutPage(r, h, 422, refusal(err), f),
  }),

  websiteForm(customerAuth.login, '/account/login', 'Sign in with email and password (10 per minute)', {
    admit: admitWebsite(), rateLimit: { perMinute: 10 },
    input: (f) => ({ email: f.email ?? '', password: f.password ?? '', device: DEVICE }),
    success: (out, r) => redirect(r, sitePaths(r.svc, r.store).checkout, [cookie(r.svc, r.store, COOKIE.customer, out.token)]),
    failure: (r, err, _f, h) => loginPage(r, h, 422, refusal(err)),
  }),
  websiteForm(customerAuth.register, '/account/register', 'Create a customer account with email and password (10 per minute)', {
    admit: admitWebsite(), rateLimit: { perMinute: 10 },
    input: (f) => ({ name: f.name ?? '', email: f.email ?? '', password: f.password ?? '', device: DEVICE }),
    success: (out, r) => redirect(r, sitePaths(r.svc, r.store).checkout, [cookie(r.svc, r.store, COOKIE.customer, out.token)]),
    failure: (r, err, _f, h) => loginPage(r, h, 422, refusal(err)),
  }),
  websiteForm(customerAuth.requestOtp, '/account/otp', 'Text a sign-in code to a phone (6 per minute)', {
    admit: admitWebsite(), rateLimit: { perMinute: 6 },
    input: (f) => ({ phone: f.phone ?? '' }),
    success: (_out, r, f, h) => loginPage(r, h, 200, [], f.phone, 'We sent you a code. It expires in 5 minutes.'),
    failure: (r, err, _f, h) => loginPage(r, h, 422, refusal(err)),
  }),
  websiteForm(customerAuth.verifyOtp, '/account/otp/verify', 'Sign in with the SMS code (10 per minute)', {
    admit: admitWebsite(), rateLimit: { perMinute: 10 },
    input: (f) => ({ phone: f.phone ?? '', code: (f.code ?? '').trim(), device: DEVICE }),
    success: (out, r) => redirect(r, sitePaths(r.svc, r.store).checkout, [cookie(r.svc, r.store, COOKIE.customer, out.token)]),
    failure: (r, err, f, h) => loginPage(r, h, 422, refusal(err), f.phone),
  }),
  websiteForm(customers.createAddress, '/account/addresses', 'Save a delivery address: text, notes for the driver, and a position (`lat`/`lng` from the pin map or the browser\'s location, or `place` chosen from a search)', {
    admit: admitWebsite(toSignIn),
    input: (f) => addressFormInput(f),
    success: (_out, r) => redirect(r, sitePaths(r.svc, r.store).account),
    failure: (r, err, f, h) => accountPage(r, h, 422, refusal(err), undefined, { values: f }),
  }),
  websiteForm(customers.searchAddresses, '/account/addresses/find', 'Find places for the address text (the server\'s geocoder): the account page again with the places to choose from, or JSON `{places, message}` to `Accept: application/json` (30 per minute)', {
    admit: admitWebsite(toSignIn), rateLimit: { perMinute: 30 },
    input: (f) => ({ q: f.address ?? '' }),
    success: (found, r, f, h) => wantsJson(h)
      ? new Reply(200, JSON.stringify({ places: found.places, message: foundMessage(found) }), { 'Cache-Control': 'no-store' }, JSON_TYPE)
      : accountPage(r, h, 200, [], undefined, { values: f, places: found.places, placesMessage: foundMessage(found) }),
    failure: (r, err, f, h) => {
      const errors = refusal(err)
      return wantsJson(h)
        ? new Reply(422, JSON.stringify({ places: [], message: errors.map((e) => e.message).join(' ') }), { 'Cache-Control': 'no-store' }, JSON_TYPE)
        : accountPage(r, h, 422, errors, undefined, { values: f })
    },
  }),
  websiteForm(customers.deleteAddress, '/account/addresses/{address}/delete', 'Delete a saved address', {
    admit: admitWebsite(toSignIn),
    input: (_f, req) => ({ address_id: posIntOrNull(req.params.address) ?? 0 }),
    success: (_out, r) => redirect(r, sitePaths(r.svc, r.store).account),
    failure: (r, err, _f, h) => accountPage(r, h, 404, refusal(err)),
  }),
  websiteForm(customers.logout, '/account/logout', 'Sign out of this browser', {
    // Signed out already: only the cookie is cleared.
    admit: admitWebsite((r) => redirect(r, sitePaths(r.svc, r.store).home, [cookie(r.svc, r.store, COOKIE.customer, null)])),
    input: () => undefined,
    success: (_out, r) => redirect(r, sitePaths(r.svc, r.store).home, [cookie(r.svc, r.store, COOKIE.customer, null)]),
    failure: (_r, err) => { throw err },
  }),
]
