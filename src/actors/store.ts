/**
 * The store actor (ARCHITECTURE 1): owns a store's settings and live menu. Orders are priced and
 * created here so a sold-out toggle and an order never race; menu writes are serialised here.
 *
 * Order creation is pipelined: the actor validates and prices synchronously, hands the insert to
 * the group committer and takes the next message at once; the reply leaves after the commit.
 */
import type { Ref, Result } from './system.ts'
import { fail, ok } from './system.ts'
import * as nact from 'nact'
import { ApiError } from '../errors.ts'
import { draftOrder, type DraftResult, type OrderDraft, type OrderInput } from '../domain/orders.ts'
import type { Db } from '../storage/db.ts'
import { verticalOf, type Vertical } from '../domain/verticals.ts'
import type { PricedItem } from '../domain/pricing.ts'
import { centsToDecimalString } from '../domain/money.ts'
import type { Services } from '../services.ts'
import { nowIso } from '../storage/db.ts'
import { pricingIndex, type StoreMenu, type StoreRow } from '../storage/stores.ts'
import { insertOrder, viewOfNew, type NewOrder, type OrderView } from '../storage/orders.ts'
import { applyMenuOp, type MenuChange, type MenuOp } from '../storage/menu.ts'
import { appendEvent, type OutboxEvent } from '../storage/outbox.ts'

export interface Idempotency { scope: string; key: string; hash: string }

export interface CreatedOrder { order: OrderView; replayed: boolean }

/**
 * Extensions of one order creation (coupons, docs/storefront.md), run by the store actor so they
 * are ordered with menu changes and other orders.
 */
export interface OrderHooks {
  /** Adjust the priced draft (e.g. a discount) or refuse it with field errors (422). */
  adjust?(draft: OrderDraft, now: string): DraftResult
  /** Runs in the order's transaction after the insert; an ApiError thrown here rolls the order back and is the answer. */
  commit?(db: Db, orderId: number, draft: OrderDraft): void
}

export type StoreMsg =
  | {
      type: 'create_order'
      input: OrderInput
      customerId: number | null
      idem: Idempotency | null
      trackToken: string
      hooks?: OrderHooks
      replyTo: Ref<Result<CreatedOrder>>
    }
  | { type: 'menu_write'; op: MenuOp; replyTo: Ref<Result<MenuChange>> }
  | { type: 'get_menu'; replyTo: Ref<Result<{ store: StoreRow; vertical: Vertical; menu: StoreMenu }>> }

export interface StoreState {
  store: StoreRow
  vertical: Vertical
  menu: StoreMenu
  index: Map<number, PricedItem>
  /** Idempotency keys whose first request has not committed yet: `scope\nkey` → request hash. */
  inflight: Map<string, string>
}

export function loadStoreState(svc: Services, storeId: number): StoreState | null {
  const store = svc.stores.byId(storeId)
  if (!store) return null
  const menu = svc.stores.menu(storeId)
  return { store, vertical: verticalOf(store.store_type), menu, index: pricingIndex(menu), inflight: new Map() }
}

