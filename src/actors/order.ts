/**
 * The order actor (ARCHITECTURE 1): owns one order's kitchen status, delivery status, driver and
 * timeline. `reduceOrder` is the pure transition; the shell persists, emits and replies.
 */
import * as nact from 'nact'
import type { Ref, Result } from './system.ts'
import { fail, ok } from './system.ts'
import { ApiError } from '../errors.ts'
import { deliveryEventFor, stamp, type DeliveryStatus, type KitchenStatus, type Timeline } from '../domain/order-state.ts'
import type { Services } from '../services.ts'
import { nowIso } from '../storage/db.ts'
import type { OrderRow, OrderView } from '../storage/orders.ts'
import { appendEvent, type OutboxEvent } from '../storage/outbox.ts'

export interface OrderState {
  id: number
  storeId: number
  ownerId: number
  type: string
  status: KitchenStatus
  deliveryStatus: DeliveryStatus | null
  driverId: number | null
  timeline: Timeline
}

export type OrderMsg =
  | { type: 'set_status'; status: KitchenStatus; replyTo: Ref<Result<OrderView>> }
  | { type: 'set_delivery_status'; status: DeliveryStatus; note?: string | null; replyTo: Ref<Result<OrderView>> }
  | { type: 'assign_driver'; driverId: number; replyTo: Ref<Result<OrderView>> }

export interface EventEffect { event: string; data: Record<string, unknown> }
export type Decision = { ok: true; state: OrderState; events: EventEffect[] } | { ok: false; error: ApiError }

/** Pure transition (api-v1 §3). The kitchen and delivery routes are overrides: any value is accepted. */
export function reduceOrder(s: OrderState, msg: OrderMsg, now: string): Decision {
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
      return {
        ok: true,
        state: { ...s, deliveryStatus: msg.status, timeline: stamp(s.timeline, msg.status, now) },
        events: ev ? [{ event: ev, data: { ...base, delivery_status: msg.status, driver_id: s.driverId, note: msg.note ?? null } }] : [],
      }
    }
    case 'assign_driver': {
      if (s.deliveryStatus === null) return { ok: false, error: new ApiError('invalid_transition', 'Only delivery orders can be assigned a driver.', { driver_id: ['The order is not a delivery.'] }) }
      return {
        ok: true,
        state: { ...s, driverId: msg.driverId, deliveryStatus: 'assigned', timeline: stamp(s.timeline, 'assigned', now) },
        events: [{ event: 'order.driver_assigned', data: { ...base, driver_id: msg.driverId } }],
      }
    }
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
  }
}

/** The nact handler for one order: load on first message, persist before replying. */
export function orderHandler(svc: Services, orderId: number) {
  const update = svc.db.prepare('UPDATE orders SET status = ?, delivery_status = ?, driver_id = ?, timeline = ?, updated_at = ? WHERE id = ?')
  return async (state: OrderState | null, msg: OrderMsg): Promise<OrderState | null> => {
    if (!state) {
      const row = svc.orders.row(orderId)
      const store = row && svc.stores.byId(row.store_id)
      if (!row || !store) {
        nact.dispatch(msg.replyTo, fail(new ApiError('not_found', 'The order does not exist.')))
        return null
      }
      state = orderStateOf(row, store.owner_id)
    }
    const now = nowIso()
    const d = reduceOrder(state, msg, now)
    if (!d.ok) {
      nact.dispatch(msg.replyTo, fail(d.error))
      return state
    }
    try {
      const next = d.state
      const events: OutboxEvent[] = []
      if (next !== state) {
        await svc.committer.write((db) => {
          update.run(next.status, next.deliveryStatus, next.driverId, JSON.stringify(next.timeline), now, next.id)
          for (const e of d.events) events.push(appendEvent(db, { ownerId: next.ownerId, storeId: next.storeId, event: e.event, data: e.data }))
        })
        svc.events.publish(events)
      }
      nact.dispatch(msg.replyTo, ok(svc.orders.full(svc.orders.row(orderId)!)))
      return next
    } catch (err) {
      svc.log.error({ err, orderId }, 'order write failed')
      nact.dispatch(msg.replyTo, fail(new ApiError('internal_error')))
      return state
    }
  }
}
