/**
 * The store actor (ARCHITECTURE 1, 3): owns a store's settings, live menu and coupons. Orders are
 * priced and created here so a sold-out toggle and an order never race; menu and coupon writes are
 * serialised here (coupons: store-coupons.ts). `reduceStore` is the pure transition (ARCHITECTURE
 * 4); the shell (`storeHandler`) reads what a message names, applies the effects and replies once
 * they are durable.
 *
 * Order creation is pipelined: the actor validates and prices synchronously, hands the insert to
 * the group committer and takes the next message at once; the reply leaves after the commit.
 */
import * as nact from 'nact'
import type { Ref, Result } from './system.ts'
import { fail, ok } from './system.ts'
import { ApiError, notFound, type FieldErrors } from '../errors.ts'
import { draftOrder, type OrderInput } from '../domain/orders.ts'
import { ageGate, ageRefusalMessage } from '../domain/age-gate.ts'
import { verticalOf, type Vertical } from '../domain/verticals.ts'
import type { PricedItem } from '../domain/pricing.ts'
import { centsToDecimalString } from '../domain/money.ts'
import type { Committer } from '../storage/commit.ts'
import { nowIso } from '../storage/db.ts'
import { parseSettings, pricingIndex, withItemChanged, writeStoreSettings, type StoreMenu, type StoreFields, type StoreQueries, type StoreRow } from '../storage/stores.ts'
import { closedNotice } from '../domain/business-hours.ts'
import { insertOrder, viewOfNew, type NewOrder, type OrderQueries, type OrderView } from '../storage/orders.ts'
import { decideIdempotency, type Idempotency, type IdempotencyRecord } from '../domain/idempotency.ts'
import { couponReads, couponWrites, foundCoupon, type CouponRow } from '../storage/coupons.ts'
import { priceCoupon } from '../domain/coupons.ts'
import { applyMenuOp, type MenuChange, type MenuOp } from '../storage/menu.ts'
import { allocateStock, withMoves, type StockLine, type StockMove } from '../domain/stock.ts'
import { localDay, timeZoneOf } from '../domain/business-hours.ts'
import { takeStock } from '../storage/stock.ts'
import { customers } from '../storage/customers.ts'
import { appendEvent, type OutboxEvent } from '../storage/outbox.ts'
import { InFlightBookings, withFulfillment, writeOrderFulfillment, type BookingReads } from './store-fulfillment.ts'
import type { Booked } from '../domain/fulfillment.ts'
import type { EventRouter } from './event-router.ts'
import type { Logger } from '../log.ts'
import type { Services } from '../services.ts'
import { applyCouponEffect, reduceCoupon, redemptionRefused, type CouponEffect, type CouponMsg } from './store-coupons.ts'
import { withDelivery } from './store-delivery.ts'
import { applyReservationMsg, type ReservationMsg } from './store-reservations.ts'
import { idempotencyRefusal, StoreIdempotency, type IdempotencyReads } from './store-idempotency.ts'

export type { Idempotency }

/** `create_order`'s reply: the order, and whether it is an idempotent replay of an earlier request. */
export interface CreatedOrder { order: OrderView; replayed: boolean }
/** `get_menu`'s reply: the live menu the store prices with. */
export interface MenuSnapshot { store: StoreRow; vertical: Vertical; menu: StoreMenu }

/**
 * The store actor's public protocol. Messages are plain data (issue 11 item 6): they could cross a
 * process boundary. There are no private messages: a commit settles in the shell, not by a message.
 */
