/**
 * The store actor's pure transition (ARCHITECTURE 4): reduceStore(state, msg, now, ctx) without
 * I/O — pricing (api-v1 §2.4), coupons (docs/storefront.md "Coupons"), idempotency decisions,
 * menu and coupon writes as effects.
 */
import t, { type Test } from 'tap'
import {
  menuUpdatedEvent, orderCreatedEvent, reduceStore,
  type StoreCtx, type StoreEffect, type StoreMsg, type StoreState, type StoreStep,
} from '../../src/actors/store.ts'
import { redemptionRefused } from '../../src/actors/store-coupons.ts'
import { idempotencySlot } from '../../src/domain/idempotency.ts'
import { ApiError } from '../../src/errors.ts'
import { verticalOf } from '../../src/domain/verticals.ts'
import type { PricedItem } from '../../src/domain/pricing.ts'
import type { CouponRow } from '../../src/storage/coupons.ts'

const now = '2026-01-01T10:00:00.000+00:00'
// The reducer never calls replyTo; a placeholder satisfies the type.
const replyTo = {} as never
const msg = (m: Record<string, unknown>) => ({ ...m, replyTo }) as unknown as StoreMsg

const item = (over: Partial<PricedItem> & { id: number; name: string; price: number }): PricedItem => ({
  is_sold_out: false, station: null, variants: [], extras: [], ...over,
})
const base = (over: Partial<StoreState> = {}): StoreState => ({
  store: { id: 3, owner_id: 1, title: 'Cafe', slug: 'cafe', template: 'default', store_type: 'restaurant', currency: 'EUR', city: null, settings: '{}', created_at: now },
  vertical: verticalOf('restaurant'),
  menu: { categories: [], items: [], variants: new Map(), extras: new Map() },
  index: new Map([
    [10, item({ id: 10, name: 'Burger', price: 1000, station: 'grill', extras: [{ id: 100, name: 'Cheese', price: 150 }] })],
    [11, item({ id: 11, name: 'Fries', price: 350 })],
    [12, item({ id: 12, name: 'Soup', price: 500, is_sold_out: true })],
  ]),
  ...over,
})
const coupon = (over: Partial<CouponRow> = {}): CouponRow => ({
  id: 5, store_id: 3, code: 'SAVE10', kind: 'percent', value: 10, min_order: 0, starts_at: null, ends_at: null,
  usage_limit: null, uses: 0, active: 1, created_at: now, updated_at: now, ...over,
})

const order = (over: Record<string, unknown> = {}) => msg({
  type: 'create_order',
  input: { type: 'takeaway', tip_amount: 2.5, items: [{ item_id: 10, quantity: 2, extras: [100] }, { item_id: 11, quantity: 1 }] },
  customerId: 9, couponCode: null, idem: null, trackToken: 'trk_abc', ...over,
})
const idem = { scope: 'owner:1/store:3', key: 'k-1', hash: 'h1' }

const effectOf = <K extends StoreEffect['kind']>(t: Test, step: StoreStep, kind: K): Extract<StoreEffect, { kind: K }> | undefined => {
  t.equal(step.reply, undefined, 'no answer yet: the effect decides it')
  t.equal(step.effects.length, 1, 'one effect')
  const e = step.effects[0]
  if (e?.kind !== kind) { t.fail(`expected ${kind}, got ${e?.kind}`); return undefined }
  return e as Extract<StoreEffect, { kind: K }>
}
const refusal = (t: Test, step: StoreStep, code: string, status: number): ApiError | undefined => {
  t.same(step.effects, [], 'nothing to write')
  const r = step.reply
  if (!r || r.ok) { t.fail(`expected a ${code} refusal`); return undefined }
  t.equal(r.error.code, code)
  t.equal(r.error.status, status)
  return r.error
}

t.test('a valid order is priced from the live menu into one insert', async (t) => {
  const s = base()
  const before = structuredClone(s)
  const step = reduceStore(s, order(), now)
  t.equal(step.state, s, 'pricing an order leaves the state as it was')
  t.same(s, before, 'the input state is not mutated')
  const e = effectOf(t, step, 'insert_order')
  if (!e) return
  t.equal(e.couponId, null)
  t.equal(e.idem, null)
  t.match(e.order, {
    store_id: 3, type: 'takeaway', status: 'new', delivery_status: null, is_paid: false, customer_id: 9,
    subtotal: 2 * (1000 + 150) + 350, discount: 0, tip_amount: 250, total: 2650 + 250, coupon_code: null,
    track_token: 'trk_abc', created_at: now, timeline: { created_at: now },
  })
  t.match(e.order.lines, [
    { item_id: 10, name: 'Burger', quantity: 2, unit_price: 1000, line_total: 2300, station: 'grill', extras: [{ id: 100, name: 'Cheese', price: 150 }] },
    { item_id: 11, name: 'Fries', quantity: 1, unit_price: 350, line_total: 350 },
  ])
  t.same(orderCreatedEvent(77, e.order), {
    event: 'order.created', data: { order_id: 77, restaurant_id: 3, type: 'takeaway', status: 'new', total: '29.00', delivery_fee: '0.00' },
  }, 'order.created carries the decimal-string total (api-v1 §6)')
})

