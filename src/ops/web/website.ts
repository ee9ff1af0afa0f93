/**
 * The store website (issue 15 item 2; docs/website.md): what its pages show, and its checkout. Pages
 * get the theme objects of src/themes/reference.ts built from the store, its live menu, the browser's
 * cart and the signed-in customer. Its forms are bindings of operations (src/http/form.ts, issue 33):
 * the sign-ins and addresses bind the customer operations, the checkout binds `website.checkout`
 * below, which places the order through the storefront operation (`storefront.orders.create`: guests,
 * takeaway and on-table, coupons, 40/30 limits, hours) or the customer one (`customer.orders.create`:
 * every mode of the store, saved addresses). Nothing is priced here that pricing does not price:
 * carts are priced by src/ops/orders/cart.ts, the functions the store actor prices orders with.
 */
import type { Services } from '../../services.ts'
import type { StoreRow } from '../../storage/stores.ts'
import { itemImages, photoView, soldOut, storeUrl } from '../../storage/stores.ts'
import type { CustomerPrincipal } from '../../auth/customer.ts'
import type { Principal, VisitorPrincipal } from '../../auth/principals.ts'
import { ApiError, WHOLE_REQUEST } from '../../errors.ts'
import { verticalOf } from '../../domain/verticals.ts'
import { customerAddresses, customers } from '../../storage/customers.ts'
import { parseSettings } from '../../storage/stores.ts'
import { storePosition } from '../../actors/store-delivery.ts'
import type { LatLng } from '../../domain/eta.ts'
import { settingsView } from '../stores/store-settings.ts'
import { canonicalHours, weekView } from '../../domain/business-hours.ts'
import { checkoutModes, defaultMode } from '../../domain/checkout-modes.ts'
import { checkoutClientUuid } from '../../actors/store-idempotency.ts'
import { couponOnDraft, draftCart } from '../orders/cart.ts'
import { STOREFRONT_LIMITS, STOREFRONT_ORDER_TYPES, createStorefrontOrder, storefrontTypes } from './storefront.ts'
import { createCustomerOrder } from '../orders/customer-orders.ts'
import { addressDelivery } from '../delivery/delivery-zones.ts'
import * as v from 'valibot'
import { defineOp, Outcome, type Op, type OpCtx } from '../op.ts'
import { validate } from '../validate.ts'
import { storeOf } from '../scope.ts'
import { admitVisitor } from '../../auth/policy.ts'
import type { ThemeContext } from '../../themes/render.ts'
import type { TemplateName } from '../../themes/reference.ts'
import { addLine, itemCount, removeLine, type WebCart } from './website-cart.ts'

/** The visitor as the website knows them: the policy's visitor principal, their CSRF token, their cart, and the customer if signed in. */
export interface Visitor {
  guest: VisitorPrincipal
  csrf: string
  cart: WebCart
  customer: CustomerPrincipal | null
}

export interface FormError { field: string; message: string }

/** Paths of the website under the site URL (`{site_url}/s/{slug}`, api-v1 §2.2 `url`). */
export function sitePaths(svc: Services, store: StoreRow) {
  const home = new URL(storeUrl(svc.config.siteUrl, store.slug)).pathname
  return {
    home,
    menu: `${home}/menu`,
    cart: `${home}/cart`,
    checkout: `${home}/checkout`,
    account: `${home}/account`,
    item: (id: number) => `${home}/items/${id}`,
  }
}

/** api-v1 §2.4: a guest (no account) orders as the storefront does: takeaway or on-table, where the store offers it. */
const modesFor = (store: StoreRow, customer: CustomerPrincipal | null): string[] =>
  customer ? [...verticalOf(store.store_type).fulfillment_modes] : storefrontTypes(store)

/** The customer a cookie's token names, at this store only (a token of another store is no one here). */
export function customerFromToken(svc: Services, store: StoreRow, token: string | undefined): CustomerPrincipal | null {
  if (!token) return null
  const p = svc.auth.customer({ headers: {}, query: {}, bearer: token })
  return p && p.storeId === store.id ? p : null
}