export type StoreMsg =
  | {
      type: 'create_order'
      input: OrderInput
      customerId: number | null
      /**
       * With no `customerId`: the order's phone, normalised; the store's customer with that phone is
       * linked to the order inside its write (docs/customers.md), so the customers named on orders
       * and the CRM's are the same records.
       */
      linkPhone?: string | null
      /** A coupon to redeem (storefront orders, docs/storefront.md "Coupons"); the actor applies its rules. */
      couponCode: string | null
      idem: Idempotency | null
      /** The new order's tracking token, made by the caller: the transition draws no randomness. */
      trackToken: string
      /**
       * True for the owner's own orders (dashboard, POS, a phone order after hours): business hours
       * and the accepting-orders switch bind storefront and customer orders only (docs/stores.md).
       */
      ignoreHours?: boolean
      /** A delivery's ride from the store by the configured router (src/providers/router.ts), asked before; absent: the straight line. */
      rideSeconds?: number | null
      replyTo: Ref<Result<CreatedOrder>>
    }
  /**
   * Change the store's settings (docs/stores.md): `patch` keys are merged into `settings` (null
   * removes one), `city` sets the column. Through the actor because it prices and checks hours
   * with the settings it holds; the reply is the row as written, once durable.
   */
  | { type: 'settings_write'; patch: Record<string, unknown>; city?: string | null; fields?: StoreFields; replyTo: Ref<Result<StoreRow>> }
  | { type: 'menu_write'; op: MenuOp; replyTo: Ref<Result<MenuChange>> }
  | { type: 'get_menu'; replyTo: Ref<Result<MenuSnapshot>> }
  /**
   * Items changed in SQLite outside this actor, already committed: stock an order gave back (a
   * cancellation, a line refund: src/storage/stock.ts `restockOrder`, `restockLines`), a brand renamed
   * or deleted (src/ops/menu/brands.ts). They are re-read, not adjusted, as the held copy may already have
   * them (an actor loaded after the commit, e.g. once passivated). `release`: the order whose
   * `reserve_stock` this ends (its write committed or failed): the reservation stops counting as
   * in flight, and the re-read makes the held counts right either way.
   */
  | { type: 'items_changed'; itemIds: number[]; release?: number; replyTo: Ref<Result<null>> }
  /**
   * A cancelled order being reopened (docs/verticals.md "Stock and variants"): take its lines from
   * the held counts now, as an order's insert does, and hold them as in flight until the order actor
   * sends `items_changed` with `release` after its own write (status and `takeStock`, one
   * transaction). The reply is the moves to take; short stock is 422 `out_of_stock` as at creation.
   */
  | { type: 'reserve_stock'; orderId: number; lines: StockLine[]; replyTo: Ref<Result<StockMove[]>> }
  | CouponMsg
  | ReservationMsg

export interface StoreState {
  store: StoreRow
  vertical: Vertical
  menu: StoreMenu
  /** The menu as pricing reads it (domain/pricing.ts), built once per menu version. */
  index: Map<number, PricedItem>
  /** `store.settings` parsed once per settings version (hours are compiled per object); absent: parsed when needed. */
  settings?: Record<string, unknown>
}

/** What the shell read for one message in the actor's turn (nothing of this store changes meanwhile). */
export interface StoreCtx {
  /** create_order with a key: the hash of the request whose commit holds that key now, if any. */
  inFlight?: string | undefined
  /** create_order with a key: the key's committed record, if any. */
  seen?: IdempotencyRecord | undefined
  /** The coupon the message names (create_order: by code; coupon_update/delete: by id), if it exists. */
  coupon?: CouponRow | undefined
  /** create_order for a slot or appointment: what holds that time now (store-fulfillment.ts). */
  booked?: Booked | undefined
}

/** Work for the shell; a message has at most one, and its outcome is the reply. */
export type StoreEffect =
  /** Insert the priced order with its coupon redemption, idempotency record and `order.created`. */
  | { kind: 'insert_order'; order: NewOrder; couponId: number | null; idem: Idempotency | null; stock?: StockMove[] }
  /** Answer with the order an earlier request of the same key made (a replay). */
  | { kind: 'replay'; orderId: number }
  /** Apply a menu operation with its `menu.updated`, then reload the menu (ids come from SQLite). */
  | { kind: 'menu_write'; op: MenuOp }
  /** Merge the settings patch, then hold the row as written. */
  | { kind: 'settings_write'; patch: Record<string, unknown>; city?: string | null | undefined; fields?: StoreFields | undefined }
  | CouponEffect
  /** A table or reservation write: decided and written in one transaction (store-reservations.ts). */
  | { kind: 'reservation'; msg: ReservationMsg }
  /** Items changed outside the actor (`items_changed`): re-read them, less what orders still committing took. */
  | { kind: 'reread_items'; itemIds: number[]; release?: number | undefined }
  /** Stock a reopened order reserved (`reserve_stock`): in flight until its `release`. */
  | { kind: 'hold_stock'; orderId: number; moves: StockMove[] }

