/**
 * The verticals table (issue 18 item 1, api-v1 §2.2; src/domain/verticals.ts) is complete and
 * consistent, and drives which item fields apply (src/domain/item-fields.ts) and stock (domain/stock.ts).
 */
import t from 'tap'
import { ORDER_TYPES, STORE_TYPES, VERTICALS, verticalOf } from '../../src/domain/verticals.ts'
import { batchesRefused, brandsRefused, fieldsOutsideVertical } from '../../src/domain/item-fields.ts'
import { allocateStock, sellableStock, withMoves, type StockedItem } from '../../src/domain/stock.ts'

t.test('every store type has a vertical, and only those', async (t) => {
  t.same(Object.keys(VERTICALS).sort(), [...STORE_TYPES].sort())
  t.equal(verticalOf('nonsense'), VERTICALS.restaurant, 'unknown types read as restaurant (the default)')
})

t.test('each vertical is consistent', async (t) => {
  for (const type of STORE_TYPES) {
    const v = VERTICALS[type]
    t.ok(v.label.length > 0, `${type} has a label`)
    t.ok(['food', 'goods', 'services', 'stays'].includes(v.group), `${type} group`)
    t.ok(v.fulfillment_modes.length > 0, `${type} accepts some order type`)
    t.equal(new Set(v.fulfillment_modes).size, v.fulfillment_modes.length, `${type} modes unique`)
    for (const m of v.fulfillment_modes) t.ok((ORDER_TYPES as readonly string[]).includes(m), `${type}: ${m} is an order type`)
    const c = v.capabilities
    t.notOk(c.food_fields && c.goods_fields, `${type}: food or goods fields, not both`)
    if (v.group === 'goods') t.ok(c.goods_fields, `${type}: goods stores use goods fields`)
    if (v.group === 'food') t.ok(c.food_fields, `${type}: food stores use food fields`)
    if (c.fitment || c.expiry) t.ok(c.goods_fields, `${type}: item capabilities sit on goods`)
    if (c.tables) t.ok(v.fulfillment_modes.includes('on-table'), `${type}: tables imply on-table orders`)
    if (c.kitchen_display) t.ok(c.food_fields, `${type}: a kitchen display cooks food`)
  }
  t.same(STORE_TYPES.filter((s) => VERTICALS[s].capabilities.expiry).sort(), ['cosmetic', 'pharmacy'], 'issue 18: expiry for pharmacy and cosmetics')
  t.ok(VERTICALS.carparts.capabilities.fitment)
})

t.test('item fields follow the capability flags', async (t) => {
  t.same(fieldsOutsideVertical(VERTICALS.restaurant, { is_vegan: true, brand: null, stock: undefined }), {}, 'null and undefined change nothing')
  t.same(Object.keys(fieldsOutsideVertical(VERTICALS.restaurant, { brand: 'A', stock: 0, sku: 'x', brand_id: 3 })).sort(), ['brand', 'brand_id', 'sku', 'stock'])
  t.same(Object.keys(fieldsOutsideVertical(VERTICALS.retail, { is_vegan: true, calories: 0, is_halal: false, stock: 1 })).sort(), ['calories', 'is_vegan'])
  t.same(Object.keys(fieldsOutsideVertical(VERTICALS.laundry, { stock: 1, calories: 1 })).sort(), ['calories', 'stock'], 'services use neither')
  t.equal(batchesRefused(VERTICALS.pharmacy), null)
  t.type(batchesRefused(VERTICALS.clothing), 'string')
  t.equal(brandsRefused(VERTICALS.carparts), null)
  t.type(brandsRefused(VERTICALS.hotel), 'string')
})

t.test('stock allocation: all or nothing, FEFO, expired excluded, moves reversible', async (t) => {
  const items = new Map<number, StockedItem>([
    [1, { id: 1, name: 'A', stock: 3, variants: [{ id: 10, name: 'S', stock: 1 }, { id: 11, name: 'L', stock: null }] }],
    [2, { id: 2, name: 'B', batches: [{ id: 7, expires_on: '2026-01-10', quantity: 2 }, { id: 5, expires_on: '2026-01-01', quantity: 9 }, { id: 6, expires_on: '2026-01-05', quantity: 1 }], variants: [] }],
    [3, { id: 3, name: 'C', stock: null, variants: [] }],
  ])
  const today = '2026-01-02'
  t.equal(sellableStock(items.get(2)!, today), 3, 'the batch that expired yesterday does not count')
  t.equal(sellableStock(items.get(3)!, today), null)
  const short = allocateStock(items, [{ item_id: 1, variant_id: 10, quantity: 1 }, { item_id: 1, variant_id: 10, quantity: 1 }, { item_id: 3, variant_id: null, quantity: 99 }], today)
  t.same(short, { ok: false, errors: { 'items.1.quantity': ['A (S) is out of stock.'] } })
  const got = allocateStock(items, [{ item_id: 2, variant_id: null, quantity: 2 }, { item_id: 1, variant_id: 11, quantity: 3 }], today)
  if (!got.ok) return t.fail('allocated')
  t.same(got.moves.filter((m) => m.counter === 'batch').map((m) => [m.batch_id, m.quantity]), [[6, 1], [7, 1]], 'first-expiring unexpired batch first')
  const after = withMoves(new Map(items), got.moves, -1) // in place: keep `items` as the before
  t.equal(after.get(1)!.stock, 0)
  t.equal(sellableStock(after.get(2)!, today), 1)
  t.same(withMoves(new Map(after), got.moves, 1), items, 'putting the moves back restores the counts')
  t.same(allocateStock(after, [{ item_id: 2, variant_id: null, quantity: 2 }], today), { ok: false, errors: { 'items.0.quantity': ['Only 1 of B left.'] } })
})