// ---- theme objects ---------------------------------------------------------------------------------

function storeObject(svc: Services, store: StoreRow, customer: CustomerPrincipal | null) {
  const s = settingsView(store)
  const hours = Object.entries(s.business_hours ?? {}).flatMap(([day, intervals]) =>
    (intervals as Array<[string, string]>).map(([opens, closes]) => ({ day, opens, closes })))
  const paths = sitePaths(svc, store)
  const modes = modesFor(store, customer)
  return {
    id: store.id, name: store.title, slug: store.slug, url: paths.home, store_type: store.store_type, currency: store.currency,
    city: store.city, address: s.address, phone: s.phone, is_open: s.open_now, next_opening: s.next_opening, hours,
    week: weekView(canonicalHours(s.business_hours)),
    fulfillment_modes: modes, account_url: paths.account,
    // The checkout's words per mode and the mode it starts with (issue 34 item 6).
    modes: checkoutModes(modes), default_mode: defaultMode(modes),
  }
}

function menuObject(svc: Services, store: StoreRow) {
  const menu = svc.stores.menu(store.id)
  const food = verticalOf(store.store_type).capabilities.food_fields
  const paths = sitePaths(svc, store)
  const items = menu.items.map((i) => {
    const photo = photoView(svc.config.siteUrl, i)
    return {
      id: i.id, name: i.name, description: i.description ?? '', price: i.price, url: paths.item(i.id),
      image_url: itemImages(svc.config.siteUrl, i)[0] ?? null, thumb_url: photo?.thumb_url ?? null,
      category_id: i.category_id, available: !soldOut(i, menu.variants.get(i.id)),
      dietary: food ? [...(i.is_vegan ? ['vegan'] : []), ...(i.is_halal ? ['halal'] : [])] : [],
      attributes: food ? {} : Object.fromEntries(Object.entries({ brand: i.brand, sku: i.sku }).filter(([, x]) => x != null)),
      variations: (menu.variants.get(i.id) ?? []).map((v) => ({ id: v.id, name: v.name, price: v.price ?? i.price })),
      extras: (menu.extras.get(i.id) ?? []).map((e) => ({ id: e.id, name: e.name, price: e.price })),
    }
  })
  const handle = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')
  const categories = menu.categories.map((c) => ({ id: c.id, name: c.name, url: `${paths.menu}#${handle(c.name)}`, items: items.filter((i) => i.category_id === c.id) }))
  return { categories, items, url: paths.menu }
}

/** The draft of these lines, or null when they cannot be ordered as they are (sold out, unknown, …). */
function draftOrNull(svc: Services, store: StoreRow, type: string, items: Array<{ item_id: number; quantity: number; variation: number | null; extras: number[] }>, now: string) {
  try {
    return draftCart(svc, store, { type, items }, now)
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    return null
  }
}

/** A type the cart can be priced as with no extra details (no table, no address). */
function pricingType(store: StoreRow): string {
  const modes = verticalOf(store.store_type).fulfillment_modes as readonly string[]
  return modes.find((m) => m !== 'on-table' && m !== 'delivery') ?? modes[0] ?? 'takeaway'
}

/**
 * The cart priced on the live menu. Lines that can no longer be ordered (sold out, removed from the
 * menu) are left out and named in `problems`; a coupon that does not apply is named there too.
 */