/** The transition's outcome: `reply` when the answer is known now (a refusal, a read), else the effect's. */
export interface StoreStep { state: StoreState; reply?: Result<unknown>; effects: StoreEffect[] }

const refuse = (state: StoreState, error: ApiError): StoreStep => ({ state, reply: fail(error), effects: [] })
const invalid = (errors: FieldErrors) => new ApiError('validation_failed', undefined, errors)

/** Pure transition (api-v1 §2.4; docs/storefront.md "Coupons"): no I/O, no clock, no randomness. */
export function reduceStore(s: StoreState, msg: StoreMsg, now: string, ctx: StoreCtx = {}): StoreStep {
  switch (msg.type) {
    case 'create_order':
      return createOrder(s, msg, now, ctx)
    case 'menu_write':
      return { state: s, effects: [{ kind: 'menu_write', op: msg.op }] }
    case 'get_menu':
      return { state: s, reply: ok({ store: s.store, vertical: s.vertical, menu: s.menu }), effects: [] }
    case 'items_changed':
      return { state: s, reply: ok(null), effects: [{ kind: 'reread_items', itemIds: [...new Set(msg.itemIds)], release: msg.release }] }
    case 'reserve_stock': {
      const taken = takeHeld(s, s.settings ?? parseSettings(s.store.settings), msg.lines, now)
      if (!taken.ok) return refuse(s, taken.error)
      return { state: taken.state, reply: ok(taken.moves), effects: taken.moves.length > 0 ? [{ kind: 'hold_stock', orderId: msg.orderId, moves: taken.moves }] : [] }
    }
    case 'settings_write':
      return { state: s, effects: [{ kind: 'settings_write', patch: msg.patch, city: msg.city, fields: msg.fields }] }
    case 'coupon_create':
    case 'coupon_update':
    case 'coupon_delete': {
      const d = reduceCoupon(msg, ctx.coupon)
      return d.ok ? { state: s, effects: [d.effect] } : refuse(s, d.error)
    }
    case 'table_write':
    case 'reservation_book':
    case 'reservation_edit':
    case 'reservation_move':
      // Removed while this message waited (docs/stores.md "Removing a store"): no new bookings.
      return s.store.deleted_at ? refuse(s, notFound('restaurant')) : { state: s, effects: [{ kind: 'reservation', msg }] }
    default: {
      const never: never = msg
      return never
    }
  }
}

function createOrder(s: StoreState, msg: Extract<StoreMsg, { type: 'create_order' }>, now: string, ctx: StoreCtx): StoreStep {
  // Removed while this message waited (docs/stores.md "Removing a store"): no new orders.
  if (s.store.deleted_at) return refuse(s, notFound('restaurant'))
  const { idem } = msg
  if (idem) {
    // Decided by src/domain/idempotency.ts: before pricing, so a replay answers whatever the menu is now.
    const d = decideIdempotency(idem, ctx.inFlight, ctx.seen)
    if (d.kind === 'replay') return { state: s, effects: [{ kind: 'replay', orderId: d.orderId }] }
    if (d.kind !== 'new') return refuse(s, idempotencyRefusal(d.kind))
  }
  // Parsed once per order (hours, fulfillment, the store's local day), not per use.
  const settings = s.settings ?? parseSettings(s.store.settings)
  if (msg.ignoreHours !== true) {
    // A replay above still answers after closing time: the order was taken while open.
    const closed = closedNotice(settings, new Date(now))
    if (closed) return refuse(s, new ApiError('store_closed', closed.message, undefined, undefined, { reason: closed.reason, opens_at: closed.opens_at }))
  }
  const drafted = draftOrder(s.vertical, s.index, msg.input, now)
  if (!drafted.ok) return refuse(s, invalid(drafted.errors))
  // Age-restricted items (issue 18 item 4): here, once, for every front door that creates orders.
  const age = ageGate(drafted.draft.lines.map((l) => ({ item_id: l.item_id, name: l.name, min_age: s.index.get(l.item_id)?.min_age ?? null })), msg.input.age_confirmed)
  if (age) return refuse(s, new ApiError('age_confirmation_required', ageRefusalMessage(age), { age_confirmed: [ageRefusalMessage(age)] }, undefined, { ...age }))
  let draft = drafted.draft
  let couponId: number | null = null
  if (msg.couponCode !== null) {
    const priced = priceCoupon(draft, foundCoupon(ctx.coupon), now)
    if (!priced.ok) return refuse(s, invalid(priced.errors))
    ;({ draft, couponId } = priced)
  }
  // Delivery zones and the estimate (issue 37; docs/dispatch.md): the zone's fee and minimum, after discounts.
  const delivered = withDelivery(draft, settings, s.store.currency, now, msg.rideSeconds ?? null)
  if (delivered instanceof ApiError) return refuse(s, delivered)
  // Fulfillment modes (issue 18 item 5): capacity and the shipping fee, in the actor's turn.
  const moded = withFulfillment(delivered, msg.input, settings, now, ctx.booked)
  if (moded instanceof ApiError) return refuse(s, moded)
  // Object.assign, not `{ ...moded, store_id, … }`: in V8 an object made by a spread and then given
  // more properties is very slow to build (several µs for an order; see orders.ts lineView).
  const order: NewOrder = Object.assign({}, moded, { store_id: s.store.id, is_paid: moded.total === 0, customer_id: msg.customerId, track_token: msg.trackToken, created_at: now })
  // Stock (issue 18 items 2, 4; docs/verticals.md): taken from the held counts now, so the next order
  // in this mailbox sees them while this one commits; the insert takes them in SQLite, guarded.
  const stock = takeHeld(s, settings, order.lines, now)
  if (!stock.ok) return refuse(s, stock.error)
  return { state: stock.state, effects: [{ kind: 'insert_order', order, couponId, idem, stock: stock.moves }] }
}

