/**
 * `reserve_stock` in the store actor's pure transition (docs/verticals.md "Stock and variants",
 * reopening a cancelled order): allocated from the held counts like a new order, the counts taken
 * at once, the moves answered and held as in flight; short stock is refused whole, keyed by line.
 */
import t from 'tap'
import { reduceStore, type StoreMsg, type StoreState } from '../../src/actors/store.ts'
import { verticalOf } from '../../src/domain/verticals.ts'
import type { PricedItem } from '../../src/domain/pricing.ts'

const now = '2026-01-01T10:00:00.000+00:00'
const replyTo = {} as never
const reserve = (lines: Array<{ item_id: number; variant_id: number | null; quantity: number }>) =>
  ({ type: 'reserve_stock', orderId: 7, lines, replyTo }) as StoreMsg
const item = (over: Partial<PricedItem> & { id: number; name: string }): PricedItem => ({
  price: 100, is_sold_out: false, station: null, variants: [], extras: [], ...over,
})
const state = (): StoreState => ({
  store: { id: 3, owner_id: 1, title: 'Shop', slug: 'shop', template: 'default', store_type: 'pharmacy', currency: 'EUR', city: null, settings: '{}', created_at: now },
  vertical: verticalOf('pharmacy'),
  menu: { categories: [], items: [], variants: new Map(), extras: new Map() },
  index: new Map([
    [1, item({ id: 1, name: 'Lamp', stock: 2 })],
    [2, item({ id: 2, name: 'Bag', stock: null })],
    [3, item({ id: 3, name: 'Pill', batches: [{ id: 30, expires_on: '2025-12-31', quantity: 9 }, { id: 31, expires_on: '2026-02-01', quantity: 1 }] })],
  ]),
})

t.test('the lines are taken from the held counts and answered as moves', async (t) => {
  const s = state()
  const step = reduceStore(s, reserve([{ item_id: 1, variant_id: null, quantity: 2 }, { item_id: 2, variant_id: null, quantity: 5 }, { item_id: 3, variant_id: null, quantity: 1 }]), now)
  const moves = [
    { line_index: 0, item_id: 1, variant_id: null, batch_id: null, counter: 'item', quantity: 2 },
    { line_index: 2, item_id: 3, variant_id: null, batch_id: 31, counter: 'batch', quantity: 1 },
  ]
  t.same(step.reply, { ok: true, value: moves }, 'untracked lines take nothing; the expired batch is skipped')
  t.same(step.effects, [{ kind: 'hold_stock', orderId: 7, moves }], 'held as in flight until released')
  t.equal(step.state.index.get(1)?.stock, 0, 'the next order sees them taken')
  t.same(step.state.index.get(3)?.batches?.map((b) => b.quantity), [9, 0])
})

t.test('short stock is refused whole with out_of_stock keyed by line, nothing taken or held', async (t) => {
  const s = state()
  const step = reduceStore(s, reserve([{ item_id: 1, variant_id: null, quantity: 1 }, { item_id: 3, variant_id: null, quantity: 2 }]), now)
  t.same(step.effects, [])
  if (step.reply?.ok !== false) return t.fail('expected a refusal')
  t.equal(step.reply.error.code, 'out_of_stock')
  t.equal(step.reply.error.status, 422)
  t.same(Object.keys(step.reply.error.errors ?? {}), ['items.1.quantity'])
  t.equal(step.state.index.get(1)?.stock, 2, 'the line that fitted was not taken')
})

t.test('a wholly refunded line (quantity 0) and a deleted item take nothing', async (t) => {
  const step = reduceStore(state(), reserve([{ item_id: 1, variant_id: null, quantity: 0 }, { item_id: 99, variant_id: null, quantity: 4 }]), now)
  t.same(step.reply, { ok: true, value: [] })
  t.same(step.effects, [], 'nothing to hold')
})

t.test('items_changed with release names the reservation it ends', async (t) => {
  const step = reduceStore(state(), { type: 'items_changed', itemIds: [1, 1, 3], release: 7, replyTo } as StoreMsg, now)
  t.same(step.effects, [{ kind: 'reread_items', itemIds: [1, 3], release: 7 }])
})