export function pricedCart(svc: Services, store: StoreRow, cart: WebCart) {
  const now = new Date().toISOString()
  const type = pricingType(store)
  const problems: string[] = []
  const itemsOf = (lines: WebCart['lines']) => lines.map((l) => ({ item_id: l.item_id, quantity: l.quantity, variation: l.variation, extras: l.extras }))
  // One pricing of the whole cart; only a cart that no longer prices is priced line by line, to leave out what cannot be ordered.
  let draft = cart.lines.length === 0 ? null : draftOrNull(svc, store, type, itemsOf(cart.lines), now)
  let ok = cart.lines
  if (!draft && cart.lines.length > 0) {
    ok = cart.lines.filter((l) => {
      if (draftOrNull(svc, store, type, itemsOf([l]), now)) return true
      const name = svc.stores.menu(store.id).items.find((i) => i.id === l.item_id)?.name
      problems.push(name ? `${name} is no longer available and was left out.` : 'An item is no longer on the menu and was left out.')
      return false
    })
    if (ok.length > 0) draft = draftCart(svc, store, { type, items: itemsOf(ok) }, now)
  }
  const paths = sitePaths(svc, store)
  const empty = { lines: [], item_count: 0, subtotal: 0, discount: 0, total: 0, coupon: null, min_age: null, url: paths.cart, checkout_url: paths.checkout }
  if (!draft) return { object: empty, problems, lines: ok }
  let coupon: string | null = null
  if (cart.coupon) {
    const c = couponOnDraft(svc, store, draft, cart.coupon, now)
    if (c.ok) { draft = c.draft; coupon = cart.coupon } else problems.push(`Coupon ${cart.coupon}: ${c.reason}`)
  }
  const object = {
    lines: draft.lines.map((l) => ({
      item_id: l.item_id, name: l.name, quantity: l.quantity, variation: l.variant_name, extras: l.extras.map((e) => e.name),
      unit_price: l.unit_price, line_total: l.line_total,
    })),
    item_count: draft.lines.reduce((n, l) => n + l.quantity, 0),
    subtotal: draft.subtotal, discount: draft.discount, total: draft.total, coupon,
    // Age-restricted items (issue 18 item 4): the checkout shows its "old enough" box when set.
    min_age: cartMinAge(svc, store, draft.lines.map((l) => l.item_id)),
    url: paths.cart, checkout_url: paths.checkout,
  }
  return { object, problems, lines: ok }
}

function cartMinAge(svc: Services, store: StoreRow, itemIds: number[]): number | null {
  const ages = svc.stores.menu(store.id).items.filter((i) => itemIds.includes(i.id) && i.min_age != null).map((i) => i.min_age!)
  return ages.length > 0 ? Math.max(...ages) : null
}

function customerObject(svc: Services, p: CustomerPrincipal | null) {
  if (!p) return null
  const c = customers.byId(svc.db, p.customerId)
  if (!c) return null
  // Each saved address with what delivering there costs and when it would arrive (docs/dispatch.md "Quotes").
  const store = svc.stores.byId(p.storeId)
  const addresses = customerAddresses.list(svc.db, p.customerId).map((a) => ({
    id: a.id, label: a.label, address: a.address, is_default: a.is_default === 1, delivery: store ? addressDelivery(store, a) : null,
  }))
  return { name: c.name, email: c.email, phone: c.phone, addresses }
}

export interface PageInput {
  /** The theme template, or the layout alone around `content` (account pages). */
  template: TemplateName
  pageType: string
  title: string
  path: string
  nonce: string
  itemId?: number
  errors?: FormError[]
  values?: Record<string, string>
  /** Trusted HTML shown inside the theme's layout instead of the template. */
  content?: string
}

/** The services with the store's menu read once for this page (it is read for the menu, each cart line and the total). */
function menuReadOnce(svc: Services): Services {
  const menus = new Map<number, ReturnType<Services['stores']['menu']>>()
  const menu = (id: number) => menus.get(id) ?? menus.set(id, svc.stores.menu(id)).get(id)!
  return { ...svc, stores: { ...svc.stores, menu } }
}

