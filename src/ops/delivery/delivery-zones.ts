/**
 * Delivery zones of a store (issue 37 item 1; docs/dispatch.md "Zones"): one operation each for
 * reading and replacing them, bound for owners (REST, admin MCP) and for managers on the staff app.
 * The zones live in the store's settings (`delivery_zones`) and are written through the store
 * actor, which prices every delivery order against the zones it holds.
 */
import * as v from 'valibot'
import { defineOp, type OpCtx } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Money } from '../schemas/common.ts'
import { named } from '../schemas/named.ts'
import { ApiError } from '../../errors.ts'
import { fromCents, toCents } from '../../domain/money.ts'
import { isoInZone, timeZoneOf } from '../../domain/business-hours.ts'
import { polygonProblem, zonesOf, ZONE_LIMITS, type StoredZone } from '../../domain/zones.ts'
import { parseSettings, type StoreRow } from '../../storage/stores.ts'
import { etaFor, storePosition, zoneFor } from '../../actors/store-delivery.ts'
import type { Services } from '../../services.ts'
import type { Travel } from '../../providers/router.ts'
import type { LatLng } from '../../domain/eta.ts'

const tag = 'Restaurants'

const Lat = v.pipe(v.number(), v.minValue(-90), v.maxValue(90))
const Lng = v.pipe(v.number(), v.minValue(-180), v.maxValue(180))
const Ring = v.pipe(v.array(v.tuple([v.number(), v.number()])), v.maxLength(ZONE_LIMITS.vertices, `At most ${ZONE_LIMITS.vertices} positions per ring.`))
const Polygon = v.pipe(
  v.array(Ring), v.minLength(1, 'A polygon needs its outer ring.'), v.maxLength(ZONE_LIMITS.rings, `At most ${ZONE_LIMITS.rings} rings (the outer one and its holes).`),
  v.check((p) => polygonProblem(p) === null, (issue) => polygonProblem(issue.input as number[][][]) ?? 'Not a polygon.'),
  v.description('A GeoJSON Polygon\'s `coordinates`: closed rings of [lng, lat] positions, the outer ring first, holes after.'),
)
const ZoneInput = v.pipe(
  v.strictObject({
    name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(80)),
    polygon: v.optional(Polygon),
    center: v.optional(v.strictObject({ lat: Lat, lng: Lng })),
    radius_m: v.optional(v.pipe(v.number(), v.minValue(1), v.maxValue(ZONE_LIMITS.radiusM))),
    fee: Money,
    min_order: v.optional(Money),
  }),
  v.check((z) => (z.polygon !== undefined) !== (z.center !== undefined || z.radius_m !== undefined),
    'Give either `polygon`, or `center` and `radius_m`.'),
  v.check((z) => z.polygon !== undefined || (z.center !== undefined && z.radius_m !== undefined), 'A circle needs both `center` and `radius_m`.'),
)
const ZonesBody = v.object({
  zones: v.pipe(v.array(ZoneInput), v.maxLength(ZONE_LIMITS.zones, `At most ${ZONE_LIMITS.zones} zones.`),
    v.description('The store\'s zones, replacing all of them; [] removes them (any address is delivered to, without a fee).')),
})

const ZoneSchema = named('DeliveryZone', {
  type: 'object', required: ['name', 'fee', 'min_order'],
  properties: {
    name: { type: 'string' },
    polygon: { type: 'array', items: { type: 'array', items: { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 } }, description: 'GeoJSON Polygon coordinates ([lng, lat]); absent for a circle' },
    center: { type: 'object', required: ['lat', 'lng'], properties: { lat: { type: 'number' }, lng: { type: 'number' } }, description: 'A circle\'s center; absent for a polygon' },
    radius_m: { type: 'number', description: 'A circle\'s radius in metres' },
    fee: { type: 'number', description: 'Delivery fee of an order in this zone, added to its total' },
    min_order: { type: 'number', description: 'Smallest subtotal (after discounts) delivered to this zone; 0 = none' },
  },
})
export const DeliveryZonesSchema = named('DeliveryZones', {
  type: 'object', required: ['restaurant_id', 'zones'],
  properties: { restaurant_id: { type: 'integer' }, zones: { type: 'array', items: ZoneSchema } },
})

