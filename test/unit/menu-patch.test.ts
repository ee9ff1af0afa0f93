/**
 * The store actor keeps its menu in memory and, after a menu write, re-reads only the changed item
 * (src/storage/stores.ts withItemChanged). That patched menu must equal the menu read afresh, in
 * order, with the same pricing index, after any sequence of item and variant writes: a random walk
 * of writes checks it after every step.
 */
import t from 'tap'
import { migrate, openDb } from '../../src/storage/db.ts'
import { applyMenuOp, type MenuOp } from '../../src/storage/menu.ts'
import { createStoreQueries, pricingIndex, withItemChanged, type HeldMenu } from '../../src/storage/stores.ts'
import { syncPlatformPlans } from '../../src/storage/plans.ts'
import { createOwner, createStore, createCategory } from '../helpers/fixtures.ts'

const db = openDb(':memory:')
migrate(db)
syncPlatformPlans(db)
const storeId = createStore(db, createOwner(db)).id
const cats = [createCategory(db, storeId, 'A', { station: 'grill' }), createCategory(db, storeId, 'B', { station: 'bar' })]
const stores = createStoreQueries(db)

// A small deterministic generator: the walk is the same on every run.
let seed = 42
const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n)
const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)]!

const fresh = (): HeldMenu => {
  const menu = stores.menu(storeId)
  return { menu, index: pricingIndex(menu) }
}
const plain = (h: HeldMenu) => ({
  items: h.menu.items,
  variants: [...h.menu.variants].sort(([a], [b]) => a - b),
  extras: [...h.menu.extras].sort(([a], [b]) => a - b),
  index: [...h.index].sort(([a], [b]) => a - b),
})

t.test('after every item and variant write, the patched menu equals the menu read afresh', async (t) => {
  let held = fresh()
  let patched = 0
  for (let step = 0; step < 400; step++) {
    const items = held.menu.items.map((i) => i.id)
    const withVariants = [...held.menu.variants.keys()]
    const kind = items.length < 3 ? 0 : rand(7)
    let op: MenuOp
    if (kind === 0) {
      op = { op: 'item.create', data: { category_id: pick(cats), name: `I${step}`, price: 100 + rand(900), position: rand(4), extras: rand(2) ? [{ name: 'x', price: 50 }] : [] } }
    } else if (kind === 1) op = { op: 'item.update', id: pick(items), data: { position: rand(4), price: 100 + rand(900), category_id: pick(cats) } }
    else if (kind === 2) op = { op: 'item.update', id: pick(items), data: { extras: rand(2) ? [] : [{ name: 'y', price: 10 }, { name: 'z', price: 20 }] } }
    else if (kind === 3) op = { op: 'item.sold_out', id: pick(items), value: null }
    else if (kind === 4) op = { op: 'item.delete', id: pick(items) }
    else if (kind === 5 || withVariants.length === 0) op = { op: 'variant.create', itemId: pick(items), data: { name: `V${step}`, price: rand(2) ? 500 : null, position: rand(3) } }
    else {
      const itemId = pick(withVariants)
      const v = pick(held.menu.variants.get(itemId)!)
      op = rand(2) ? { op: 'variant.update', itemId, id: v.id, data: { position: rand(3) } } : { op: 'variant.delete', itemId, id: v.id }
    }
    const change = db.transaction(() => applyMenuOp(db, storeId, op, new Date().toISOString()))()
    const itemId = 'itemId' in op ? op.itemId : change.id
    const next = withItemChanged(held, itemId, stores.item(storeId, itemId))
    if (!next) return t.fail(`step ${step}: ${op.op} was not patched`)
    patched++
    const expected = fresh()
    t.same(plain(next), plain(expected), `step ${step}: ${op.op}`, { diagnostic: false })
    held = next
  }
  t.equal(patched, 400)
})

t.test('an item in a category the held menu does not know asks for a full re-read', async (t) => {
  const held = fresh()
  const newCat = createCategory(db, storeId, 'New')
  const change = db.transaction(() => applyMenuOp(db, storeId, { op: 'item.create', data: { category_id: newCat, name: 'N', price: 1 } }, new Date().toISOString()))()
  t.equal(withItemChanged(held, change.id, stores.item(storeId, change.id)), null)
})
