/**
 * The store actor's hours rule, pure (src/actors/store.ts reduceStore; docs/stores.md): an order
 * while the settings the actor holds say closed is refused with `store_closed` and nothing to write,
 * unless the message is the owner's (`ignoreHours`); an idempotent replay is answered before the
 * check; a settings write is an effect (the shell makes it durable, then holds the new row).
 */
import t from 'tap'
import { reduceStore, type StoreMsg, type StoreState } from '../../src/actors/store.ts'
import { verticalOf } from '../../src/domain/verticals.ts'

const now = '2026-11-23T12:00:00.000+00:00' // a Monday, 12:00 UTC
const replyTo = {} as never
const state = (settings: Record<string, unknown>): StoreState => ({
  store: { id: 3, owner_id: 1, title: 'Cafe', slug: 'cafe', template: 'default', store_type: 'restaurant', currency: 'EUR', city: null, settings: JSON.stringify(settings), created_at: now },
  vertical: verticalOf('restaurant'),
  menu: { categories: [], items: [], variants: new Map(), extras: new Map() },
  index: new Map([[11, { id: 11, name: 'Fries', price: 350, is_sold_out: false, station: null, variants: [], extras: [] }]]),
  settings,
})
const order = (over: Record<string, unknown> = {}) => ({
  type: 'create_order', input: { type: 'takeaway', items: [{ item_id: 11, quantity: 1 }] }, customerId: null, couponCode: null, idem: null, trackToken: 'trk', replyTo, ...over,
}) as unknown as StoreMsg

const evening = { timezone: 'UTC', business_hours: { mon: [['17:00', '22:00']] } }

t.test('closed: refused with the next opening, nothing to write', async (t) => {
  const step = reduceStore(state(evening), order(), now)
  t.same(step.effects, [])
  t.ok(step.reply && !step.reply.ok)
  if (step.reply && !step.reply.ok) {
    t.equal(step.reply.error.code, 'store_closed')
    t.equal(step.reply.error.status, 422)
    t.same(step.reply.error.details, { reason: 'hours', opens_at: '2026-11-23T17:00:00+00:00' })
  }
})

t.test('open, or the owner\'s order: priced into an insert', async (t) => {
  t.equal(reduceStore(state({ ...evening, business_hours: { mon: [['11:00', '22:00']] } }), order(), now).effects[0]?.kind, 'insert_order')
  t.equal(reduceStore(state(evening), order({ ignoreHours: true }), now).effects[0]?.kind, 'insert_order', 'ignoreHours: the owner takes orders after hours')
  t.equal(reduceStore(state({}), order(), now).effects[0]?.kind, 'insert_order', 'no hours set: always open')
  t.equal(reduceStore(state({ accepting_orders: false }), order({ ignoreHours: true }), now).effects[0]?.kind, 'insert_order')
})

t.test('a replay is answered before the hours are checked', async (t) => {
  const idem = { scope: 'storefront:1/store:3', key: 'k', hash: 'h' }
  const step = reduceStore(state({ accepting_orders: false }), order({ idem }), now, { seen: { request_hash: 'h', order_id: 77 } as never })
  t.same(step.effects, [{ kind: 'replay', orderId: 77 }])
})

t.test('a settings write is an effect for the shell', async (t) => {
  const step = reduceStore(state({}), { type: 'settings_write', patch: { accepting_orders: false }, city: 'Berlin', replyTo } as StoreMsg, now)
  t.same(step.effects, [{ kind: 'settings_write', patch: { accepting_orders: false }, city: 'Berlin' }])
  t.equal(step.reply, undefined, 'answered once durable')
})