/** Every object a page of the theme reads (docs/themes.md "Reference"). */
export function websiteContext(full: Services, store: StoreRow, visitor: Visitor, page: PageInput): ThemeContext {
  const svc = menuReadOnce(full)
  const menu = menuObject(svc, store)
  const cart = pricedCart(svc, store, visitor.cart)
  const errors = [...(page.errors ?? []), ...cart.problems.map((message) => ({ field: 'cart', message }))]
  return {
    store: storeObject(svc, store, visitor.customer),
    menu,
    item: page.itemId === undefined ? null : menu.items.find((i) => i.id === page.itemId) ?? null,
    cart: cart.object,
    order: null,
    customer: customerObject(svc, visitor.customer),
    form: { csrf_token: visitor.csrf, errors, values: page.values ?? {} },
    request: { path: page.path, locale: 'en', nonce: page.nonce, page_type: page.pageType },
    page: { title: page.title === store.title ? store.title : `${page.title} · ${store.title}`, description: `Order from ${store.title}`, template: page.pageType },
  }
}

/** The signed-in customer's account page: who they are and their saved addresses (docs/website.md "Accounts"). */
export function accountView(svc: Services, customerId: number) {
  const c = customers.byId(svc.db, customerId)!
  const addresses = customerAddresses.list(svc.db, c.id).map((a) => ({
    id: a.id, label: a.label, address: a.address, notes: a.notes, positioned: a.lat != null && a.lng != null, is_default: a.is_default === 1,
  }))
  return { name: c.name, email: c.email, phone: c.phone, addresses }
}

/** Where the store is on the address form's pin map (its settings' position), if it has one. */
export const storePin = (store: StoreRow): LatLng | null => storePosition(parseSettings(store.settings))

/** Does the item exist on this store's menu (for the item page's 404)? */
export const itemExists = (svc: Services, store: StoreRow, itemId: number): boolean => svc.stores.menu(store.id).items.some((i) => i.id === itemId)

/** Check a line can be ordered now (sold out, unknown variation or extra → the reason). */
export function lineProblem(svc: Services, store: StoreRow, line: { item_id: number; quantity: number; variation: number | null; extras: number[] }): string | null {
  const menu = svc.stores.menu(store.id)
  const item = menu.items.find((i) => i.id === line.item_id)
  if (!item) return 'This item is not on the menu.'
  if (soldOut(item, menu.variants.get(item.id))) return `${item.name} is sold out.`
  try {
    draftCart(svc, store, { type: pricingType(store), items: [line] }, new Date().toISOString())
    return null
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    return Object.values(err.errors ?? {}).flat()[0] ?? err.message
  }
}

// ---- saved addresses: the form's fields as the address operations' input ------------------------------

const numberOrNull = (s: string | undefined): number | null => (s?.trim() ? Number(s.trim()) : null)

/**
 * The website's address form (issue 34 item 4) as `customer.addresses.create` input: the hidden
 * `lat`/`lng` the pin map fills (a value that is not a number stays NaN, refused by the operation with
 * the field named); without them, a place chosen from the search (`place`: `lat,lng,label`, the form
 * without JavaScript) gives the position and its label becomes the address.
 */
export function addressFormInput(f: Record<string, string>) {
  let lat = numberOrNull(f.lat), lng = numberOrNull(f.lng), address = f.address ?? ''
  const chosen = lat === null && lng === null ? /^(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?),([\s\S]+)$/.exec(f.place ?? '') : null
  if (chosen) { lat = Number(chosen[1]); lng = Number(chosen[2]); address = chosen[3]! }
  const text = (s: string | undefined) => (s?.trim() ? s.trim() : null)
  return { label: text(f.label), address, lat, lng, notes: text(f.notes), is_default: f.is_default === 'on' }
}

/** What the address search says on the page, above its places. */
export function foundMessage(found: { places: unknown[]; failure: string | null; source: string }): string {
  if (found.places.length > 0) return found.places.length === 1 ? 'Is this the place? Save it, or move the pin.' : `Which place is it? ${found.places.length} found.`
  if (found.failure) return 'The address search is not answering right now. Place the pin on the map, or save the address as text.'
  return 'No place found for this text. Check it, or place the pin on the map.'
}

// ---- the checkout: one operation --------------------------------------------------------------------------

/**
 * Run `op` as part of this one (the checkout places its order through the storefront or the customer
 * order operation): the same input validation and `run`, with the scope this operation resolved and
 * the principal the policy decided, without going through the pipeline a second time.
 */
