/**
 * Request and response schemas of the driver and delivery routes (api-v1 §2.7, §4.2, §4.6). The
 * listed-only driver endpoints' payloads are this server's design, documented in docs/drivers.md.
 * Phones are normalised by the operations (src/ops/delivery/delivery-views.ts `phoneOf`).
 */
import * as v from 'valibot'
import { Id, Nullable } from './common.ts'
import { OrderSchema, envelopeOf, named } from './named.ts'
import { DELIVERY_STATUSES, KITCHEN_STATUSES } from '../../domain/order-state.ts'
import { DRIVER_TARGETS, EARNING_PERIODS, OFFER_STATUSES, OFFER_TTL, POD_CODE_DIGITS } from '../../domain/delivery.ts'
import { AnalyticsQuery } from '../orders/analytics-query.ts'
import { WEB_TOKEN_HINT, webTokenIsSubscription } from '../../providers/web-subscription.ts'

// ---- requests ---------------------------------------------------------------------------------

const Name = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(120))
/** Normalised by the operation (domain/delivery.ts `normalizePhone`). */
export const Phone = v.pipe(v.string(), v.regex(/^\+?[\d\s().-]{6,24}$/, 'Use a phone number such as +15550100200.'))
const Lat = v.pipe(v.number(), v.minValue(-90), v.maxValue(90))
const Lng = v.pipe(v.number(), v.minValue(-180), v.maxValue(180))

export const DriverCreate = v.object({ name: Name, phone: Phone, restaurant_id: Nullable(Id) })
export const DriverUpdate = v.object({ name: v.optional(Name), phone: v.optional(Phone), restaurant_id: Nullable(Id) })
export const DriverListQuery = v.object({
  page: v.optional(v.pipe(v.string(), v.regex(/^[1-9]\d{0,6}$/, 'page must be a positive integer'))),
  restaurant_id: v.optional(v.pipe(v.string(), v.regex(/^[1-9]\d{0,15}$/, 'restaurant_id must be a positive integer'))),
})

export const AssignBody = v.object({ driver_id: Id })
export const DeliveryStatusBody = v.object({ delivery_status: v.picklist(DELIVERY_STATUSES), note: Nullable(v.pipe(v.string(), v.maxLength(500))) })
export const DeliveriesQuery = v.object({
  page: v.optional(v.pipe(v.string(), v.regex(/^[1-9]\d{0,6}$/, 'page must be a positive integer'))),
  delivery_status: v.optional(v.picklist(DELIVERY_STATUSES)),
  driver_id: v.optional(v.pipe(v.string(), v.regex(/^[1-9]\d{0,15}$/, 'driver_id must be a positive integer'))),
})
export const OfferCreate = v.optional(v.object({
  driver_ids: v.optional(v.pipe(v.array(Id), v.minLength(1), v.maxLength(50))),
  expires_in: v.optional(v.pipe(v.number(), v.integer(), v.minValue(OFFER_TTL.min), v.maxValue(OFFER_TTL.max))),
}))

export const DriverStatusBody = v.object({ delivery_status: v.picklist(DRIVER_TARGETS), note: Nullable(v.pipe(v.string(), v.maxLength(500))) })
export const LocationBody = v.object({ lat: Lat, lng: Lng })
export const ActiveQuery = v.object({
  page: v.optional(v.pipe(v.string(), v.regex(/^[1-9]\d{0,6}$/, 'page must be a positive integer'))),
  active: v.optional(v.picklist(['0', '1', 'true', 'false'])),
})
export const PodCodeBody = v.object({ code: v.pipe(v.string(), v.regex(new RegExp(`^\\d{${POD_CODE_DIGITS}}$`), `The code has ${POD_CODE_DIGITS} digits.`)) })
export const PodPhotoBody = v.object({
  /** Base64, or a `data:image/…;base64,` URL. */
  image: v.pipe(v.string(), v.minLength(4)),
  content_type: v.optional(v.string()),
})
export const LoginRequestBody = v.object({ phone: Phone })
export const LoginVerifyBody = v.object({
  phone: Phone,
  code: v.pipe(v.string(), v.regex(/^\d{6}$/, 'The code has 6 digits.')),
  driver_id: v.optional(Id),
  device: v.optional(v.pipe(v.string(), v.maxLength(120))),
})
// A browser registers its PushSubscription JSON as the token (docs/providers.md "Registering a browser").
export const PushRegisterBody = v.pipe(
  v.object({
    device_token: v.pipe(v.string(), v.minLength(8), v.maxLength(4096)),
    platform: v.picklist(['ios', 'android', 'web']),
  }),
  v.forward(v.partialCheck([['device_token'], ['platform']], webTokenIsSubscription, WEB_TOKEN_HINT), ['device_token']),
)
export const PushUnregisterBody = v.object({ device_token: v.pipe(v.string(), v.minLength(1), v.maxLength(4096)) })
export const ShiftBody = v.object({ action: v.picklist(['start', 'end']) })
/** Earnings: the analytics date range plus the grouping period. */
export const EarningsQuery = v.object({ ...AnalyticsQuery.entries, period: v.optional(v.picklist(EARNING_PERIODS, 'Use day, week or month.')) })

// ---- responses (JSON Schema, for OpenAPI) ------------------------------------------------------

const str = { type: 'string' }
const int = { type: 'integer' }
const num = { type: 'number' }
const bool = { type: 'boolean' }
const dateTime = { type: 'string', format: 'date-time' }
const nullable = (s: Record<string, unknown>) => ({ anyOf: [s, { type: 'null' }] })
const obj = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({ type: 'object', required, properties })
const arr = (items: Record<string, unknown>) => ({ type: 'array', items })