/** The zones as the API shows them (money as decimals). */
export function zonesView(store: StoreRow) {
  const zones = zonesOf(parseSettings(store.settings)).map((z) => Object.assign(
    { name: z.name },
    z.polygon ? { polygon: z.polygon } : { center: z.center, radius_m: z.radius_m },
    { fee: fromCents(z.fee), min_order: fromCents(z.min_order) },
  ))
  return { restaurant_id: store.id, zones }
}

/** Staff: managers only (zones set what customers pay). */
function managersOnly(ctx: OpCtx): void {
  if (ctx.principal?.kind === 'staff' && ctx.principal.role !== 'manager') throw new ApiError('forbidden', 'Only a manager can see or change delivery zones.')
}

const rules = 'A delivery order needs `lat` and `lng` once zones are set; outside every zone it is 422 (`errors.address`), under the zone\'s `min_order` 422 (`errors.items`); the zone\'s `fee` becomes the order\'s `delivery_fee`, part of `total`. Overlapping zones: the cheapest containing the point, the first listed among equals. Docs: docs/dispatch.md.'

export const getDeliveryZones = defineOp({
  id: 'stores.delivery_zones.get', tag, summary: 'The store\'s delivery zones',
  description: `Polygons or circles, each with a fee and a minimum order. ${rules} Staff: managers only.`,
  access: { owner: 'restaurants:read', staff: 'any' }, scope: ['store'], output: DeliveryZonesSchema,
  run: (ctx) => {
    managersOnly(ctx)
    return zonesView(storeOf(ctx))
  },
})

export const setDeliveryZones = defineOp({
  id: 'stores.delivery_zones.set', tag, summary: 'Replace the store\'s delivery zones',
  description: `Body \`{zones: [{name, polygon | center + radius_m, fee, min_order?}]}\` (at most ${ZONE_LIMITS.zones}); \`polygon\` is a GeoJSON Polygon's \`coordinates\` (\`[[[lng, lat], …]]\`, closed rings), a circle is \`{center: {lat, lng}, radius_m}\`. Invalid input: 422 and nothing changes. ${rules} Staff: managers only.`,
  access: { owner: 'restaurants:write', staff: 'any' }, scope: ['store'], input: ZonesBody, output: DeliveryZonesSchema,
  run: async (ctx, { zones }) => {
    managersOnly(ctx)
    const stored: StoredZone[] = zones.map((z) => Object.assign(
      { name: z.name },
      z.polygon ? { polygon: z.polygon } : { center: z.center!, radius_m: z.radius_m! },
      { fee: toCents(z.fee), min_order: toCents(z.min_order ?? 0) },
    ))
    const storeId = storeOf(ctx).id
    const row = await ctx.svc.actors.stores.ask<StoreRow>(storeId, (replyTo) => ({ type: 'settings_write', patch: { delivery_zones: stored.length > 0 ? stored : null }, replyTo }))
    return zonesView(row)
  },
})


// ---- quotes ------------------------------------------------------------------------------------------

const QuoteBody = v.object({ lat: Lat, lng: Lng })
const Instant = { type: 'string', format: 'date-time' }
export const DeliveryQuoteSchema = named('DeliveryQuote', {
  type: 'object', required: ['deliverable', 'zone', 'fee', 'min_order', 'eta'],
  properties: {
    deliverable: { type: 'boolean', description: 'Would a delivery order to this point be accepted (given enough goods for `min_order`)?' },
    zone: { type: ['string', 'null'], description: 'The zone that would price it (the cheapest containing the point); null without zones or when not deliverable' },
    fee: { type: ['number', 'null'], description: 'The delivery fee; 0 without zones; null when not deliverable' },
    min_order: { type: ['number', 'null'], description: 'The smallest subtotal (after discounts) delivered there; null when not deliverable' },
    eta: {
      type: ['object', 'null'], required: ['ready_at', 'pickup_at', 'dropoff_at'], description: 'What an order placed now would be promised; null when not deliverable',
      properties: { ready_at: Instant, pickup_at: Instant, dropoff_at: Instant },
    },
    router: {
      type: ['object', 'null'], required: ['source', 'fallback'], description: 'What timed the ride from the store (docs/dispatch.md "Router"); null when the store has no location or the point is not deliverable',
      properties: { source: { type: 'string', enum: ['straight', 'osrm'] }, fallback: { type: ['string', 'null'], description: 'Why the straight line answered instead of OSRM (unreachable, timed out, …)' } },
    },
    reason: { type: 'string', enum: ['outside_delivery_zone'], description: 'Why not deliverable' },
  },
})