/**
 * Take `lines` from the held counts (a new order, a reopened one): the moves, and the state with
 * them already subtracted; short stock is 422 `out_of_stock` keyed `items.N.quantity`. The store's
 * local day decides which batches expired; only lines of items with batches need it.
 */
function takeHeld(s: StoreState, settings: Record<string, unknown>, lines: readonly StockLine[], now: string): { ok: true; state: StoreState; moves: StockMove[] } | { ok: false; error: ApiError } {
  const dated = lines.some((l) => (s.index.get(l.item_id)?.batches?.length ?? 0) > 0)
  const today = dated ? localDay(timeZoneOf(settings), new Date(now)).date : ''
  const stock = allocateStock(s.index, lines, today)
  if (!stock.ok) return { ok: false, error: new ApiError('out_of_stock', Object.values(stock.errors)[0]?.[0], stock.errors) }
  return { ok: true, state: stock.moves.length > 0 ? { ...s, index: withMoves(s.index, stock.moves, -1) } : s, moves: stock.moves }
}

/** `order.created` (api-v1 §6) for order `orderId`, once the insert gave it an id. */
/**
 * `order.paid` (api-v1 §6) of an order whose total is zero (a free item, a full discount): there is
 * nothing to pay, so it is paid as it is placed — `is_paid` from the start, a payment is refused as
 * for any paid order, and integrations that wait for `order.paid` before fulfilling get it.
 */
export const orderPaidAtPlacing = (orderId: number, o: NewOrder) => ({
  event: 'order.paid',
  data: { order_id: orderId, restaurant_id: o.store_id, total: '0.00', paid_at: o.created_at, amount_paid: '0.00', tips: '0.00', methods: [] },
})

export const orderCreatedEvent = (orderId: number, o: NewOrder) => ({
  event: 'order.created',
  data: { order_id: orderId, restaurant_id: o.store_id, type: o.type, status: o.status, total: centsToDecimalString(o.total), delivery_fee: centsToDecimalString(o.delivery_fee) },
})

/** `menu.updated` (api-v1 §6): every menu operation emits it. */
export const menuUpdatedEvent = (storeId: number, c: MenuChange) => ({
  event: 'menu.updated',
  data: { restaurant_id: storeId, change: c.change, entity: c.entity, id: c.id },
})

