/**
 * Guests and segments (issue 17 item 5; api-v1 §2.7, §4.2; docs/operations.md "Guests and
 * segments"): one guest per person across orders, reservations and the customer app, with visits,
 * spend, first and last visit, no-shows, and the documented segments computed from the data.
 * Owner (`customers:read`) and staff (`customers`) alike, on plans with the CRM feature. The merge
 * rule and the query are in src/storage/guests.ts, the segment definitions in src/domain/guests.ts.
 * The reads run in a worker thread (svc.guests, src/storage/guests-reader.ts): a big store's
 * aggregate must not stall the event loop every other store shares.
 */
import * as v from 'valibot'
import { defineOp, type Access } from '../op.ts'
import { storeOf } from '../scope.ts'
import { PageQuery, PaginatedSchema, pageOf, paginate } from '../schemas/common.ts'
import { named } from '../schemas/named.ts'
import { notFound } from '../../errors.ts'
import { fromCents } from '../../domain/money.ts'
import { SEGMENT_DEFINITIONS, SEGMENT_KEYS, SEGMENT_RULES, segmentClock, segmentsOf } from '../../domain/guests.ts'
import { nowIso } from '../../storage/db.ts'
import { GUEST_SORTS, type GuestRow } from '../../storage/guests.ts'

const tag = 'Guests'
const access: Access = { owner: 'customers:read', staff: 'customers' }
const PER_PAGE = 30
const RECENT = 10
const RULES = { regularVisits: SEGMENT_RULES.regularVisits, vipPercent: SEGMENT_RULES.vipTopPercent, lapsedMinVisits: SEGMENT_RULES.lapsedMinVisits, noShows: SEGMENT_RULES.noShows }

const segmentEnum = { type: 'string', enum: [...SEGMENT_KEYS] }
const GuestSchema = named('Guest', {
  type: 'object',
  required: ['id', 'customer_id', 'name', 'phone', 'email', 'visits', 'spend', 'currency', 'first_visit', 'last_visit', 'no_shows', 'segments'],
  properties: {
    id: { type: 'string', description: '`c<customer id>` for a customer account; `p…` (phone-only) or `e…` (email-only) guests have an opaque stable id' },
    customer_id: { type: ['integer', 'null'] },
    name: { type: ['string', 'null'], description: 'The account\'s name, else the latest name given on an order or reservation' },
    phone: { type: ['string', 'null'], description: 'Normalised (`+15550001111`)' },
    email: { type: ['string', 'null'] },
    visits: { type: 'integer', description: 'Orders not cancelled, plus reservations seated or completed that opened no order' },
    spend: { type: 'number', description: 'Money taken on the guest\'s orders net of refunds, in the store currency' },
    currency: { type: 'string' },
    first_visit: { type: ['string', 'null'], format: 'date-time' },
    last_visit: { type: ['string', 'null'], format: 'date-time' },
    no_shows: { type: 'integer' },
    segments: { type: 'array', items: segmentEnum },
  },
})
const TouchSchema = {
  type: 'object', required: ['id', 'status', 'at'],
  properties: { id: { type: 'integer' }, status: { type: 'string' }, at: { type: 'string', format: 'date-time' }, total: { type: 'number' }, party_size: { type: 'integer' } },
}
const GuestDetailSchema = {
  ...GuestSchema,
  required: [...GuestSchema.required, 'recent_orders', 'recent_reservations'],
  properties: { ...GuestSchema.properties, recent_orders: { type: 'array', items: TouchSchema }, recent_reservations: { type: 'array', items: TouchSchema } },
}

/** The figures at this moment; `now` is read once per request so every row is judged alike. */
const context = () => {
  const now = Date.now()
  return { now, clock: segmentClock(now, nowIso) }
}

const guestView = (g: GuestRow, currency: string, now: number) => ({
  id: g.id, customer_id: g.customer_id, name: g.name, phone: g.phone, email: g.email,
  visits: g.visits, spend: fromCents(g.spend), currency,
  first_visit: g.first_visit, last_visit: g.last_visit, no_shows: g.no_shows,
  segments: segmentsOf(g, now, g.spenders),
})