t.test('a sold-out or foreign item, or a mode the vertical lacks, refuses the whole order with 422', async (t) => {
  const sold = refusal(t, reduceStore(base(), order({ input: { type: 'takeaway', items: [{ item_id: 11, quantity: 1 }, { item_id: 12, quantity: 1 }] } }), now), 'validation_failed', 422)
  t.same(sold?.errors, { 'items.1.item_id': ['Soup is sold out.'] })
  const foreign = refusal(t, reduceStore(base(), order({ input: { type: 'takeaway', items: [{ item_id: 99, quantity: 1 }] } }), now), 'validation_failed', 422)
  t.match(foreign?.errors, { 'items.0.item_id': [/does not belong to this store/] })
  const mode = refusal(t, reduceStore(base(), order({ input: { type: 'ship', items: [{ item_id: 11, quantity: 1 }] } }), now), 'validation_failed', 422)
  t.match(mode?.errors, { type: [/accepts on-table, takeaway, delivery/] })

  // A toggle is a new state: the same order prices once the item is back.
  const soup = base().index.get(12)!
  const back = base({ index: new Map([...base().index, [12, { ...soup, is_sold_out: false }]]) })
  effectOf(t, reduceStore(back, order({ input: { type: 'takeaway', items: [{ item_id: 12, quantity: 1 }] } }), now), 'insert_order')
})

t.test('a coupon is applied by the actor from its code', async (t) => {
  const step = reduceStore(base(), order({ couponCode: 'save10' }), now, { coupon: coupon() })
  const e = effectOf(t, step, 'insert_order')
  if (!e) return
  t.equal(e.couponId, 5, 'the redemption is part of the insert')
  t.match(e.order, { coupon_code: 'SAVE10', subtotal: 2650, discount: 265, tip_amount: 250, total: 2650 - 265 + 250 })

  const fixed = effectOf(t, reduceStore(base(), order({ couponCode: 'BIG' }), now, { coupon: coupon({ code: 'BIG', kind: 'fixed', value: 99_999 }) }), 'insert_order')
  t.match(fixed?.order, { discount: 2650, total: 250 }, 'the discount never exceeds the subtotal and never touches the tip')

  const without = effectOf(t, reduceStore(base(), order(), now, { coupon: coupon() }), 'insert_order')
  t.match(without?.order, { coupon_code: null, discount: 0 }, 'no code, no discount')
})

t.test('a coupon that does not apply refuses the order with 422 naming why', async (t) => {
  const cases: Array<[string, CouponRow | undefined, RegExp]> = [
    ['unknown code', undefined, /does not exist/],
    ['inactive', coupon({ active: 0 }), /not active/],
    ['not yet valid', coupon({ starts_at: '2026-02-01T00:00:00.000+00:00' }), /not valid yet/],
    ['expired', coupon({ ends_at: '2026-01-01T10:00:00.000+00:00' }), /expired/],
    ['used up', coupon({ usage_limit: 3, uses: 3 }), /used up/],
    ['below the minimum', coupon({ min_order: 5000 }), /at least 50\.00/],
  ]
  for (const [name, row, why] of cases) {
    const err = refusal(t, reduceStore(base(), order({ couponCode: 'SAVE10' }), now, { coupon: row }), 'validation_failed', 422)
    t.match(err?.errors, { coupon_code: [why] }, name)
  }
})

t.test('idempotency: in flight, reused, replayed or new', async (t) => {
  const keyed = order({ idem })
  const inFlight = refusal(t, reduceStore(base(), keyed, now, { inFlight: 'h1' }), 'idempotency_in_flight', 409)
  t.ok(inFlight, 'the same request retried while the first commits')
  refusal(t, reduceStore(base(), keyed, now, { inFlight: 'other' }), 'idempotency_key_reused', 422)
  refusal(t, reduceStore(base(), keyed, now, { inFlight: 'h1', seen: { request_hash: 'h1', order_id: 40 } }), 'idempotency_in_flight', 409)

  t.same(effectOf(t, reduceStore(base(), keyed, now, { seen: { request_hash: 'h1', order_id: 40 } }), 'replay'), { kind: 'replay', orderId: 40 }, 'a committed key with the same request replays its order')
  refusal(t, reduceStore(base(), keyed, now, { seen: { request_hash: 'h2', order_id: 40 } }), 'idempotency_key_reused', 422)
  // A replay is decided before pricing: the menu may have changed since.
  const soldOut = base({ index: new Map() })
  effectOf(t, reduceStore(soldOut, keyed, now, { seen: { request_hash: 'h1', order_id: 40 } }), 'replay')

  t.same(effectOf(t, reduceStore(base(), keyed, now), 'insert_order')?.idem, idem, 'a new key is written with its order')
  const bad = order({ idem, input: { type: 'takeaway', items: [{ item_id: 12, quantity: 1 }] } })
  refusal(t, reduceStore(base(), bad, now), 'validation_failed', 422)

  t.not(idempotencySlot(idem), idempotencySlot({ ...idem, scope: 'customer:9/store:3' }), 'callers of one store do not share a slot')
})