/** What the store actor's shell uses: narrower than the service bag (ARCHITECTURE 4). */
export interface StoreDeps {
  committer: Committer
  /** The store and its menu, read on activation and after a menu write. */
  stores: Pick<StoreQueries, 'byId' | 'menu' | 'item'>
  /** The order an idempotent replay answers with. */
  orders: Pick<OrderQueries, 'row' | 'full'>
  /** Point reads in the actor's turn (ARCHITECTURE 7): a key's record (store-idempotency.ts), a coupon by code or by id. */
  idempotency: IdempotencyReads
  coupons: { byCode(storeId: number, code: string): CouponRow | undefined; byId(storeId: number, id: number): CouponRow | undefined }
  /** A slot's or appointment's bookings, read in the actor's turn (store-fulfillment.ts). */
  bookings: BookingReads
  /** Committed events go to the event router (webhooks, real time, reactions). */
  events: Pick<EventRouter, 'publish'>
  log: Logger
  /** For the tracking URL in a new order's view. */
  siteUrl: string
  /** Does an order hold stock moves in SQLite now (src/storage/stock.ts `holdsStock`)? */
  stock: { holds(orderId: number): boolean }
}

export function loadStoreState(deps: Pick<StoreDeps, 'stores'>, storeId: number): StoreState | null {
  const store = deps.stores.byId(storeId)
  if (!store) return null
  const menu = deps.stores.menu(storeId)
  return { store, vertical: verticalOf(store.store_type), menu, index: pricingIndex(menu), settings: parseSettings(store.settings) }
}

