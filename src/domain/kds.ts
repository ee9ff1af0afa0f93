/**
 * Kitchen display rules (api-v1 §3 "KDS item state"): pure. Items move
 * queued → preparing → ready → served one step per bump, one step back per recall, and the parent
 * order's kitchen status is re-derived from its items (docs/kds.md "Status rule").
 */
import type { KdsState, KitchenStatus } from './order-state.ts'

export const KDS_FLOW: readonly KdsState[] = ['queued', 'preparing', 'ready', 'served']

/** Items a kitchen screen still shows (api-v1 §4.7 `GET /staff/kds`). */
export const LIVE_KDS: ReadonlySet<string> = new Set(['queued', 'preparing', 'ready'])

/** Orders whose tickets are on screens; closed orders leave every screen. */
export const KDS_OPEN_ORDER: ReadonlySet<string> = new Set(['new', 'preparing', 'ready'])

/**
 * Roads out of the kitchen (issue 20 item 9, docs/kds.md "Leaving the kitchen"): a kitchen status an
 * owner or staff member sets by hand, and delivery statuses that mean the food is gone. Either one
 * resolves the order's remaining lines, so no screen keeps a QUEUED line a cook would make again.
 * (A `ready` derived from bumps is not a road out: its lines are still on the pass.)
 */
export const KITCHEN_EXIT: ReadonlySet<string> = new Set(['ready', 'delivered', 'completed', 'cancelled'])
export const DELIVERY_EXIT: ReadonlySet<string> = new Set(['picked_up', 'out_for_delivery', 'delivered'])

/** Every line still on a screen becomes `served` (stamped now); resolved lines are kept as they are. */
export function resolveLines(lines: readonly KdsLine[], now: string): KdsLine[] {
  return lines.map((l) => (LIVE_KDS.has(l.state) ? { ...l, state: 'served' as KdsState, timeline: { ...l.timeline, served_at: now } } : l))
}

/** Who bumps or recalls a line: the member's role and the station it is bound to (null: none). */
export interface KdsMember { role: string; station: string | null }

/**
 * The station rule (docs/kds.md "Who may bump"): a member bound to a station bumps and recalls that
 * station's lines only; a manager, or a member bound to no station, any line of the store. A line
 * without a station shows on the all-station screens only, so it is no bound member's either.
 */
export const mayStep = (member: KdsMember, lineStation: string | null): boolean =>
  member.station === null || member.role === 'manager' || member.station === lineStation

/** Orders whose items may still be bumped or recalled. */
export const kdsEditable = (status: string): boolean => status !== 'cancelled' && status !== 'completed'

export const nextKds = (s: KdsState): KdsState | null => KDS_FLOW[KDS_FLOW.indexOf(s) + 1] ?? null
export const prevKds = (s: KdsState): KdsState | null => (KDS_FLOW.indexOf(s) > 0 ? KDS_FLOW[KDS_FLOW.indexOf(s) - 1]! : null)

/**
 * What a kitchen card shows of a line besides its state. Fixed once the order is placed (no write
 * changes a line's name, variation, quantity, extras or note), so the order actor keeps it with the
 * line and builds the screens' frames and its reply from memory, without reading the order back.
 */
export interface KdsCard { item_id: number; name: string; variation: string | null; quantity: number; extras: readonly string[]; note: string | null }

export interface KdsLine { id: number; station: string | null; state: KdsState; timeline: Record<string, string>; card?: KdsCard }

/** The order fields a kitchen card heads with; fixed once the order is placed, like the card. */
export interface KdsHead { type: string; table_number: string | null; customer_name: string | null; note: string | null; created_at: string }

/**
 * Timestamps follow the path the item actually took: entering a state stamps `<state>_at` with
 * now (a re-entry after a recall re-stamps it), and a recall drops the stamp of the state it left.
 */
export function stepLine(line: KdsLine, step: 'bump' | 'recall', now: string): KdsLine | null {
  const to = step === 'bump' ? nextKds(line.state) : prevKds(line.state)
  if (!to) return null
  const timeline = { ...line.timeline, [`${to}_at`]: now }
  if (step === 'recall') delete timeline[`${line.state}_at`]
  return { ...line, state: to, timeline }
}

/** Order types whose "served" means handed to the guest by the kitchen side (at a table, to a room). */
const SERVED_IS_DELIVERED: ReadonlySet<string> = new Set(['on-table', 'room_service'])