/** The quote of a delivery to `point` placed at `nowMs`: the zone, fee and minimum an order would get, its estimate, and the router that timed the ride. */
export async function quoteDelivery(svc: Pick<Services, 'router'>, store: StoreRow, point: LatLng, nowMs: number) {
  const from = storePosition(parseSettings(store.settings))
  return quoteWith(store, point, nowMs, from ? await svc.router.ride(from, point) : null)
}

/** The quote with the ride already timed (`ride` null: the straight line, or 0 without the store's location). */
function quoteWith(store: StoreRow, point: LatLng, nowMs: number, ride: Travel | null) {
  const settings = parseSettings(store.settings)
  // A quote has no goods yet: the minimum is reported, not checked.
  const d = zoneFor(settings, store.currency, point, Number.MAX_SAFE_INTEGER)
  if (!d.ok) return { deliverable: false, zone: null, fee: null, min_order: null, eta: null, router: null, reason: 'outside_delivery_zone' as const }
  return {
    deliverable: true, zone: d.zone?.name ?? null, fee: fromCents(d.zone?.fee ?? 0), min_order: fromCents(d.zone?.min_order ?? 0),
    eta: etaFor(settings, point, nowMs, ride?.seconds[0] ?? null),
    router: ride ? { source: ride.source, fallback: ride.fallback } : null,
  }
}

/**
 * A saved address's delivery as the store website's checkout shows it (Liquid: money in cents):
 * `{deliverable, fee, estimate}` (the estimated drop-off); without a position it is not deliverable
 * once the store has zones, and unknown (null) otherwise.
 */
export function addressDelivery(store: StoreRow, a: { lat: number | null; lng: number | null }, nowMs = Date.now()) {
  if (a.lat == null || a.lng == null) return zonesOf(parseSettings(store.settings)).length > 0 ? { deliverable: false, fee: null, estimate: null } : null
  // Pages are drawn without waiting on the network: the ride by the straight line (an OSRM-timed order may differ a little).
  const q = quoteWith(store, { lat: a.lat, lng: a.lng }, nowMs, null)
  // In the store's time zone, as the site shows `store.next_opening`.
  const estimate = q.eta ? isoInZone(Date.parse(q.eta.dropoff_at), timeZoneOf(parseSettings(store.settings))) : null
  return { deliverable: q.deliverable, fee: q.fee === null ? null : toCents(q.fee), estimate }
}

export const deliveryQuote = defineOp({
  id: 'stores.delivery_quote', tag, summary: 'Quote a delivery to a point: zone, fee, minimum order and estimate',
  description: 'Body `{lat, lng}`. The zone, fee and minimum an order to this point would get, and the estimate (`eta`) it would be promised if placed now (the same rules as the order: docs/dispatch.md "Quotes"). Nothing is written. Outside every zone: `deliverable: false`, `reason: "outside_delivery_zone"`.',
  access: { owner: 'orders:read', customer: true }, scope: ['store'], input: QuoteBody, output: DeliveryQuoteSchema,
  run: (ctx, point) => quoteDelivery(ctx.svc, storeOf(ctx), point, Date.now()),
})

export const deliveryZoneOps = [getDeliveryZones, setDeliveryZones, deliveryQuote]