/** The nact handler for one store: read what the message names, reduce, apply the effects. */
export function storeHandler(deps: StoreDeps, storeId: number) {
  /** Keyed orders whose commit is under way, and the committed keys (store-idempotency.ts). */
  const keys = new StoreIdempotency(deps.idempotency)
  /** Slots and appointments of orders still committing (store-fulfillment.ts). */
  const bookings = new InFlightBookings()
  /** Stock held back for orders whose insert failed after pricing: returned to the held counts at the next message. */
  const giveBack: StockMove[] = []
  /**
   * Stock taken by orders still committing (track token → moves) and reserved by reopened orders
   * whose write is under way (`reopenKey`): held already, not (known to be) in SQLite yet.
   */
  const takenInFlight = new Map<string, StockMove[]>()

  return async (state: StoreState | null, msg: StoreMsg): Promise<StoreState | null> => {
    const replyTo = msg.replyTo as Ref<Result<unknown>>
    state ??= loadStoreState(deps, storeId)
    if (state && giveBack.length > 0) state = { ...state, index: withMoves(state.index, giveBack.splice(0), 1) }
    if (!state) {
      nact.dispatch(replyTo, fail(notFound('store')))
      return null
    }
    const now = nowIso()
    const step = reduceStore(state, msg, now, contextFor(msg, state))
    if (step.reply) nact.dispatch(replyTo, step.reply)
    let next: StoreState | null = step.state
    for (const e of step.effects) {
      switch (e.kind) {
        case 'insert_order':
          insert(step.state.store.owner_id, e, msg.type === 'create_order' ? msg.linkPhone ?? null : null, replyTo, now) // not awaited: pipelined
          break
        case 'replay': {
          // The original may have committed without being answered (cluster mode: the stream did not
          // confirm it in time): the replay is an answer too, so it waits for the same durability.
          try {
            await deps.committer.durable()
          } catch (err) {
            nact.dispatch(replyTo, fail(err instanceof ApiError ? err : new ApiError('unavailable')))
            break
          }
          const row = deps.orders.row(e.orderId)
          nact.dispatch(replyTo, row ? ok({ order: deps.orders.full(row), replayed: true }) : fail(new ApiError('not_found')))
          break
        }
        case 'menu_write':
          next = await writeMenu(step.state, e.op, replyTo, now)
          break
        case 'settings_write':
          next = await writeSettings(step.state, e, replyTo)
          break
        case 'coupon_insert':
        case 'coupon_update':
        case 'coupon_delete':
          nact.dispatch(replyTo, await applyCouponEffect(deps, storeId, e, now))
          break
        case 'reservation':
          // Awaited: the next booking of this store is checked against this one (no double booking).
          nact.dispatch(replyTo, await applyReservationMsg(deps, storeId, step.state.store.owner_id, e.msg, now))
          break
        case 'reread_items':
          if (e.release !== undefined) takenInFlight.delete(reopenKey(e.release))
          next = rereadItems(step.state, e.itemIds)
          break
        case 'hold_stock':
          takenInFlight.set(reopenKey(e.orderId), e.moves)
          break
        default: {
          const never: never = e
          return never
        }
      }
    }
    return next
  }

  function contextFor(msg: StoreMsg, state: StoreState): StoreCtx {
    switch (msg.type) {
      case 'create_order':
        return {
          inFlight: keys.inFlight(msg.idem),
          seen: keys.seen(msg.idem),
          coupon: msg.couponCode === null ? undefined : deps.coupons.byCode(storeId, msg.couponCode),
          booked: bookings.read(deps.bookings, storeId, msg.input, state.settings ?? parseSettings(state.store.settings)),
        }
      case 'coupon_update':
      case 'coupon_delete':
        return { coupon: deps.coupons.byId(storeId, msg.couponId) }
      default:
        return {}
    }
  }

  function insert(ownerId: number, e: Extract<StoreEffect, { kind: 'insert_order' }>, linkPhone: string | null, replyTo: Ref<Result<unknown>>, now: string): void {
    const { couponId, idem } = e
    let order = e.order
    const slot = keys.hold(idem)
    bookings.hold(order)
    if (e.stock && e.stock.length > 0) takenInFlight.set(order.track_token, e.stock)
    let event!: OutboxEvent
    let paid: OutboxEvent | null = null
    deps.committer
      .write((db) => {
        if (order.customer_id === null && linkPhone !== null) {
          const linked = customers.idByPhone(db, storeId, linkPhone)
          if (linked !== undefined) order = Object.assign({}, order, { customer_id: linked })
        }
        const ids = insertOrder(db, order)
        // Counted in the order's own transaction with a guard, so two orders racing for the last use
        // cannot both get it: a coupon changed since pricing rolls the order back with a 422.
        if (couponId !== null && !couponWrites.redeem(db, couponId, ids.id, order.discount, now)) {
          throw redemptionRefused(couponReads(db).byId(storeId, couponId))
        }
        keys.record(db, idem, ids.id, now)
        writeOrderFulfillment(db, ids.id, order)
        if (e.stock && e.stock.length > 0) takeStock(db, ids.id, e.stock)
        event = appendEvent(db, Object.assign({ ownerId, storeId }, orderCreatedEvent(ids.id, order)))
        if (order.is_paid) paid = appendEvent(db, Object.assign({ ownerId, storeId }, orderPaidAtPlacing(ids.id, order)))
        // The moves are SQLite's from here: the transaction commits as soon as this returns, with no
        // message handled in between, but the reply waits for the WAL sync. A re-read meanwhile
        // (`items_changed`) must not subtract them a second time (it left the held counts short for
        // good); if the commit fails after all, the rejection below gives them back.
        takenInFlight.delete(order.track_token)
        return ids
      })
      .then(
        (ids) => {
          keys.release(slot)
          bookings.release(order.track_token)
          deps.events.publish(paid ? [event, paid] : [event])
          nact.dispatch(replyTo, ok({ order: viewOfNew(order, ids, deps.siteUrl), replayed: false }))
        },
        (err: unknown) => {
          keys.release(slot)
          bookings.release(order.track_token)
          takenInFlight.delete(order.track_token)
          if (e.stock) giveBack.push(...e.stock)
          // A coupon's refusal (used up meanwhile) is the answer; anything else is a bug.
          if (err instanceof ApiError) return nact.dispatch(replyTo, fail(err))
          deps.log.error({ err, storeId }, 'order insert failed')
          nact.dispatch(replyTo, fail(new ApiError('internal_error')))
        },
      )
  }

  /**
   * The held counts of `itemIds` as SQLite has them now (restock included), less what orders still
   * committing took from them: correct whether or not the held copy already saw the restock.
   */
  function rereadItems(state: StoreState, itemIds: readonly number[]): StoreState | null {
    let held: { menu: StoreMenu; index: Map<number, PricedItem> } | null = state
    for (const id of itemIds) {
      held = held && withItemChanged(held, id, deps.stores.item(storeId, id))
    }
    // A reopened order's reservation counts until its release, except once its take is committed
    // (the order holds moves again): SQLite's counts include it then, and subtracting it once more
    // would refuse stock that exists until the release re-reads.
    const inFlight: StockMove[] = []
    for (const [key, moves] of takenInFlight) {
      if (key.startsWith(REOPEN_PREFIX) && deps.stock.holds(Number(key.slice(REOPEN_PREFIX.length)))) continue
      inFlight.push(...moves)
    }
    if (!held) {
      const fresh = loadStoreState(deps, storeId)
      return fresh && { ...fresh, index: withMoves(fresh.index, inFlight, -1) }
    }
    const touched = new Set(itemIds)
    return { ...state, ...held, index: withMoves(held.index, inFlight.filter((m) => touched.has(m.item_id)), -1) }
  }

  /** Settings writes are awaited: the next order is checked against the hours as written. */
  async function writeSettings(state: StoreState, e: Extract<StoreEffect, { kind: 'settings_write' }>, replyTo: Ref<Result<unknown>>): Promise<StoreState> {
    let row: StoreRow | undefined
    try {
      row = await deps.committer.write((db) => writeStoreSettings(db, storeId, e.patch, e.city, e.fields))
    } catch (err) {
      if (!(err instanceof ApiError)) deps.log.error({ err, storeId }, 'settings write failed')
      nact.dispatch(replyTo, fail(err instanceof ApiError ? err : new ApiError('internal_error')))
      return state
    }
    if (!row) {
      nact.dispatch(replyTo, fail(notFound('store')))
      return state
    }
    nact.dispatch(replyTo, ok(row))
    return { ...state, store: row, vertical: verticalOf(row.store_type), settings: parseSettings(row.settings) }
  }

  /** Menu writes are awaited, not pipelined: the next message prices with the menu as written. */
  async function writeMenu(state: StoreState, op: MenuOp, replyTo: Ref<Result<unknown>>, now: string): Promise<StoreState | null> {
    let event!: OutboxEvent
    let change: MenuChange
    try {
      change = await deps.committer.write((db) => {
        const c = applyMenuOp(db, storeId, op, now)
        event = appendEvent(db, { ownerId: state.store.owner_id, storeId, ...menuUpdatedEvent(storeId, c) })
        return c
      })
    } catch (err) {
      if (!(err instanceof ApiError)) deps.log.error({ err, storeId }, 'menu write failed')
      nact.dispatch(replyTo, fail(err instanceof ApiError ? err : new ApiError('internal_error')))
      return state
    }
    const next = afterMenuWrite(state, op, change)
    deps.events.publish([event])
    nact.dispatch(replyTo, ok(change))
    return next
  }

  /** The state after a committed menu write: only the changed item re-read; a category change re-reads the menu. */
  function afterMenuWrite(state: StoreState, op: MenuOp, change: MenuChange): StoreState | null {
    const itemId = 'itemId' in op ? op.itemId : change.entity === 'item' ? change.id : null
    const held = itemId === null ? null : withItemChanged(state, itemId, deps.stores.item(storeId, itemId))
    return held ? { ...state, ...held } : loadStoreState(deps, storeId)
  }
}

/** A reopened order's reservation among the in-flight takes (track tokens have no colon). */
const REOPEN_PREFIX = 'reopen:'
const reopenKey = (orderId: number) => `${REOPEN_PREFIX}${orderId}`

/**
 * Tell a store's actor that committed writes outside it changed these items (stock put back by a
 * cancellation or line refund, a brand renamed or deleted), before the reply leaves, so the next order
 * or menu read sees them; `release` ends a reopened order's `reserve_stock`. A removed store has no
 * menu to keep in step: its refusal is ignored.
 */
export async function itemsChanged(svc: Pick<Services, 'actors' | 'log'>, storeId: number, itemIds: readonly number[], release?: number): Promise<void> {
  if (itemIds.length === 0) return
  try {
    await svc.actors.stores.ask<null>(storeId, (replyTo) => ({ type: 'items_changed', itemIds: [...itemIds], ...(release === undefined ? {} : { release }), replyTo }))
  } catch (err) {
    if (!(err instanceof ApiError)) svc.log.warn({ err, storeId }, 'items_changed not delivered')
  }
}
