/**
 * The order actor (ARCHITECTURE 1): owns one order's kitchen status, delivery status, driver and
 * timeline. `reduceOrder` is the pure transition; the shell persists, emits and replies.
 */
import * as nact from 'nact'
import type { Ref, Result } from './system.ts'
import { fail, ok } from './system.ts'
import { ApiError } from '../errors.ts'
import { deliveryEventFor, kitchenAfterDelivery, stamp, type DeliveryStatus, type KitchenStatus, type Timeline } from '../domain/order-state.ts'
import type { Services } from '../services.ts'
import { nowIso, type Db } from '../storage/db.ts'
import type { OrderRow, OrderView } from '../storage/orders.ts'
import { appendEvent, type OutboxEvent } from '../storage/outbox.ts'
import { afterOrderChange, deliveryInfoOf, deliveryWriter, reduceDelivery, DELIVERY_MSG_TYPES, NO_DELIVERY, type DeliveryInfo, type DeliveryMsg, type OfferChanges, type OfferWrite, type OrderCtx } from './order-delivery.ts'
import { offerOf } from '../storage/drivers.ts'
import { changedKdsLines, DELIVERY_EXIT, kdsEditable, KITCHEN_EXIT, kitchenStatusFor, kdsHeadOf, kdsLineOf, kdsViewOf, resolveLines, stepLine, type KdsHead, type KdsLine, type KdsViewOrder } from '../domain/kds.ts'
import { reducePayment, PAYMENT_MSG_TYPES, type PaymentCtx, type PaymentMsg } from './order-payments.ts'
import { paymentBook, paymentOf, writeRows, type RowWrite } from '../storage/payments.ts'
import { setPaid } from '../storage/orders.ts'
import { reduceRefund, REFUND_MSG_TYPES, type RefundCtx, type RefundMsg } from './order-refunds.ts'
import { refundBook, refundOf } from '../storage/refunds.ts'
import type { LinePick, PaymentBook } from '../domain/payments.ts'
import { holdsStock, restockLines, restockOrder, retakeLines, takeStock } from '../storage/stock.ts'
import { itemsChanged } from './store.ts'
import type { StockLine, StockMove } from '../domain/stock.ts'

export interface OrderState {
  id: number
  storeId: number
  ownerId: number
  type: string
  status: KitchenStatus
  deliveryStatus: DeliveryStatus | null
  driverId: number | null
  timeline: Timeline
  /** Delivery orders: fee, proof of delivery, driver note (src/actors/order-delivery.ts). */
  delivery?: DeliveryInfo
  /** KDS item states of the order's lines, loaded on the first KDS message (src/domain/kds.ts). */
  kds?: KdsLine[]
  /** The kitchen card's head (fixed at placing), loaded with `kds`: bump frames and replies need no read-back. */
  kdsHead?: KdsHead
  /** Written by this actor only, when its payments first cover the total (src/actors/order-payments.ts). */
  isPaid?: boolean
  /** What the order's payments add up to, loaded on the first payment message (src/domain/payments.ts). */
  payments?: PaymentBook
}

export type OrderMsg =
  | { type: 'set_status'; status: KitchenStatus; replyTo: Ref<Result<OrderView>> }
  | { type: 'set_delivery_status'; status: DeliveryStatus; note?: string | null; replyTo: Ref<Result<OrderView>> }
  /** `fee`: what the driver earns for it (cents), fixed at assignment. */
  | { type: 'assign_driver'; driverId: number; fee?: number; replyTo: Ref<Result<OrderView>> }
  | DeliveryMsg
  /** A cook bumps (one step forward) or recalls (one step back) one line (api-v1 §3 KDS rows). */
  | { type: 'kds_step'; lineId: number; step: 'bump' | 'recall'; replyTo: Ref<Result<KdsViewOrder>> }
  | PaymentMsg
  | RefundMsg