t.test('menu writes are effects; the menu is read from the state', async (t) => {
  const s = base()
  const op = { op: 'item.sold_out', id: 11, value: true }
  const step = reduceStore(s, msg({ type: 'menu_write', op }), now)
  t.equal(step.state, s)
  t.same(effectOf(t, step, 'menu_write'), { kind: 'menu_write', op })
  t.same(menuUpdatedEvent(3, { entity: 'item', change: 'updated', id: 11 }), {
    event: 'menu.updated', data: { restaurant_id: 3, change: 'updated', entity: 'item', id: 11 },
  })

  const read = reduceStore(s, msg({ type: 'get_menu' }), now)
  t.same(read.effects, [])
  t.same(read.reply, { ok: true, value: { store: s.store, vertical: s.vertical, menu: s.menu } })
})

t.test('coupon create: the rules of domain/coupons.ts, then one insert', async (t) => {
  const created = effectOf(t, reduceStore(base(), msg({ type: 'coupon_create', input: { code: ' summer ', kind: 'fixed', value: 2.5, min_order: 10 } }), now), 'coupon_insert')
  t.same(created?.settings, { code: 'SUMMER', kind: 'fixed', value: 250, minOrder: 1000, startsAt: null, endsAt: null, usageLimit: null, active: true })

  const over = refusal(t, reduceStore(base(), msg({ type: 'coupon_create', input: { code: 'X', kind: 'percent', value: 150 } }), now), 'validation_failed', 422)
  t.match(over?.errors, { value: [/1 to 100/] })
  const missing = refusal(t, reduceStore(base(), msg({ type: 'coupon_create', input: { kind: 'fixed' } }), now), 'validation_failed', 422)
  t.match(missing?.errors, { code: ['This field is required.'], value: ['This field is required.'] })
})

t.test('coupon update and delete act on the coupon read in the turn; a deleted one is 404', async (t) => {
  const upd = (input: Record<string, unknown>, ctx: StoreCtx) => reduceStore(base(), msg({ type: 'coupon_update', couponId: 5, input }), now, ctx)
  const del = (ctx: StoreCtx) => reduceStore(base(), msg({ type: 'coupon_delete', couponId: 5 }), now, ctx)

  t.match(refusal(t, upd({ value: 20 }, {}), 'not_found', 404)?.message, /coupon does not exist/)
  refusal(t, del({}), 'not_found', 404)
  // Validation needs the coupon, so a bad body for a deleted coupon is still a 404.
  refusal(t, upd({ value: 500 }, {}), 'not_found', 404)

  const e = effectOf(t, upd({ value: 20, active: false }, { coupon: coupon({ uses: 7 }) }), 'coupon_update')
  t.same(e, { kind: 'coupon_update', couponId: 5, settings: { code: 'SAVE10', kind: 'percent', value: 20, minOrder: 0, startsAt: null, endsAt: null, usageLimit: null, active: false } })
  const kind = refusal(t, upd({ kind: 'fixed' }, { coupon: coupon() }), 'validation_failed', 422)
  t.match(kind?.errors, { value: [/when changing `kind`/] })
  const window = refusal(t, upd({ ends_at: '2025-12-01T00:00:00.000+00:00' }, { coupon: coupon({ starts_at: '2026-01-01T00:00:00.000+00:00' }) }), 'validation_failed', 422)
  t.match(window?.errors, { ends_at: [/after `starts_at`/] }, 'the window is checked against the stored start')

  t.same(effectOf(t, del({ coupon: coupon() }), 'coupon_delete'), { kind: 'coupon_delete', couponId: 5 })
})

t.test('a redemption refused at commit names why', async (t) => {
  const why = (row: CouponRow | undefined) => redemptionRefused(row).errors?.coupon_code
  t.same(why(undefined), ['This coupon does not exist.'])
  t.same(why(coupon({ active: 0 })), ['This coupon is not active.'])
  t.same(why(coupon({ usage_limit: 1, uses: 1 })), ['This coupon has been used up.'])
  t.equal(redemptionRefused(undefined).status, 422)
})