async function placeWith<O>(op: Op<any, O>, ctx: OpCtx, principal: Principal, raw: unknown): Promise<O> {
  const input = op.input ? validate(op.input, raw, 'body') : undefined
  const out = await op.run(Object.assign({}, ctx, { principal }), input)
  return out instanceof Outcome ? out.value : out
}

/** Field names of the operations' errors → the checkout form's fields. */
const FORM_FIELD: Record<string, string> = { phone: 'customer_phone', tip_amount: 'tip', [WHOLE_REQUEST]: '' }

/** An ApiError as messages for the form (field errors first, else the error's message). */
export function formErrors(err: ApiError): FormError[] {
  const fields = Object.entries(err.errors ?? {})
  if (fields.length === 0) return [{ field: '', message: err.message }]
  return fields.flatMap(([field, msgs]) => msgs.map((message) => ({ field: FORM_FIELD[field] ?? field, message: field.startsWith('items') ? `Cart: ${message}` : message })))
}

const text = (f: Record<string, string>, k: string): string | null => {
  const s = f[k]?.trim()
  return s ? s : null
}

const CartLineInput = v.object({ item_id: v.number(), quantity: v.number(), variation: v.nullable(v.number()), extras: v.array(v.number()) })

/** A whole number from 1, or null: the cart form's ids as posted. */
export const posIntOrNull = (s: string | undefined): number | null => (s && /^[1-9]\d{0,15}$/.test(s) ? Number(s) : null)

const CartSchema = {
  type: 'object', required: ['cart', 'item_count'],
  properties: { cart: { type: 'object', description: 'The cart as the browser keeps it (its cookie)' }, item_count: { type: 'integer' } },
}

/**
 * The cart form (docs/website.md "Cart"): add a line (`item_id`, `quantity` clamped to 1..30,
 * `variation_id`, `extra_ids`), remove one (`op=remove`, `line`), or set the coupon (`op=coupon`,
 * `coupon_code`). A line that cannot be ordered now (sold out, unknown, a variation the item does not
 * offer, over the cart's limits) is refused with 422 on `item_id`, as checkout would refuse it; the
 * cart itself is the browser's (a cookie), so nothing is written.
 */
export const changeCart = defineOp({
  id: 'website.cart.change', tag: 'Store website', summary: 'Change the website cart: add a line, remove one, or set the coupon',
  access: { visitor: true, customer: true }, scope: ['store'],
  input: v.object({
    /** The cart form's fields as posted; `extra_ids` may repeat. */
    form: v.record(v.string(), v.string()),
    extra_ids: v.array(v.string()),
    cart: v.object({ id: v.nullable(v.string()), lines: v.array(CartLineInput), coupon: v.nullable(v.string()) }),
  }),
  output: CartSchema,
  run: (ctx, { form: f, extra_ids, cart }) => {
    const store = storeOf(ctx)
    const done = (next: WebCart) => ({ cart: next, item_count: itemCount(next) })
    const op = f.op ?? 'add'
    if (op === 'remove') return done(removeLine(cart, Number(f.line)))
    if (op === 'coupon') return done({ ...cart, coupon: (f.coupon_code ?? '').trim().slice(0, STOREFRONT_LIMITS.couponCode) || null })
    const itemId = posIntOrNull(f.item_id)
    const quantity = Math.min(Math.max(Number(f.quantity ?? 1) || 1, 1), STOREFRONT_LIMITS.perLine)
    const line = { item_id: itemId ?? 0, quantity: Math.trunc(quantity), variation: posIntOrNull(f.variation_id), extras: extra_ids.map(posIntOrNull).filter((x): x is number => x !== null) }
    const problem = itemId === null ? 'Choose an item.' : lineProblem(ctx.svc, store, line)
    const added = problem === null ? addLine(cart, line) : { refused: problem }
    if ('refused' in added) throw new ApiError('validation_failed', undefined, { item_id: [added.refused] })
    return done(added)
  },
})