export interface EventEffect {
  event: string
  data: Record<string, unknown>
  /** `data[key]` becomes the id of the decision's row at index `row` once written (a new refund's id, src/actors/order-refunds.ts). */
  rowId?: { row: number; key: string }
}
/**
 * `offers` are written with the order; `refuse` persists the change and still answers with that error.
 * `rows`: rows the order owns (payments, …) written in the same transaction (src/storage/payments.ts
 * `RowWrite`); their ids come back in the reply of messages whose reply carries them (`PaymentReply`).
 */
export type Decision = { ok: true; state: OrderState; events: EventEffect[]; offers?: OfferWrite[]; rows?: RowWrite[]; refuse?: ApiError } | { ok: false; error: ApiError }

/** Pure transition (api-v1 §3). The kitchen and delivery routes are overrides: any value is accepted. */
export function reduceOrder(s: OrderState, msg: OrderMsg, now: string, ctx: OrderCtx & PaymentCtx & RefundCtx = {}): Decision {
  const d = followDelivery(s, reduceOrderCore(s, msg, now, ctx), now)
  // An order that leaves the kitchen by any road takes its lines off the screens in the same commit.
  if (!d.ok || d.state === s || !d.state.kds || msg.type === 'kds_step') return d
  const left = (d.state.status !== s.status && KITCHEN_EXIT.has(d.state.status))
    || (d.state.deliveryStatus !== s.deliveryStatus && d.state.deliveryStatus !== null && DELIVERY_EXIT.has(d.state.deliveryStatus))
  return left ? { ...d, state: { ...d.state, kds: resolveLines(d.state.kds, now) } } : d
}

/**
 * The one place the kitchen status follows the delivery status (`kitchenAfterDelivery`, docs/orders.md
 * "How the two statuses move together"): whatever moved the delivery (the owner's override, the
 * driver, a delivery code), a move that implies a kitchen status changes it in the same decision,
 * stamps it on the timeline and emits `order.status_changed` with `source: "delivery"`, after the
 * delivery's own event.
 */
function followDelivery(s: OrderState, d: Decision, now: string): Decision {
  if (!d.ok || d.state.deliveryStatus === s.deliveryStatus) return d
  const status = kitchenAfterDelivery(d.state.status, d.state.deliveryStatus)
  if (status === d.state.status) return d
  return {
    ...d,
    state: { ...d.state, status, timeline: stamp(d.state.timeline, status, now) },
    events: [...d.events, { event: 'order.status_changed', data: { order_id: s.id, restaurant_id: s.storeId, status, previous_status: d.state.status, source: 'delivery' } }],
  }
}

/** Message types whose transition may take the order out of the kitchen: the shell loads its lines first. */
const KDS_LOADING: ReadonlySet<string> = new Set(['kds_step', 'set_status', 'set_delivery_status', 'driver_status'])

