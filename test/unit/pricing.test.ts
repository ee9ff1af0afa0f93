/** Server-side pricing (api-v1 §2.4), pure: variations replace the price, extras add per unit, errors keyed like the request. */
import t from 'tap'
import { priceLines, type PricedItem } from '../../src/domain/pricing.ts'
import { draftOrder } from '../../src/domain/orders.ts'
import { VERTICALS } from '../../src/domain/verticals.ts'

const menu = new Map<number, PricedItem>([
  [1, { id: 1, name: 'Pizza', price: 950, is_sold_out: false, station: 'oven', variants: [{ id: 10, name: 'Small', price: null }, { id: 11, name: 'Large', price: 1350 }], extras: [{ id: 20, name: 'Cheese', price: 150 }, { id: 21, name: 'Olives', price: 100 }] }],
  [2, { id: 2, name: 'Cola', price: 300, is_sold_out: false, station: null, variants: [], extras: [] }],
  [3, { id: 3, name: 'Truffle', price: 1600, is_sold_out: true, station: 'oven', variants: [], extras: [] }],
])

t.test('lines are priced from the menu', async (t) => {
  const r = priceLines(menu, [
    { item_id: 1, quantity: 2, variation: 11, extras: [20, 21], note: 'crispy' },
    { item_id: 1, quantity: 1, variation: 10 },
    { item_id: 2, quantity: 3 },
  ])
  if (!r.ok) return t.fail(JSON.stringify(r.errors))
  t.same(r.value.lines.map((l) => [l.unit_price, l.line_total]), [[1350, 3200], [950, 950], [300, 900]])
  t.equal(r.value.subtotal, 5050)
  t.match(r.value.lines[0], { item_id: 1, variant_id: 11, variant_name: 'Large', name: 'Pizza', quantity: 2, note: 'crispy', station: 'oven' })
  t.same(r.value.lines[0]!.extras.map((e) => e.id), [20, 21])
  t.match(r.value.lines[2], { variant_id: null, variant_name: null, extras: [], note: null, station: null })
})

t.test('every problem is reported, keyed by its path', async (t) => {
  const r = priceLines(menu, [
    { item_id: 99, quantity: 1 },
    { item_id: 3, quantity: 1 },
    { item_id: 2, quantity: 1, variation: 11 },
    { item_id: 1, quantity: 1, extras: [20, 99, 20] },
    { item_id: 2, quantity: 1 },
  ])
  t.notOk(r.ok)
  if (r.ok) return
  t.same(Object.keys(r.errors).sort(), ['items.0.item_id', 'items.1.item_id', 'items.2.variation', 'items.3.extras.1', 'items.3.extras.2'])
  t.match(r.errors['items.1.item_id']![0], /sold out/)
})

t.test('draftOrder: fulfillment modes, required fields, initial statuses, tip', async (t) => {
  const now = '2026-01-01T12:00:00.000+00:00'
  const items = [{ item_id: 2, quantity: 2 }]
  const ok = draftOrder(VERTICALS.restaurant, menu, { type: 'delivery', address: '1 Main', tip_amount: 1.25, items }, now)
  if (!ok.ok) return t.fail(JSON.stringify(ok.errors))
  t.match(ok.draft, { status: 'new', delivery_status: 'pending', subtotal: 600, tip_amount: 125, total: 725, discount: 0, timeline: { created_at: now } })
  const take = draftOrder(VERTICALS.restaurant, menu, { type: 'takeaway', items }, now)
  t.equal(take.ok && take.draft.delivery_status, null)
  const table = draftOrder(VERTICALS.restaurant, menu, { type: 'on-table', table_number: 12, items }, now)
  t.equal(table.ok && table.draft.table_number, '12')

  const bad = draftOrder(VERTICALS.retail, menu, { type: 'on-table', items: [{ item_id: 3, quantity: 1 }] }, now)
  t.notOk(bad.ok)
  if (!bad.ok) t.same(Object.keys(bad.errors).sort(), ['items.0.item_id', 'table_number', 'type'], 'all problems at once')
  const noAddr = draftOrder(VERTICALS.restaurant, menu, { type: 'delivery', address: ' ', items }, now)
  t.notOk(noAddr.ok)
  if (!noAddr.ok) t.ok(noAddr.errors.address)
  for (const [type, v] of Object.entries(VERTICALS)) {
    for (const mode of v.fulfillment_modes) {
      // With each mode's own fields (docs/verticals.md "Fulfillment modes").
      const fields = {
        room_number: '12', slot_start: '2030-01-01T10:00:00Z', appointment_start: '2030-01-01T10:00:00Z',
        shipping_address: { name: 'Ada', line1: '1 Main St', city: 'London', postal_code: 'N1 9GU', country: 'GB' },
      }
      const d = draftOrder(v, menu, { type: mode, table_number: 1, address: 'x', ...fields, items } as Parameters<typeof draftOrder>[2], now)
      t.ok(d.ok, `${type} accepts ${mode}`)
    }
  }
})
