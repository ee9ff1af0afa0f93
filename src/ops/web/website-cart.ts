/**
 * The store website's cart as the browser keeps it (issue 15 item 2: "a cart kept in the browser"):
 * a cookie holding only what the customer chose — item, variation, extras, quantity, coupon code.
 * No price travels in it: every page prices it again on the live menu (src/ops/web/website.ts), so a
 * tampered cookie can at worst name items that do not exist, which pricing refuses like any input.
 * Bounded like a storefront order (api-v1 §8): 40 items, 30 per line.
 */
import { randomBytes } from 'node:crypto'
import { STOREFRONT_LIMITS } from './storefront.ts'

export interface CartLine {
  item_id: number
  quantity: number
  variation: number | null
  extras: number[]
}

export interface WebCart {
  /**
   * Random, set when the first line goes in and gone with the cart: the checkout's idempotency key
   * is made from it, so a form posted twice (a double tap, a retried request) places one order.
   */
  id: string | null
  lines: CartLine[]
  coupon: string | null
}

export const EMPTY_CART: WebCart = Object.freeze({ id: null, lines: [], coupon: null }) as WebCart
/** Distinct lines a cart may hold (each at least one item, so the 40-item limit binds first anyway). */
const MAX_LINES = STOREFRONT_LIMITS.items

const posInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x > 0 && x < 2 ** 53

/** Read the cookie value; anything malformed is an empty cart (never an error page). */
export function decodeCart(raw: string | undefined): WebCart {
  if (!raw) return EMPTY_CART
  let data: unknown
  try {
    data = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'))
  } catch {
    return EMPTY_CART
  }
  if (!data || typeof data !== 'object') return EMPTY_CART
  const d = data as { i?: unknown; l?: unknown; c?: unknown }
  const lines: CartLine[] = []
  for (const l of Array.isArray(d.l) ? d.l.slice(0, MAX_LINES) : []) {
    if (!Array.isArray(l)) continue
    const [item, qty, variation, extras] = l as unknown[]
    if (!posInt(item) || !posInt(qty)) continue
    lines.push({
      item_id: item,
      quantity: Math.min(qty, STOREFRONT_LIMITS.perLine),
      variation: posInt(variation) ? variation : null,
      extras: Array.isArray(extras) ? [...new Set(extras.filter(posInt))].slice(0, 50) : [],
    })
  }
  const coupon = typeof d.c === 'string' && d.c.length > 0 && d.c.length <= STOREFRONT_LIMITS.couponCode ? d.c : null
  const id = typeof d.i === 'string' && /^[\w-]{16,32}$/.test(d.i) ? d.i : null
  return { id, lines, coupon }
}

/** The cookie value: compact arrays, base64url (cookie-safe without quoting). */
export function encodeCart(cart: WebCart): string {
  const l = cart.lines.map((x) => [x.item_id, x.quantity, x.variation, x.extras])
  return Buffer.from(JSON.stringify({ i: cart.id, l, c: cart.coupon }), 'utf8').toString('base64url')
}

export const itemCount = (cart: WebCart): number => cart.lines.reduce((n, l) => n + l.quantity, 0)

const sameChoice = (a: CartLine, b: CartLine) =>
  a.item_id === b.item_id && a.variation === b.variation && a.extras.length === b.extras.length && [...a.extras].sort().join() === [...b.extras].sort().join()

/**
 * Add a line (merging with the same choice). Returns the reason instead when the cart would break
 * the storefront limits (api-v1 §8), so the page can say so before checkout does.
 */
export function addLine(cart: WebCart, line: CartLine): WebCart | { refused: string } {
  if (itemCount(cart) + line.quantity > STOREFRONT_LIMITS.items) return { refused: `A cart holds at most ${STOREFRONT_LIMITS.items} items.` }
  const i = cart.lines.findIndex((l) => sameChoice(l, line))
  if (i >= 0) {
    const quantity = cart.lines[i]!.quantity + line.quantity
    if (quantity > STOREFRONT_LIMITS.perLine) return { refused: `At most ${STOREFRONT_LIMITS.perLine} of one item.` }
    return { ...cart, lines: cart.lines.map((l, j) => (j === i ? { ...l, quantity } : l)) }
  }
  if (cart.lines.length >= MAX_LINES) return { refused: `A cart holds at most ${MAX_LINES} lines.` }
  return { ...cart, id: cart.id ?? randomBytes(12).toString('base64url'), lines: [...cart.lines, line] }
}

export function removeLine(cart: WebCart, index: number): WebCart {
  return { ...cart, lines: cart.lines.filter((_, j) => j !== index) }
}