function reduceOrderCore(s: OrderState, msg: OrderMsg, now: string, ctx: OrderCtx & PaymentCtx & RefundCtx): Decision {
  const base = { order_id: s.id, restaurant_id: s.storeId }
  switch (msg.type) {
    case 'set_status': {
      if (msg.status === s.status) return { ok: true, state: s, events: [] }
      return {
        ok: true,
        state: { ...s, status: msg.status, timeline: stamp(s.timeline, msg.status, now) },
        events: [{ event: 'order.status_changed', data: { ...base, status: msg.status, previous_status: s.status } }],
      }
    }
    case 'set_delivery_status': {
      if (s.deliveryStatus === null) return { ok: false, error: new ApiError('invalid_transition', 'This order is not a delivery order.', { delivery_status: ['The order is not a delivery.'] }) }
      if (msg.status === s.deliveryStatus) return { ok: true, state: s, events: [] }
      const ev = deliveryEventFor(msg.status)
      // Back to `pending` un-assigns: the order returns to the pool drivers can claim (docs/drivers.md).
      const driverId = msg.status === 'pending' ? null : s.driverId
      return {
        ok: true,
        state: { ...s, deliveryStatus: msg.status, driverId, timeline: stamp(s.timeline, msg.status, now) },
        events: ev ? [{ event: ev, data: { ...base, delivery_status: msg.status, driver_id: s.driverId, note: msg.note ?? null } }] : [],
      }
    }
    case 'assign_driver': {
      if (s.deliveryStatus === null) return { ok: false, error: new ApiError('invalid_transition', 'Only delivery orders can be assigned a driver.', { driver_id: ['The order is not a delivery.'] }) }
      return {
        ok: true,
        state: {
          ...s, driverId: msg.driverId, deliveryStatus: 'assigned', timeline: stamp(s.timeline, 'assigned', now),
          delivery: { ...(s.delivery ?? NO_DELIVERY), fee: msg.fee ?? s.delivery?.fee ?? 0 },
        },
        events: [{ event: 'order.driver_assigned', data: { ...base, driver_id: msg.driverId } }],
        offers: [{ withdrawPendingExcept: null }],
      }
    }
    case 'kds_step': {
      // Messages to one order are handled one at a time, so two cooks bumping at once get two steps.
      const lines = s.kds ?? []
      const line = lines.find((l) => l.id === msg.lineId)
      if (!line) return { ok: false, error: new ApiError('not_found', 'The item does not exist.') }
      if (!kdsEditable(s.status)) return { ok: false, error: new ApiError('invalid_transition', `The order is ${s.status}.`, { status: [`Items of a ${s.status} order cannot be bumped or recalled.`] }) }
      const moved = stepLine(line, msg.step, now)
      if (!moved) return { ok: false, error: new ApiError('invalid_transition', `The item is already ${line.state}.`, { kds_state: [`A ${line.state} item cannot be ${msg.step === 'bump' ? 'bumped' : 'recalled'}.`] }) }
      const kds = lines.map((l) => (l.id === line.id ? moved : l))
      const status = kitchenStatusFor(s.type, kds.map((l) => l.state), s.status)
      if (status === s.status) return { ok: true, state: { ...s, kds }, events: [] }
      return {
        ok: true,
        state: { ...s, kds, status, timeline: stamp(s.timeline, status, now) },
        events: [{ event: 'order.status_changed', data: { ...base, status, previous_status: s.status, source: 'kds' } }],
      }
    }
    case 'driver_status':
    case 'claim':
    case 'reject_offer':
    case 'pod_code':
    case 'pod_photo':
    case 'make_offers':
      return reduceDelivery(s, msg, now, ctx)
    case 'pay':
    case 'settle_payment':
      return reducePayment(s, msg, now, ctx)
    case 'refund':
    case 'settle_refund':
      return reduceRefund(s, msg, now, ctx)
    default: {
      const never: never = msg
      return never
    }
  }
}

export function orderStateOf(row: OrderRow, ownerId: number): OrderState {
  return {
    id: row.id,
    storeId: row.store_id,
    ownerId,
    type: row.type,
    status: row.status as KitchenStatus,
    deliveryStatus: row.delivery_status as DeliveryStatus | null,
    driverId: row.driver_id,
    timeline: JSON.parse(row.timeline) as Timeline,
    isPaid: row.is_paid === 1,
  }
}

/** Statements shared by every order actor of a server (preparing them per actor cost ~0.1 ms an order). */
const statements = new WeakMap<Services, ReturnType<typeof prepareOrderStatements>>()
function prepareOrderStatements(svc: Services) {
  return {
    // driver_id is written only when the message changed it: deleting a driver clears it behind this
    // actor's back (ON DELETE SET NULL, migration 006), and writing the remembered id back would fail.
    update: svc.db.prepare('UPDATE orders SET status = ?, delivery_status = ?, driver_id = CASE WHEN ? THEN ? ELSE driver_id END, timeline = ?, updated_at = ? WHERE id = ?'),
    // SQLite rewrites every index on a column the SET names, changed or not (status, delivery_status
    // and driver_id are in three of them): a change that leaves them alone (most KDS bumps) or moves
    // only the kitchen status names just what moved, a few pages less in each commit's WAL.
    touch: svc.db.prepare('UPDATE orders SET updated_at = ? WHERE id = ?'),
    kitchen: svc.db.prepare('UPDATE orders SET status = ?, timeline = ?, updated_at = ? WHERE id = ?'),
    deliveries: deliveryWriter(svc.db),
    saveKds: svc.db.prepare('UPDATE order_lines SET kds_state = ?, kds_timeline = ? WHERE id = ? AND order_id = ?'),
  }
}