export const LocationSchema = obj({ lat: num, lng: num, location_updated_at: dateTime })
named('DriverLocation', LocationSchema)

export const DriverSchema = obj(
  {
    id: int, name: str, phone: str, restaurant_id: nullable(int), on_shift: bool, location: nullable(LocationSchema), created_at: dateTime,
    connected: { type: 'boolean', description: 'An app socket is open now.' },
    active_deliveries: { ...arr(int), description: 'Orders assigned, picked up or out for delivery.' },
  },
  ['id', 'name', 'phone', 'restaurant_id', 'on_shift', 'location', 'created_at'],
)
named('Driver', DriverSchema)
export const DriverWithTokenSchema = {
  ...DriverSchema,
  required: [...DriverSchema.required, 'token'],
  properties: { ...DriverSchema.properties, token: { type: 'string', description: 'The raw driver token, shown only in this response.' } },
}
named('DriverWithToken', DriverWithTokenSchema)

const PhotoSchema = obj({ type: str, bytes: int, uploaded_at: dateTime, url: { type: 'string', format: 'uri' } }, ['type', 'bytes', 'uploaded_at'])
export const ProofSchema = obj({ code_verified_at: nullable(dateTime), code_attempts: int, photo: nullable(PhotoSchema) })
named('DeliveryProof', ProofSchema)

export const OwnerDeliverySchema = {
  ...OrderSchema,
  required: [...OrderSchema.required, 'delivery'],
  properties: { ...OrderSchema.properties, delivery: obj({ fee: num, note: nullable(str), proof: ProofSchema }) },
}
named('Delivery', OwnerDeliverySchema)

export const DriverDeliverySchema = obj({
  id: { type: 'integer', description: 'The order id.' },
  restaurant: obj({ id: int, title: str }),
  status: { type: 'string', enum: [...KITCHEN_STATUSES] },
  delivery_status: nullable({ type: 'string', enum: [...DELIVERY_STATUSES] }),
  customer_name: nullable(str), phone: nullable(str), address: nullable(str),
  delivery_notes: { ...nullable(str), description: 'Notes for the driver from the customer (gate code, floor, where to leave it)' }, note: nullable(str),
  items: arr(obj({ name: str, quantity: int })),
  total: num, is_paid: bool, tip_amount: num, fee: { type: 'number', description: 'What the driver earns for this delivery.' },
  timeline: { type: 'object', additionalProperties: str }, proof: ProofSchema, created_at: dateTime, updated_at: dateTime,
})
named('DriverDelivery', DriverDeliverySchema)

/** A stop of the driver's route (docs/dispatch.md "Batching"). */
export const RouteStopSchema = named('RouteStop', obj({
  type: { type: 'string', enum: ['pickup', 'dropoff'], description: '`pickup` at the store, `dropoff` at the customer' },
  order_id: int, restaurant_id: int,
  address: { ...nullable(str), description: 'The store\'s address for a pickup, the order\'s for a drop-off' },
  lat: nullable(num), lng: nullable(num),
  travel_s: { ...nullable(int), description: 'Seconds from the driver\'s last position to this stop along the route (the router\'s times); null for a stop without a position, listed last' },
}))

/** The driver's deliveries page with the route through the active ones. */
export const DriverDeliveriesSchema = named('DriverDeliveryPage', {
  type: 'object',
  required: ['data', 'current_page', 'last_page', 'per_page', 'total', 'stops'],
  properties: {
    data: { type: 'array', items: DriverDeliverySchema },
    current_page: int, last_page: int, per_page: int, total: int,
    stops: { type: 'array', items: RouteStopSchema, description: 'Every active delivery\'s pickup (until picked up) and drop-off, in visiting order: the route from the driver\'s last position, planned as the dispatcher plans batches (docs/dispatch.md "Batching"); whatever the page and `active` filter' },
  },
})

export const OfferSchema = obj({
  id: int, order_id: int, restaurant: obj({ id: int, title: str }), address: nullable(str), total: nullable(num), tip_amount: nullable(num), fee: num,
  status: { type: 'string', enum: [...OFFER_STATUSES] }, expires_at: dateTime, expires_in: { type: 'integer', description: 'Seconds left.' }, created_at: dateTime,
})
named('DeliveryOffer', OfferSchema)

/** Named `<Item>List` in OpenAPI when the item is named. */
export const ListOf = (item: Record<string, unknown>) => envelopeOf(item, 'List', obj({ data: arr(item) }))

export const ShiftSchema = obj({ on_shift: bool, shift: nullable(obj({ id: int, started_at: dateTime, ended_at: nullable(dateTime) })) })

export const EarningsSchema = obj({
  range: obj({ from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' } }),
  period: { type: 'string', enum: ['day', 'week', 'month'] },
  deliveries: int, fees: num, tips: num, total: num,
  periods: arr(obj({ start: { type: 'string', format: 'date', description: 'First day of the period.' }, deliveries: int, fees: num, tips: num, total: num })),
  days: arr(obj({ date: { type: 'string', format: 'date' }, deliveries: int, fees: num, tips: num, total: num })),
})

export const LoginRequestSchema = obj({ sent: { type: 'boolean', description: 'Always true: the answer never tells whether the phone is known.' }, expires_in: int })
export const LoginVerifySchema = obj({ token: str, driver: DriverSchema })
export const PushDeviceSchema = obj({ device_token: str, platform: str, registered: bool })
export const PushUnregisterSchema = obj({ unregistered: bool })
export const LocationAckSchema = LocationSchema
export const OfferCreatedSchema = obj({ data: arr(OfferSchema), skipped: arr(obj({ driver_id: int, reason: str })) })
