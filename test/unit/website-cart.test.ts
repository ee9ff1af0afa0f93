/** The website's cart cookie (src/ops/web/website-cart.ts): what it keeps, what it refuses, and that a tampered one is harmless. */
import t from 'tap'
import { addLine, decodeCart, encodeCart, itemCount, removeLine, EMPTY_CART, type WebCart } from '../../src/ops/web/website-cart.ts'

const line = (item_id: number, quantity = 1, variation: number | null = null, extras: number[] = []) => ({ item_id, quantity, variation, extras })
const added = (c: WebCart, l: ReturnType<typeof line>): WebCart => {
  const r = addLine(c, l)
  if ('refused' in r) throw new Error(r.refused)
  return r
}

t.test('round trip, and the same choice merges into one line', async (t) => {
  let c = added(EMPTY_CART, line(1, 2, 5, [7, 8]))
  c = added(c, line(1, 1, 5, [8, 7]))
  c = added(c, line(1, 1, 6))
  t.equal(c.lines.length, 2)
  t.equal(c.lines[0]!.quantity, 3)
  t.match(c.id, /^[\w-]{16}$/, 'a cart gets an id with its first line')
  t.same(decodeCart(encodeCart({ ...c, coupon: 'SAVE5' })), { ...c, coupon: 'SAVE5' })
  t.equal(itemCount(c), 4)
  t.same(removeLine(c, 0).lines, [line(1, 1, 6)])
})

t.test('the storefront limits hold in the cart: 40 items, 30 of one line', async (t) => {
  const c = added(EMPTY_CART, line(1, 30))
  t.match(addLine(c, line(1, 1)), { refused: /At most 30/ })
  t.match(addLine(added(c, line(2, 10)), line(3, 1)), { refused: /at most 40 items/ })
})

t.test('anything malformed reads as an empty cart or is dropped; no price is ever read', async (t) => {
  for (const raw of [undefined, '', 'not-base64-json', Buffer.from('[1,2]').toString('base64url'), Buffer.from('null').toString('base64url')]) {
    t.same(decodeCart(raw), EMPTY_CART, String(raw))
  }
  const tampered = Buffer.from(JSON.stringify({ i: 'x', l: [[1, 2, null, [], 'price:1'], [-1, 1], [2, 500, 'big', [3, 3, 'x']], 'junk'], c: 'C'.repeat(41), price: 1 })).toString('base64url')
  t.same(decodeCart(tampered), { id: null, lines: [line(1, 2), line(2, 30, null, [3])], coupon: null })
})