/** The nact handler for one order: load on first message, persist before replying. */
export function orderHandler(svc: Services, orderId: number) {
  let stmts = statements.get(svc)
  if (!stmts) statements.set(svc, (stmts = prepareOrderStatements(svc)))
  const { update, touch, kitchen, deliveries, saveKds } = stmts
  return async (state: OrderState | null, msg: OrderMsg): Promise<OrderState | null> => {
    if (!state) {
      const row = svc.orders.row(orderId)
      const store = row && svc.stores.byId(row.store_id)
      if (!row || !store) {
        nact.dispatch(msg.replyTo, fail(new ApiError('not_found', 'The order does not exist.')))
        return null
      }
      state = orderStateOf(row, store.owner_id)
      if (state.deliveryStatus !== null) state.delivery = deliveryInfoOf(svc.drivers.delivery(orderId))
    }
    if (KDS_LOADING.has(msg.type) && !state.kds) state = { ...state, kds: svc.orders.lines(orderId).map(kdsLineOf), kdsHead: kdsHeadOf(svc.orders.row(orderId)) }
    if (PAYMENT_MSG_TYPES.has(msg.type) && !state.payments) state = { ...state, payments: paymentBook(svc.db, orderId) ?? undefined }
    const now = nowIso()
    // Offers are read fresh inside the actor, so their status cannot change between read and decision.
    const offerId = DELIVERY_MSG_TYPES.has(msg.type) ? (msg as { offerId?: number }).offerId : undefined
    const offerRow = offerId === undefined ? undefined : svc.drivers.offer(offerId)
    // The payment a settle names is read fresh too: its status decides whether the provider event is a replay.
    const payment = msg.type === 'settle_payment' ? { payment: paymentOf(svc.db, orderId, msg.paymentId) ?? null } : {}
    // Refunds decide against the books as committed (src/actors/order-refunds.ts), read in this turn.
    const refund = msg.type === 'refund' ? { paymentBook: paymentBook(svc.db, orderId), refundBook: refundBook(svc.db, orderId) }
      : msg.type === 'settle_refund' ? { refund: refundOf(svc.db, orderId, msg.refundId) ?? null } : {}
    const d = reduceOrder(state, msg, now, { ...(offerId === undefined ? {} : { offer: offerRow ? offerOf(offerRow) : null }), ...payment, ...refund })
    if (!d.ok) {
      nact.dispatch(msg.replyTo, fail(d.error))
      return state
    }
    // A cancelled order set back to a live status takes its stock again (below), or is refused whole.
    const reopened = d.state.status !== 'cancelled' && state.status === 'cancelled' ? await reserveStock(svc, state) : []
    if (reopened instanceof ApiError) {
      nact.dispatch(msg.replyTo, fail(reopened))
      return state
    }
    try {
      const next = d.state
      const events: OutboxEvent[] = []
      let view: OrderView | null = null
      let kdsView: KdsViewOrder | null = null
      let written: number[] = []
      let restocked: StockMove[] = []
      if (next !== state || d.offers?.length || d.rows?.length) {
        let offers: OfferChanges = { created: [], withdrawn: [], closed: [] }
        const prev = state
        const kdsChanged = changedKdsLines(prev.kds, next.kds)
        await svc.committer.write((db) => {
          for (const l of kdsChanged) saveKds.run(l.state, JSON.stringify(l.timeline), l.id, next.id)
          const same = next.deliveryStatus === prev.deliveryStatus && next.driverId === prev.driverId
          if (same && next.status === prev.status && next.timeline === prev.timeline) touch.run(now, next.id)
          else if (same) kitchen.run(next.status, JSON.stringify(next.timeline), now, next.id)
          else update.run(next.status, next.deliveryStatus, next.driverId === prev.driverId ? 0 : 1, next.driverId, JSON.stringify(next.timeline), now, next.id)
          if (next.delivery && next.delivery !== prev.delivery) deliveries.save(next.id, next.delivery, now)
          if (d.offers) offers = deliveries.offers(next.id, next.storeId, d.offers, now)
          if (d.rows) written = writeRows(db, next.id, next.storeId, d.rows, now)
          // Goods refunded by lines go back on the shelf when the refund completes (docs/verticals.md "Stock
          // and variants"): at once for cash and card, when the provider confirms for online ones, so a
          // failed online refund (whose units can be refunded again) never puts them back twice.
          for (const lines of completedRefundLines(db, next.id, d.rows ?? [])) restocked.push(...restockLines(db, next.id, refundedItems(svc, next.id, lines)))
          if (Boolean(next.isPaid) !== Boolean(prev.isPaid)) setPaid(db, next.id, next.isPaid === true)
          // A cancellation puts back what the order took from stock, in the same transaction (docs/verticals.md).
          if (next.status === 'cancelled' && prev.status !== 'cancelled') restocked.push(...restockOrder(db, next.id))
          // A reopening takes what the store actor reserved, guarded (stock >= quantity): a disagreement
          // with SQLite rolls the whole change back with 422 `out_of_stock`, status and event included.
          if (reopened.length > 0) takeStock(db, next.id, reopened)
          for (const e of d.events) events.push(appendEvent(db, { ownerId: next.ownerId, storeId: next.storeId, event: e.event, data: e.rowId ? { ...e.data, [e.rowId.key]: written[e.rowId.row] } : e.data }))
        })
        // Kitchen screens first (the bump-to-screen path), built from the actor's own lines (no read-back).
        if (kdsChanged.length > 0) svc.kds.itemsChanged((kdsView = kdsViewOfState(next)) ?? (view = svc.orders.full(svc.orders.row(orderId)!)), kdsChanged.map((l) => l.id))
        if (next.status !== prev.status) svc.kds.statusChanged(next.storeId, next.id, next.status, prev.status)
        svc.events.publish(events)
        afterOrderChange(svc, prev, next, offers)
        if (restocked.length > 0) await itemsChanged(svc, next.storeId, restocked.map((m) => m.item_id))
      }
      if (reopened.length > 0) await releaseStock(svc, next.storeId, next.id, reopened)
      if (d.refuse) nact.dispatch(msg.replyTo, fail(d.refuse))
      else if (msg.type === 'kds_step') nact.dispatch(msg.replyTo, ok(kdsView ?? kdsViewOfState(next) ?? svc.orders.full(svc.orders.row(orderId)!)))
      else {
        const out = view ?? svc.orders.full(svc.orders.row(orderId)!)
        // Payment messages answer with the rows they wrote too (PaymentReply); every other one with the order.
        if (PAYMENT_MSG_TYPES.has(msg.type) || REFUND_MSG_TYPES.has(msg.type)) nact.dispatch((msg as PaymentMsg | RefundMsg).replyTo, ok({ order: out, written }))
        else nact.dispatch(msg.replyTo as Ref<Result<OrderView>>, ok(out))
      }
      return next
    } catch (err) {
      // The reservation ends unwritten (or written, if what failed came after the commit): either way
      // the store actor re-reads the counts, so they match SQLite.
      if (reopened.length > 0) await releaseStock(svc, state.storeId, state.id, reopened)
      // The stock guard's refusal is the answer; anything else is a bug.
      if (err instanceof ApiError && err.code === 'out_of_stock') {
        nact.dispatch(msg.replyTo, fail(err))
        return state
      }
      svc.log.error({ err, orderId }, 'order write failed')
      nact.dispatch(msg.replyTo, fail(new ApiError('internal_error')))
      return state
    }
  }
}