/**
 * The status rule (docs/kds.md): from the items' states,
 * - every item queued                    → `new`
 * - some item started, not all ready     → `preparing`
 * - every item ready or served           → `ready`
 * - every item served                    → `delivered` for on-table and room-service orders
 *                                          (served at the table), `ready` for the others (the hand-
 *                                          over to the guest or driver is recorded by the counter).
 * An order without items keeps its status.
 */
export function kitchenStatusFor(type: string, states: readonly KdsState[], current: KitchenStatus): KitchenStatus {
  if (states.length === 0) return current
  const rank = (s: KdsState) => KDS_FLOW.indexOf(s)
  const min = Math.min(...states.map(rank))
  const max = Math.max(...states.map(rank))
  if (max === 0) return 'new'
  if (min < 2) return 'preparing'
  if (min === 3 && SERVED_IS_DELIVERED.has(type)) return 'delivered'
  return 'ready'
}

/** A line as the order actor keeps it, from its stored row (with its card when the row has the card's columns). */
export function kdsLineOf(r: { id: number; station: string | null; kds_state: string; kds_timeline: string; item_id?: number; name?: string; variant_id?: number | null; variant_name?: string | null; quantity?: number; extras?: string; note?: string | null }): KdsLine {
  const line: KdsLine = { id: r.id, station: r.station, state: r.kds_state as KdsState, timeline: JSON.parse(r.kds_timeline) as Record<string, string> }
  if (r.name !== undefined && r.item_id !== undefined && r.quantity !== undefined && r.extras !== undefined) {
    line.card = { item_id: r.item_id, name: r.name, variation: r.variant_id == null ? null : r.variant_name ?? null, quantity: r.quantity, extras: (JSON.parse(r.extras) as Array<{ name: string }>).map((e) => e.name), note: r.note ?? null }
  }
  return line
}

/** The card head of a stored order row (undefined when the order is gone). */
export const kdsHeadOf = (r: KdsHead | undefined): KdsHead | undefined =>
  r && { type: r.type, table_number: r.table_number, customer_name: r.customer_name, note: r.note, created_at: r.created_at }

/**
 * The kitchen view of an order from the actor's memory (state, card head, lines with cards), the
 * same fields `orderView` gives a kitchen card; null when some line has no card (then the caller
 * reads the order as stored).
 */
export function kdsViewOf(o: { id: number; storeId: number; status: string }, head: KdsHead, lines: readonly KdsLine[]): KdsViewOrder | null {
  const items: KdsViewLine[] = []
  for (const l of lines) {
    const c = l.card
    if (!c) return null
    items.push({
      id: l.id, item_id: c.item_id, name: c.name, variation: c.variation === null ? null : { name: c.variation }, quantity: c.quantity,
      extras: c.extras.map((name) => ({ name })), note: c.note, station: l.station, kds_state: l.state, kds_timeline: l.timeline,
    })
  }
  return { id: o.id, restaurant_id: o.storeId, ...head, status: o.status, items }
}

/** Lines of `next` that changed since `prev` (the reducer replaces changed lines, keeps the rest). */
export function changedKdsLines(prev: readonly KdsLine[] | undefined, next: readonly KdsLine[] | undefined): KdsLine[] {
  if (!next || next === prev) return []
  const before = new Set(prev ?? [])
  return next.filter((l) => !before.has(l))
}

/** A line as the order view shows it (api-v1 §2.4 output): everything a kitchen card needs. */
export interface KdsViewLine {
  id: number
  item_id: number
  name: string
  variation: { name: string | null } | null
  quantity: number
  extras: ReadonlyArray<{ name: string }>
  note: string | null
  station: string | null
  kds_state: string
  kds_timeline: Record<string, string>
}

/** The order view the actor has just built for its reply, reused so screens need no extra read. */
export interface KdsViewOrder extends KdsHead {
  id: number
  restaurant_id: number
  status: string
  items: readonly KdsViewLine[]
}

/**
 * What the order actor tells kitchen screens once a bump or recall is durable (wired in app.ts to
 * src/ws/kds.ts; actors never import a front door).
 */
export interface KdsSink {
  itemsChanged(order: KdsViewOrder, lineIds: readonly number[]): void
  /** The order's status changed (committed): status frames, and its card again when a closed order reopens. */
  statusChanged(storeId: number, orderId: number, status: string, previous: string): void
  /** A staff token was revoked (logout): its kitchen sockets close. */
  tokenRevoked(tokenId: number): void
}

export const noKds: KdsSink = { itemsChanged() {}, statusChanged() {}, tokenRevoked() {} }
