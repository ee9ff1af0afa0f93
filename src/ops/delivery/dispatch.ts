/**
 * Automatic dispatch, explained (issue 37 item 3; docs/dispatch.md "Explain"): what the dispatcher
 * decided for an order, with the candidates it considered and their scores, the drivers it left out
 * and why, the router that timed them, and what happened to each offer.
 */
import { defineOp } from '../op.ts'
import { orderOf, storeOf } from '../scope.ts'
import { envelopeOf, named } from '../schemas/named.ts'
import { dispatchJobs, orderOffers, waitingDeliveries } from '../../storage/dispatch.ts'
import { nowIso, type Db } from '../../storage/db.ts'
import type { OrderRow } from '../../storage/orders.ts'
import { offerStatusAt } from '../../domain/delivery.ts'
import { offerOf } from '../../storage/drivers.ts'
import type { DecisionRecord } from '../../actors/dispatcher.ts'

/** The waiting list's length at most: the oldest waiting orders first. */
const WAITING_LISTED = 100
const int = { type: 'integer' }
const when = { type: 'string', format: 'date-time' }
const CandidateSchema = {
  type: 'object', required: ['driver_id', 'rank', 'travel_s', 'arrival_at', 'late_s', 'load', 'idle_s'],
  properties: {
    driver_id: int, rank: { type: 'integer', description: '1 = the best' },
    travel_s: { type: 'integer', description: 'router seconds to the store' }, arrival_at: when,
    late_s: { type: 'integer', description: 'seconds the order would wait for the driver once ready (0: on time)' },
    load: { type: 'integer', description: 'active deliveries plus open offers' },
    idle_s: { type: 'integer', description: 'seconds since the driver\'s last delivery ended (1e9: none yet)' },
    batch: {
      type: 'object', description: 'With `batch: true`, a driver already carrying orders of the store: the detour the order adds to their route (`travel_s` is then the time to the store along that route; docs/dispatch.md "Batching")',
      required: ['orders', 'route_before_s', 'route_after_s', 'detour_s', 'limit_s', 'direct_s'],
      properties: {
        orders: { type: 'array', items: int, description: 'the active deliveries carried' },
        route_before_s: { type: 'integer', description: 'travel seconds of the route without the order' },
        route_after_s: { type: 'integer', description: '…and with it' },
        detour_s: { type: 'integer', description: 'what the order adds: after − before' },
        limit_s: { type: 'integer', description: 'the most it may add (600)' },
        direct_s: { type: 'integer', description: 'the order\'s own ride, store to customer' },
      },
    },
  },
}
export const DispatchExplainSchema = named('DispatchExplain', {
  type: 'object', required: ['order_id', 'mode', 'state', 'due_at', 'driver_id', 'decisions', 'offers'],
  properties: {
    order_id: int,
    mode: { type: 'string', enum: ['manual', 'offer', 'auto'], description: 'the mode the order is dispatched in (`manual`: the dispatcher leaves it alone)' },
    state: { type: ['string', 'null'], enum: ['waiting', 'offered', 'assigned', 'closed', null], description: 'null for a manual order' },
    due_at: { type: ['string', 'null'], format: 'date-time', description: 'not offered before this: the ready time minus the best driver\'s travel time' },
    driver_id: { type: ['integer', 'null'] },
    decisions: {
      type: 'array', description: 'newest last (the last 20)',
      items: {
        type: 'object', required: ['at', 'action', 'candidates', 'excluded', 'router'],
        properties: {
          at: when, action: { type: 'string', enum: ['wait_until_due', 'wait_for_driver', 'nobody_available', 'offered', 'assigned', 'assign_failed', 'closed'] },
          driver_id: { ...int, description: '`offered`/`assigned`: the driver chosen; `wait_for_driver`: the carrying driver waited for' },
          due_at: { ...when, description: '`wait_until_due`: not offered before this; `wait_for_driver`: when the driver waited for should be free' },
          arrival_at: { ...when, description: '`wait_for_driver`: when that driver should reach the store, after its route' },
          best_free_arrival_at: { ...when, description: '`wait_for_driver`: when the best free candidate would reach it (later, and after the ready time)' },
          candidates: { type: 'array', items: CandidateSchema, description: 'ranked, the best 10' },
          excluded: {
            type: 'array', items: {
              type: 'object', required: ['driver_id', 'reason'],
              properties: {
                driver_id: int,
                reason: { type: 'string', enum: ['bound_elsewhere', 'stale_position', 'full', 'already_offered', 'other_store', 'detour_over_limit', 'route_unknown'] },
                detour_s: { type: 'integer', description: '`detour_over_limit`: what the order would add to the driver\'s route' },
                limit_s: { type: 'integer', description: '`detour_over_limit`: the most it may add' },
              },
            },
          },
          router: { type: ['object', 'null'], required: ['source', 'fallback'], properties: { source: { type: 'string', enum: ['straight', 'osrm'] }, fallback: { type: ['string', 'null'] } } },
        },
      },
    },
    offers: {
      type: 'array', description: 'every offer of the order, oldest first',
      items: { type: 'object', required: ['offer_id', 'driver_id', 'status', 'created_at', 'expires_at', 'responded_at'], properties: { offer_id: int, driver_id: int, status: { type: 'string', enum: ['pending', 'accepted', 'rejected', 'expired', 'withdrawn'] }, created_at: when, expires_at: when, responded_at: { type: ['string', 'null'], format: 'date-time' } } },
    },
  },
})