/**
 * Reopening (docs/verticals.md "Stock and variants"): a kitchen override out of `cancelled` takes
 * the order's lines from stock again. The store actor allocates, because it holds the counts every
 * new order of the store is allocated from: taking from that copy in its turn is what keeps a
 * reopening and concurrent orders from both getting the last unit. The order actor then writes the
 * status and `takeStock` in one transaction of its own, as it writes every status change (the
 * store actor writing the order's row would leave this actor's state and its after-write work —
 * events, KDS, deliveries — to be duplicated there), and finally releases the reservation
 * (`releaseStock`) whether the write committed or not. Returns the moves to take (none when no line
 * is tracked), or the refusal: 422 `out_of_stock` keyed `items.N.quantity` as at creation.
 */
async function reserveStock(svc: Services, s: OrderState): Promise<StockMove[] | ApiError> {
  // Already holding its stock (a reopening whose reply failed after its commit, so this actor still
  // thinks it cancelled): taking it again would count the goods twice.
  if (holdsStock(svc.db, s.id)) return []
  let lines: StockLine[] = []
  try {
    lines = retakeLines(svc.db, s.id)
    return await svc.actors.stores.ask<StockMove[]>(s.storeId, (replyTo) => ({ type: 'reserve_stock', orderId: s.id, lines, replyTo }))
  } catch (err) {
    if (err instanceof ApiError && err.code === 'out_of_stock') return err
    // Unanswered (a timeout, a shutdown): a reservation may have been made; ending it is harmless if not.
    await itemsChanged(svc, s.storeId, lines.map((l) => l.item_id), s.id)
    if (err instanceof ApiError) return err
    svc.log.error({ err, orderId: s.id }, 'stock reservation failed')
    return new ApiError('internal_error')
  }
}