/**
 * Place the order of the checkout form (docs/website.md "Checkout"), as the signed-in customer or the
 * store website's visitor (src/auth/visitor.ts), both decided by the policy. Guests order through the
 * storefront operation; signed-in customers through the customer operation (a coupon with a takeaway
 * or table order goes through the storefront operation, the only one that redeems coupons, as the
 * store's visitor; the order is linked to the customer by phone, src/ops/orders/order-create.ts). Answers
 * where the customer continues: the live tracking page (`continue_url`, api-v1 §4.3).
 */
export const websiteCheckout = defineOp({
  id: 'website.checkout', tag: 'Store website', summary: 'Place the order of the website cart',
  access: { visitor: true, customer: true }, scope: ['store'],
  input: v.object({
    /** The checkout form's fields as posted. */
    form: v.record(v.string(), v.string()),
    /** The browser's cart (its cookie, src/ops/web/website-cart.ts). */
    cart: v.object({ id: v.nullable(v.string()), lines: v.array(CartLineInput), coupon: v.nullable(v.string()) }),
  }),
  output: { type: 'object', required: ['track_url'], properties: { track_url: { type: 'string', format: 'uri' } } },
  run: async (ctx, { form, cart: posted }) => {
    const svc = ctx.svc
    const store = storeOf(ctx)
    const customer = ctx.principal?.kind === 'customer' ? ctx.principal : null
    const cart = pricedCart(menuReadOnce(svc), store, posted)
    if (cart.lines.length === 0) throw new ApiError('validation_failed', undefined, { items: ['Your cart is empty.'] })
    const modes = modesFor(store, customer)
    const type = text(form, 'type') ?? defaultMode(modes) ?? ''
    if (!modes.includes(type)) {
      throw new ApiError('validation_failed', undefined, { type: [customer || !verticalOf(store.store_type).fulfillment_modes.includes(type as never) ? 'Choose how you would like your order.' : 'Sign in to order this way (delivery and the store\'s other modes need an account).'] })
    }
    const tipText = text(form, 'tip')
    const tip = tipText === null ? null : Number(tipText)
    if (tip !== null && (!Number.isFinite(tip) || tip < 0)) throw new ApiError('validation_failed', undefined, { tip_amount: ['Enter a tip of 0 or more.'] })
    const items = cart.lines.map((l) => ({ item_id: l.item_id, quantity: l.quantity, variation: l.variation, extras: l.extras }))
    const coupon = text(form, 'coupon_code') ?? posted.coupon
    const common = {
      type, items, customer_name: text(form, 'customer_name'), phone: text(form, 'customer_phone'), note: text(form, 'note'), tip_amount: tip,
      table_number: type === 'on-table' ? text(form, 'table_number') : null, source: 'website',
      // The checkout's "I am old enough" box (issue 18 item 4): the store actor asks for it when the cart holds `min_age` items.
      age_confirmed: form.age_confirmed === 'on',
    }
    // One cart, one form: one order, however often it is posted (src/domain/idempotency.ts websiteClientUuid).
    if (posted.id) Object.assign(common, { client_uuid: checkoutClientUuid(posted.id, [common, coupon, form.address ?? '', form.address_id ?? '']) })
    const viaStorefront = !customer || (coupon !== null && (STOREFRONT_ORDER_TYPES as readonly string[]).includes(type))
    let order: { track_url: string }
    if (viaStorefront) {
      order = await placeWith(createStorefrontOrder, ctx, admitVisitor(svc, store), { ...common, coupon_code: coupon })
    } else {
      const addressId = text(form, 'address_id')
      const address = text(form, 'address')
      const input = { ...common, coupon_code: coupon, ...(type === 'delivery' ? (address ? { address } : { address_id: addressId === null ? null : Number(addressId) }) : {}) }
      order = await placeWith(createCustomerOrder, ctx, customer, input)
    }
    return { track_url: order.track_url }
  },
})