export const listGuests = defineOp({
  id: 'guests.list', feature: 'crm', tag, access, scope: ['store'],
  input: v.object({
    ...PageQuery.entries,
    search: v.optional(v.pipe(v.string(), v.maxLength(100))),
    sort: v.optional(v.picklist(GUEST_SORTS), 'last_visit'),
    segment: v.optional(v.picklist(SEGMENT_KEYS)),
  }),
  output: PaginatedSchema(GuestSchema),
  summary: 'The store\'s guests: one per person across orders, reservations and customer accounts (30 per page)',
  description: '`search` matches a part of the name, email or phone (a phone may be typed with spaces or brackets); `sort` is `last_visit` (default, latest first), `spend`, `visits` (highest first) or `name`; `segment` keeps the guests of one segment (`GET …/guests/segments`). Guests are matched by customer account, else normalised phone, else email (docs/operations.md "Guests and segments").',
  run: async (ctx, input) => {
    const store = storeOf(ctx)
    const { now, clock } = context()
    const page = pageOf(input)
    const query = { search: input.search, segment: input.segment, sort: input.sort, limit: PER_PAGE, offset: (page - 1) * PER_PAGE }
    const { rows, total } = await ctx.svc.guests.read({ kind: 'page', storeId: store.id, params: { clock, rules: RULES, query } })
    return paginate(rows.map((g) => guestView(g, store.currency, now)), page, PER_PAGE, total)
  },
})

export const getGuest = defineOp({
  id: 'guests.get', feature: 'crm', tag, access, scope: ['store'],
  input: v.object({ guest_id: v.pipe(v.string(), v.regex(/^(c[1-9]\d{0,15}|[pe][\w-]{16})$/, 'Not a guest id.')) }),
  output: GuestDetailSchema,
  summary: 'One guest with their figures and latest orders and reservations',
  description: `The guest as the list shows it, plus the latest ${RECENT} orders and ${RECENT} reservations (newest first). A guest of another store: 404.`,
  run: async (ctx, { guest_id }) => {
    const store = storeOf(ctx)
    const { now, clock } = context()
    const found = await ctx.svc.guests.read({ kind: 'get', storeId: store.id, params: { clock, rules: RULES, id: guest_id, recent: RECENT } })
    if (!found) throw notFound('guest')
    const { guest: g, touches } = found
    return {
      ...guestView(g, store.currency, now),
      recent_orders: touches.filter((x) => x.kind === 'order').map((x) => ({ id: x.id, status: x.status, at: x.at, total: fromCents(x.total) })),
      recent_reservations: touches.filter((x) => x.kind === 'reservation').map((x) => ({ id: x.id, status: x.status, at: x.at, party_size: x.party_size })),
    }
  },
})

const SegmentsSchema = {
  type: 'object', required: ['guests', 'segments'],
  properties: {
    guests: { type: 'integer', description: 'All guests of the store' },
    segments: { type: 'array', items: { type: 'object', required: ['key', 'definition', 'count'], properties: { key: segmentEnum, definition: { type: 'string' }, count: { type: 'integer' } } } },
  },
}

export const guestSegments = defineOp({
  id: 'guests.segments', feature: 'crm', tag, access, scope: ['store'], output: SegmentsSchema,
  summary: 'The guest segments with their definitions and how many guests each has now',
  description: 'Computed from the orders, reservations and accounts at the moment of the request, never stored; a guest may be in several segments. `GET …/guests?segment=<key>` lists a segment\'s guests.',
  run: async (ctx) => {
    const store = storeOf(ctx)
    const { clock } = context()
    const { guests: total, counts } = await ctx.svc.guests.read({ kind: 'segments', storeId: store.id, params: { clock, rules: RULES } })
    return { guests: total, segments: SEGMENT_KEYS.map((key) => ({ key, definition: SEGMENT_DEFINITIONS[key], count: counts[key] })) }
  },
})

export const guestOps = [listGuests, guestSegments, getGuest]