/**
 * End a reopened order's reservation once its write settled: the store actor stops counting it in
 * flight and re-reads the items, so its counts are SQLite's less what is still committing whether
 * the write committed (the moves are in SQLite now) or failed (they never will be).
 */
const releaseStock = (svc: Services, storeId: number, orderId: number, moves: readonly StockMove[]) =>
  itemsChanged(svc, storeId, moves.map((m) => m.item_id), orderId)

/** The kitchen view of the order from memory, or null when its lines were loaded without cards. */
const kdsViewOfState = (s: OrderState): KdsViewOrder | null => (s.kds && s.kdsHead ? kdsViewOf(s, s.kdsHead, s.kds) : null)

/** The refunded lines of the refunds these rows complete: new completed refunds, and pending ones settled as completed. */
function completedRefundLines(db: Db, orderId: number, rows: readonly RowWrite[]): LinePick[][] {
  const out: LinePick[][] = []
  for (const r of rows) {
    if (r.kind === 'refund.insert' && r.refund.status === 'completed' && r.refund.lines) out.push(r.refund.lines)
    if (r.kind === 'refund.settle' && r.status === 'completed') {
      const row = refundOf(db, orderId, r.id)
      if (row?.lines) out.push((JSON.parse(row.lines) as Array<{ line_id: number; quantity: number }>).map((l) => ({ lineId: l.line_id, quantity: l.quantity })))
    }
  }
  return out
}

/** The items (and variants) behind refunded order lines, for putting their stock back. */
function refundedItems(svc: Services, orderId: number, picks: readonly { lineId: number; quantity: number }[]) {
  const lines = new Map(svc.orders.lines(orderId).map((l) => [l.id, l]))
  return picks.flatMap((p) => {
    const l = lines.get(p.lineId)
    return l ? [{ item_id: l.item_id, variant_id: l.variant_id, quantity: p.quantity }] : []
  })
}