export const explainDispatch = defineOp({
  id: 'deliveries.dispatch.explain', tag: 'Deliveries', summary: 'How the dispatcher decided an order: candidates, scores, offers',
  description: 'For stores with `dispatch.mode` `offer` or `auto` (store settings): each decision with the candidates considered (ranked: lateness at the store after the ready time, then load, then time since their last delivery), the drivers left out and why (`bound_elsewhere`, `stale_position`, `full`, `already_offered`; with batching `other_store`, `detour_over_limit`, `route_unknown`), a carrying driver\'s detour (`batch`), the router that timed them (and its fallback), and every offer\'s fate. docs/dispatch.md "Explain".',
  access: { owner: 'orders:read' }, scope: ['store', 'order'], output: DispatchExplainSchema,
  run: (ctx) => {
    storeOf(ctx)
    return explained(ctx.svc.db, orderOf(ctx))
  },
})

/** The explain view of one order (the same for one order and for the waiting list). */
function explained(db: Db, order: Pick<OrderRow, 'id' | 'driver_id'>) {
  const job = dispatchJobs.get(db, order.id)
  const now = nowIso()
  const offers = orderOffers(db, order.id)
  return {
    order_id: order.id,
    // An order without a job was placed while the store dispatched by hand (or is not a delivery).
    mode: job?.mode ?? 'manual',
    state: job?.state ?? null,
    due_at: job?.due_at ?? null,
    driver_id: order.driver_id,
    decisions: job ? (JSON.parse(job.decisions) as DecisionRecord[]) : [],
    offers: offers.map((r) => ({ offer_id: r.id, driver_id: r.driver_id, status: offerStatusAt(offerOf(r), now), created_at: r.created_at, expires_at: r.expires_at, responded_at: r.responded_at })),
  }
}

export const listWaitingDispatch = defineOp({
  id: 'deliveries.dispatch.waiting', tag: 'Deliveries', summary: 'Delivery orders waiting for a driver, each with how the dispatcher decided it',
  description: `The store's delivery orders with no driver yet (not cancelled), oldest first, at most ${WAITING_LISTED}: each as \`GET …/orders/{orderId}/dispatch\` shows it (manual orders with \`mode: "manual"\`). One request for the dashboard's Dispatch page instead of one per order. docs/dispatch.md "Explain".`,
  access: { owner: 'orders:read' }, scope: ['store'], output: envelopeOf(DispatchExplainSchema, 'List', { type: 'object', required: ['data'], properties: { data: { type: 'array', items: DispatchExplainSchema } } }),
  run: (ctx) => ({ data: waitingDeliveries(ctx.svc.db, storeOf(ctx).id, WAITING_LISTED).map((o) => explained(ctx.svc.db, o)) }),
})

export const dispatchOps = [explainDispatch, listWaitingDispatch]
