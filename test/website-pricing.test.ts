/**
 * The website prices a cart once (issue 33 item 2: "no triple pricing"): a cart whose lines can all
 * be ordered is drafted in one call to the order pricing (src/ops/orders/cart.ts `draftCart`, the store
 * actor's own functions), not once per line and again for the whole; only a cart that no longer
 * prices is priced line by line, to leave out what cannot be ordered. The totals it shows are the
 * totals of that one draft.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount } from './helpers/fixtures.ts'
import { pricedCart } from '../src/ops/web/website.ts'
import type { Services } from '../src/services.ts'
import { EMPTY_CART } from '../src/ops/web/website-cart.ts'

const s = await startServer()
t.teardown(() => s.close())
const svc = s.app.svc
const a = createAccount(svc.db)
const store = svc.stores.byId(a.storeId)!

/** The services with the store's menu reads counted: each pricing of a draft reads it once, the age check once. */
function counting(): { svc: Services; reads: () => number } {
  let n = 0
  const stores = Object.assign(Object.create(svc.stores), { menu: (id: number) => { n++; return svc.stores.menu(id) } })
  return { svc: Object.assign(Object.create(svc), { stores }) as Services, reads: () => n }
}
const line = (item_id: number, quantity = 1) => ({ item_id, quantity, variation: null, extras: [] })

t.test('a cart that prices is priced in one draft', async (t) => {
  const c = counting()
  const cart = { ...EMPTY_CART, id: 'abcdefghijklmnop', lines: [line(a.menu.fries, 2), line(a.menu.burger.id), line(a.menu.fries)] }
  const priced = pricedCart(c.svc, store, cart)
  // One read for the draft, one for the age check of the lines; before: one draft per line, one for the cart, then the age check (5).
  t.equal(c.reads(), 2, 'one pricing for three lines')
  t.equal(priced.lines.length, 3)
  t.same(priced.problems, [])
  t.equal(priced.object.item_count, 4)
  t.equal(priced.object.total, priced.object.lines.reduce((sum, l) => sum + l.line_total, 0), 'the total is the sum of the lines of that draft')
})

t.test('a cart with a line that can no longer be ordered leaves it out and says so', async (t) => {
  const c = counting()
  const cart = { ...EMPTY_CART, id: 'abcdefghijklmnop', lines: [line(a.menu.fries), line(999_999)] }
  const priced = pricedCart(c.svc, store, cart)
  t.equal(priced.lines.length, 1, 'the unknown item is left out')
  t.match(priced.problems, [/no longer on the menu/])
  t.equal(priced.object.item_count, 1)
})
