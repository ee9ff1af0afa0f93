/**
 * The webhook event catalog (api-v1 §6): every event name, what emits it, and the JSON Schema of
 * its `data`. The single source for subscription validation, docs/webhooks.md and the OpenAPI
 * `webhooks` section. Money is a decimal string, as the spec shows for `order.created`.
 */

type Schema = Record<string, unknown>

const int = { type: 'integer' }
const str = { type: 'string' }
const money = { type: 'string', pattern: '^-?\\d+\\.\\d{2}$', description: 'decimal string, e.g. "12.50"' }
const dateTime = { type: 'string', format: 'date-time' }
const nullable = (s: Schema): Schema => ({ anyOf: [s, { type: 'null' }] })
const obj = (properties: Record<string, Schema>, optional: string[] = []): Schema => ({
  type: 'object',
  required: Object.keys(properties).filter((k) => !optional.includes(k)),
  properties,
})

const KITCHEN = { type: 'string', enum: ['new', 'preparing', 'ready', 'delivered', 'completed', 'cancelled'] }
const orderRef = { order_id: int, restaurant_id: int }
/** Which front door booked (or cancelled) a reservation. */
const BOOKING_SOURCE = { type: 'string', enum: ['owner', 'staff', 'customer'] }
const deliveryData = obj({
  ...orderRef,
  delivery_status: { type: 'string', enum: ['out_for_delivery', 'delivered', 'failed'] },
  driver_id: nullable(int),
  note: nullable({ ...str, description: 'the driver\'s note with the status change, if any' }),
})
const subscriptionData = obj({
  subscription_id: int,
  user_id: int,
  plan_key: str,
  status: str,
  current_period_end: nullable(dateTime),
  previous_plan_key: { ...str, description: 'only on `subscription.plan_changed`' },
  occurred_at: dateTime,
}, ['previous_plan_key'])

export interface EventSpec {
  /** api-v1 §6 "Emitted when". */
  when: string
  /** JSON Schema (2020-12) of the `data` object. */
  data: Schema
  /** An example `data`. */
  example: Record<string, unknown>
  /** False for events of features this server does not have yet: the name and payload are reserved. */
  emitted: boolean
}

const SUBSCRIPTION_EVENTS = ['paused', 'resumed', 'renewed', 'expired', 'plan_changed', 'past_due', 'expiring', 'trial_ending'] as const