/** The nact handler for one store. */
export function storeHandler(svc: Services, storeId: number) {
  const findIdem = svc.db.prepare<[string, string], { request_hash: string; order_id: number }>(
    'SELECT request_hash, order_id FROM idempotency_keys WHERE scope = ? AND key = ?',
  )
  const insertIdem = svc.db.prepare('INSERT INTO idempotency_keys (scope, key, request_hash, order_id, created_at) VALUES (?, ?, ?, ?, ?)')

  const reply = <T>(to: Ref<Result<T>>, r: Result<T>) => nact.dispatch(to, r)

  return async (state: StoreState | null, msg: StoreMsg): Promise<StoreState | null> => {
    state ??= loadStoreState(svc, storeId)
    if (!state) {
      reply(msg.replyTo as Ref<Result<never>>, fail(new ApiError('not_found', 'The store does not exist.')))
      return null
    }
    switch (msg.type) {
      case 'create_order':
        createOrder(state, msg)
        return state
      case 'menu_write': {
        try {
          const events: OutboxEvent[] = []
          const change = await svc.committer.write((db) => {
            const c = applyMenuOp(db, storeId, msg.op, nowIso())
            events.push(appendEvent(db, {
              ownerId: state!.store.owner_id, storeId, event: 'menu.updated',
              data: { restaurant_id: storeId, change: c.change, entity: c.entity, id: c.id },
            }))
            return c
          })
          const next = loadStoreState(svc, storeId)!
          next.inflight = state.inflight
          svc.events.publish(events)
          reply(msg.replyTo, ok(change))
          return next
        } catch (err) {
          reply(msg.replyTo, fail(err instanceof ApiError ? err : (svc.log.error({ err }, 'menu write failed'), new ApiError('internal_error'))))
          return state
        }
      }
      case 'get_menu':
        reply(msg.replyTo, ok({ store: state.store, vertical: state.vertical, menu: state.menu }))
        return state
      default: {
        const never: never = msg
        return never
      }
    }
  }

  function createOrder(state: StoreState, msg: Extract<StoreMsg, { type: 'create_order' }>): void {
    const { idem } = msg
    // Keys are scoped per caller (owner, customer, storefront): two callers may pick the same key.
    const slot = idem ? `${idem.scope}\n${idem.key}` : ''
    if (idem) {
      const pending = state.inflight.get(slot)
      if (pending !== undefined) {
        return reply(msg.replyTo, fail(pending === idem.hash ? new ApiError('idempotency_in_flight') : new ApiError('idempotency_key_reused')))
      }
      const seen = findIdem.get(idem.scope, idem.key)
      if (seen) {
        if (seen.request_hash !== idem.hash) return reply(msg.replyTo, fail(new ApiError('idempotency_key_reused')))
        const row = svc.orders.row(seen.order_id)
        return reply(msg.replyTo, row ? ok({ order: svc.orders.full(row), replayed: true }) : fail(new ApiError('not_found')))
      }
    }
    const now = nowIso()
    let drafted = draftOrder(state.vertical, state.index, msg.input, now)
    if (drafted.ok && msg.hooks?.adjust) drafted = msg.hooks.adjust(drafted.draft, now)
    if (!drafted.ok) return reply(msg.replyTo, fail(new ApiError('validation_failed', undefined, drafted.errors)))

    const draft = drafted.draft
    const order: NewOrder = {
      ...draft,
      store_id: storeId,
      is_paid: false,
      customer_id: msg.customerId,
      track_token: msg.trackToken,
      created_at: now,
    }
    if (idem) state.inflight.set(slot, idem.hash)
    const ownerId = state.store.owner_id
    let event: OutboxEvent
    svc.committer
      .write((db) => {
        const ids = insertOrder(db, order)
        msg.hooks?.commit?.(db, ids.id, draft)
        if (idem) insertIdem.run(idem.scope, idem.key, idem.hash, ids.id, now)
        event = appendEvent(db, {
          ownerId, storeId, event: 'order.created',
          data: { order_id: ids.id, restaurant_id: storeId, type: order.type, status: order.status, total: centsToDecimalString(order.total) },
        })
        return ids
      })
      .then(
        (ids) => {
          if (idem) state.inflight.delete(slot)
          svc.events.publish([event])
          reply(msg.replyTo, ok({ order: viewOfNew(order, ids, svc.config.siteUrl), replayed: false }))
        },
        (err) => {
          if (idem) state.inflight.delete(slot)
          // A hook's refusal (e.g. a coupon used up meanwhile) is the answer; anything else is a bug.
          if (err instanceof ApiError) return reply(msg.replyTo, fail(err))
          svc.log.error({ err }, 'order insert failed')
          reply(msg.replyTo, fail(new ApiError('internal_error')))
        },
      )
  }
}