export const EVENT_CATALOG: Readonly<Record<string, EventSpec>> = {
  'order.created': {
    when: 'a new order is submitted (dashboard or any API: owner, storefront, customer)',
    data: obj({ ...orderRef, type: str, status: KITCHEN, total: money, delivery_fee: { ...money, description: 'the delivery zone\'s fee, part of `total` ("0.00" without zones or for other types; docs/dispatch.md)' } }),
    example: { order_id: 1042, restaurant_id: 7, type: 'delivery', status: 'new', total: '24.50', delivery_fee: '2.50' },
    emitted: true,
  },
  'order.status_changed': {
    when: 'the kitchen status changes (owner or staff status endpoint, a KDS bump/recall that moves the order, or a delivery move that implies a kitchen status: picked up → `ready`, delivered → `delivered`, docs/orders.md)',
    data: obj({ ...orderRef, status: KITCHEN, previous_status: KITCHEN, source: { type: 'string', enum: ['kds', 'delivery'], description: 'present when a KDS bump or recall (`kds`) or a delivery status (`delivery`) moved the order' } }, ['source']),
    example: { order_id: 1042, restaurant_id: 7, status: 'preparing', previous_status: 'new' },
    emitted: true,
  },
  'order.paid': {
    when: 'an order becomes fully paid: the payment (cash, card, online, by amount or by lines, any route) whose amount first makes the succeeded payments cover the total; an order whose total is zero, as it is placed (after its `order.created`; amounts 0.00, `methods` empty); once per order',
    data: obj({
      ...orderRef, total: money, paid_at: dateTime,
      amount_paid: { ...money, description: 'sum of the succeeded payments (tips excluded); more than `total` only if an online payment settled after the order was already covered' },
      tips: { ...money, description: 'sum of the succeeded payments\' tips, on top of the total' },
      methods: { type: 'array', items: { type: 'string', enum: ['cash', 'card', 'online'] }, description: 'methods of the succeeded payments, first use first' },
    }),
    example: { order_id: 1042, restaurant_id: 7, total: '24.50', paid_at: '2026-11-22T20:30:00.000+00:00', amount_paid: '24.50', tips: '3.00', methods: ['card', 'cash'] },
    emitted: true,
  },
  'order.driver_assigned': {
    when: 'a delivery is assigned a driver (owner assign, a driver claim, or an accepted offer)',
    data: obj({ ...orderRef, driver_id: int }),
    example: { order_id: 1042, restaurant_id: 7, driver_id: 3 },
    emitted: true,
  },
  'order.out_for_delivery': {
    when: 'the driver is on the way (driver app or owner delivery-status override)',
    data: deliveryData,
    example: { order_id: 1042, restaurant_id: 7, delivery_status: 'out_for_delivery', driver_id: 3, note: null },
    emitted: true,
  },
  'order.delivered': {
    when: 'delivery completed (driver app, proof of delivery, or owner override)',
    data: deliveryData,
    example: { order_id: 1042, restaurant_id: 7, delivery_status: 'delivered', driver_id: 3, note: 'Left with the concierge' },
    emitted: true,
  },
  'order.delivery_failed': {
    when: 'delivery could not be completed (driver app or owner override)',
    data: deliveryData,
    example: { order_id: 1042, restaurant_id: 7, delivery_status: 'failed', driver_id: 3, note: 'Nobody home' },
    emitted: true,
  },
  'refund.completed': {
    when: 'an order refund completed',
    // One per refund row: a refund spread over several payments emits one per payment (docs/operations.md "Refunds").
    data: obj({ refund_id: int, ...orderRef, amount: money, method: { type: 'string', enum: ['cash', 'card', 'online'] }, reason: nullable(str), completed_at: dateTime }),
    example: { refund_id: 12, order_id: 1042, restaurant_id: 7, amount: '5.00', method: 'card', reason: 'missing item', completed_at: '2026-11-22T21:00:00.000+00:00' },
    emitted: true,
  },
  'reservation.created': {
    when: 'a table reservation is created',
    data: obj({ reservation_id: int, restaurant_id: int, party_size: int, reserved_for: dateTime, ends_at: dateTime, guest_name: nullable(str), table_id: nullable(int), customer_id: nullable(int), source: BOOKING_SOURCE }),
    example: { reservation_id: 88, restaurant_id: 7, party_size: 4, reserved_for: '2026-11-23T19:30:00.000+00:00', ends_at: '2026-11-23T21:00:00.000+00:00', guest_name: 'Ada', table_id: 3, customer_id: null, source: 'owner' },
    emitted: true,
  },
  'reservation.cancelled': {
    when: 'a table reservation is cancelled',
    data: obj({ reservation_id: int, restaurant_id: int, reserved_for: dateTime, reason: nullable(str), table_id: nullable(int), customer_id: nullable(int), source: { ...BOOKING_SOURCE, description: 'who cancelled it' } }),
    example: { reservation_id: 88, restaurant_id: 7, reserved_for: '2026-11-23T19:30:00.000+00:00', reason: null, table_id: 3, customer_id: null, source: 'customer' },
    emitted: true,
  },
  'customer.created': {
    when: 'a new customer record is created (customer app registration, the first SMS-code sign-in of a phone, or the store adding one to its CRM)',
    data: obj({ customer_id: int, restaurant_id: int, source: { type: 'string', enum: ['register', 'otp', 'crm'], description: '`crm`: added by the owner API or the staff app' } }),
    example: { customer_id: 501, restaurant_id: 7, source: 'register' },
    emitted: true,
  },
  'shift.opened': {
    when: 'a cash-drawer/POS shift is opened',
    // staff_id: who opened it (null: the owner); register: the drawer (docs/operations.md "Cash shifts").
    data: obj({ shift_id: int, restaurant_id: int, register: str, staff_id: nullable(int), opened_at: dateTime, opening_float: money }),
    example: { shift_id: 31, restaurant_id: 7, register: 'main', staff_id: 2, opened_at: '2026-11-22T08:00:00.000+00:00', opening_float: '150.00' },
    emitted: true,
  },
  'shift.closed': {
    when: 'a cash-drawer/POS shift is closed',
    // staff_id: who closed it (null: the owner); closing_total = counted_cash; over_short = counted − expected.
    data: obj({
      shift_id: int, restaurant_id: int, register: str, staff_id: nullable(int), opened_at: dateTime, closed_at: dateTime,
      opening_float: money, closing_total: money, expected_cash: money, counted_cash: money, over_short: money,
    }),
    example: {
      shift_id: 31, restaurant_id: 7, register: 'main', staff_id: 2, opened_at: '2026-11-22T08:00:00.000+00:00', closed_at: '2026-11-22T16:00:00.000+00:00',
      opening_float: '150.00', closing_total: '1320.40', expected_cash: '1321.00', counted_cash: '1320.40', over_short: '-0.60',
    },
    emitted: true,
  },
  'menu.updated': {
    when: 'a menu item, category or variant is created, updated or deleted (owner or staff)',
    data: obj({
      restaurant_id: int,
      change: { type: 'string', enum: ['created', 'updated', 'deleted'] },
      entity: { type: 'string', enum: ['category', 'item', 'variant'] },
      id: int,
    }),
    example: { restaurant_id: 7, change: 'updated', entity: 'item', id: 55 },
    emitted: true,
  },
  'entitlement.changed': {
    when: 'a feature is granted or revoked for the workspace',
    data: obj({ action: { type: 'string', enum: ['granted', 'revoked'] }, feature_key: str, source_type: str, source_id: nullable(int), user_id: int, occurred_at: dateTime }),
    example: { action: 'granted', feature_key: 'crm', source_type: 'subscription', source_id: 9, user_id: 1, occurred_at: '2026-11-22T20:30:00.000+00:00' },
    emitted: true,
  },
  ...Object.fromEntries(SUBSCRIPTION_EVENTS.map((s) => [`subscription.${s}`, {
    when: `subscription lifecycle: ${s.replace('_', ' ')} (wildcard \`subscription.*\`)`,
    data: subscriptionData,
    example: { subscription_id: 9, user_id: 1, plan_key: 'growth', status: s === 'expired' ? 'expired' : 'active', current_period_end: '2026-12-22T00:00:00.000+00:00', occurred_at: '2026-11-22T20:30:00.000+00:00' },
    // Emitted by the billing run and the owner's subscription actions (docs/billing.md "Subscriptions").
    emitted: true,
  } satisfies EventSpec])),
  'app.uninstalled': {
    when: 'a marketplace app is uninstalled; delivered to that app\'s endpoint',
    data: obj({ app_id: int, installation_id: int, user_id: int, uninstalled_at: dateTime }),
    example: { app_id: 4, installation_id: 17, user_id: 1, uninstalled_at: '2026-11-22T20:30:00.000+00:00' },
    // Sent to the app's own webhook URL only (src/ops/apps/app-uninstall.ts), never through the accounts'
    // endpoints: `emitted` is about those (test/webhooks-events.test.ts sees every emitted event there).
    emitted: false,
  },
  ping: {
    when: 'sent by the test action (`POST /webhook-endpoints/{id}/ping`) to that endpoint only, whatever its event filter',
    data: obj({ endpoint_id: int, message: str }),
    example: { endpoint_id: 5, message: 'Test event from the dispatch server.' },
    emitted: true,
  },
}

export const EVENT_NAMES: readonly string[] = Object.keys(EVENT_CATALOG)

const familyOf = (name: string): string | null => (name.includes('.') ? name.slice(0, name.indexOf('.')) : null)

/** Families that have a `<family>.*` wildcard (api-v1 §6 shows `subscription.*`). */
export const EVENT_FAMILIES: readonly string[] = [...new Set(EVENT_NAMES.map(familyOf).filter((f): f is string => f !== null))]

/** Is `p` a valid subscription entry: an event name, `*`, or `<family>.*`? */
export function isEventPattern(p: string): boolean {
  if (p === '*' || Object.hasOwn(EVENT_CATALOG, p)) return true
  return p.endsWith('.*') && EVENT_FAMILIES.includes(p.slice(0, -2))
}

/** Does an endpoint subscribed to `patterns` receive `event`? (`ping` is sent directly, never matched.) */
export function subscribes(patterns: ReadonlySet<string> | readonly string[], event: string): boolean {
  if (event === 'ping') return false
  const has = (x: string) => ('has' in patterns ? patterns.has(x) : patterns.includes(x))
  if (has('*') || has(event)) return true
  const family = familyOf(event)
  return family !== null && has(`${family}.*`)
}
