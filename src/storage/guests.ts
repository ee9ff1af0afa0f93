/**
 * Guests in SQLite (issue 17 item 5; docs/operations.md "Guests and segments"): one guest per person
 * across orders, reservations and the customer app, computed by one aggregate query per request
 * from the rows themselves (no guest table, nothing to keep in sync).
 *
 * The merge rule: every touch (an order or a reservation) belongs to
 *   1. its customer account (`customer_id`), else
 *   2. the account that owns its normalised phone: the store's oldest customer with that phone, else
 *      the customer of the earliest linked touch that carried it, else
 *   3. the account that owns its (lowercased) email, the same way, else
 *   4. the phone-only guest of its phone, else the email-only guest of its email.
 * A touch with none of these (a walk-in without contact) is nobody's. Every customer record is a
 * guest, with or without visits.
 */
import { createHash } from 'node:crypto'
import type { Db } from './db.ts'
import { SEGMENT_KEYS, type GuestFigures, type SegmentKey } from '../domain/guests.ts'
import { normalizePhone } from '../domain/delivery.ts'

/** A guest's figures as the query returns them; money in cents, times ISO 8601. */
export interface GuestRow extends GuestFigures {
  /** Internal: the merge key (`c<id>`, `p<phone>`, `e<email>`); never shown, it may hold a phone or email. */
  gkey: string
  /** Public and stable: `c<customer id>`, or `p`/`e` and a hash. */
  id: string
  customer_id: number | null
  name: string | null
  phone: string | null
  email: string | null
  /** The store's guests with spend > 0 (for the VIP cutoff). */
  spenders: number
}
export interface GuestClock { newSince: string; recentSince: string; lapsedBefore: string }
export interface GuestQuery {
  search?: string
  segment?: SegmentKey
  sort: GuestSort
  limit: number
  offset: number
}
export const GUEST_SORTS = ['last_visit', 'spend', 'visits', 'name'] as const
export type GuestSort = (typeof GUEST_SORTS)[number]
/** One of a guest's latest orders or reservations (detail view). */
export interface GuestTouchRow { kind: 'order' | 'reservation'; id: number; status: string; at: string; total: number; party_size: number | null }

/** Names (and the latest of them) sort by the time they were recorded: a fixed-width prefix. */
const stamped = (time: string, value: string) => `CASE WHEN ${value} IS NOT NULL THEN printf('%-40s', ${time}) || ${value} END`
const unstamp = (agg: string) => `substr(${agg}, 41)`

/**
 * The account a contact key (`pk` phone, `em` email) belongs to: the oldest account that has it on
 * file, else the account whose touch used it first.
 */
const keyOwner = (key: 'pk' | 'em') => `
  SELECT ${key}, cid, MIN(prio) FROM (
    SELECT ${key}, id AS cid, '0' || printf('%020d', id) AS prio FROM cust WHERE ${key} IS NOT NULL
    UNION ALL
    SELECT ${key}, cid, '1' || seen FROM touch WHERE cid IS NOT NULL AND ${key} IS NOT NULL
  ) GROUP BY ${key}`

/** Every touch (order, reservation) of `@store` with the guest key it belongs to (`keyed`). */
const TOUCH_CTE = `
cust AS (
  SELECT id, NULLIF(trim(name), '') AS name, phone_key(phone) AS pk, lower(NULLIF(trim(email), '')) AS em, created_at
  FROM customers WHERE store_id = @store
),
pay AS (SELECT order_id, SUM(amount) AS paid FROM payments WHERE store_id = @store AND status = 'succeeded' GROUP BY order_id),
ref AS (SELECT order_id, SUM(amount) AS refunded FROM refunds WHERE store_id = @store AND status = 'completed' GROUP BY order_id),
touch AS (
  SELECT 'order' AS kind, o.id AS ref_id, o.customer_id AS cid, NULLIF(trim(o.customer_name), '') AS name,
    phone_key(o.phone) AS pk, NULL AS em, o.created_at AS at, o.created_at AS seen,
    (o.status <> 'cancelled') AS visit, 0 AS no_show,
    MAX(0, MAX(COALESCE(pay.paid, 0), CASE WHEN o.is_paid = 1 THEN o.total ELSE 0 END) - COALESCE(ref.refunded, 0)) AS spend
  FROM orders o LEFT JOIN pay ON pay.order_id = o.id LEFT JOIN ref ON ref.order_id = o.id
  WHERE o.store_id = @store
  UNION ALL
  -- A seated reservation that opened an order is one visit: its order counts, the booking does not.
  SELECT 'reservation', r.id, r.customer_id, NULLIF(trim(r.name), ''), phone_key(r.phone), lower(NULLIF(trim(r.email), '')),
    r.starts_at, r.created_at, (r.status IN ('seated', 'completed') AND r.order_id IS NULL), (r.status = 'no_show'), 0
  FROM reservations r WHERE r.store_id = @store
  UNION ALL
  -- Every account is a guest, also before its first visit (signed up, never came yet).
  SELECT 'customer', c.id, c.id, NULL, NULL, NULL, NULL, c.created_at, 0, 0, 0 FROM cust c
),
phone_owner AS (${keyOwner('pk')}
),
email_owner AS (${keyOwner('em')}
),
keyed AS (
  SELECT k.*, CASE WHEN k.gcid IS NOT NULL THEN 'c' || k.gcid ELSE COALESCE('p' || k.pk, 'e' || k.em) END AS gkey
  FROM (
    SELECT t.*, COALESCE(t.cid, po.cid, eo.cid) AS gcid
    FROM touch t LEFT JOIN phone_owner po ON po.pk = t.pk LEFT JOIN email_owner eo ON eo.em = t.em
  ) k
)`

/** The guests of `@store`, with their figures and segment flags; parameters @store, the rules and the clock. */
const GUESTS_CTE = `${TOUCH_CTE},
agg AS (
  SELECT gkey, MAX(gcid) AS customer_id,
    ${unstamp(`MAX(${stamped('seen', 'name')})`)} AS t_name,
    ${unstamp(`MAX(${stamped('seen', 'pk')})`)} AS t_phone,
    ${unstamp(`MAX(${stamped('seen', 'em')})`)} AS t_email,
    SUM(visit) AS visits,
    SUM(visit AND at >= @recentSince) AS recent_visits,
    SUM(spend) AS spend,
    MIN(CASE WHEN visit THEN at END) AS first_visit,
    MAX(CASE WHEN visit THEN at END) AS last_visit,
    SUM(no_show) AS no_shows
  FROM keyed WHERE gkey IS NOT NULL GROUP BY gkey
),
guest AS (
  SELECT a.gkey, a.customer_id, COALESCE(c.name, a.t_name) AS name, COALESCE(c.pk, a.t_phone) AS phone, COALESCE(c.em, a.t_email) AS email,
    a.visits, a.recent_visits, a.spend, a.first_visit, a.last_visit, a.no_shows
  FROM agg a LEFT JOIN cust c ON c.id = a.customer_id
),
ranked AS (
  SELECT g.*,
    RANK() OVER (ORDER BY g.spend DESC) AS spend_rank,
    SUM(g.spend > 0) OVER () AS spenders
  FROM guest g
),
flagged AS (
  SELECT r.*,
    (r.visits > 0 AND r.first_visit >= @newSince) AS seg_new,
    (r.recent_visits >= @regularVisits) AS seg_regular,
    (r.spend > 0 AND r.spend_rank <= MAX(1, (r.spenders * @vipPercent + 99) / 100)) AS seg_vip,
    (r.visits >= @lapsedMinVisits AND r.last_visit < @lapsedBefore) AS seg_lapsed,
    (r.no_shows >= @noShows) AS seg_no_show
  FROM ranked r
)`

/** The public id: `c<customer id>` for accounts, else the kind letter and a hash of the key (no phone or email in URLs and logs). */
const ID_SQL = "CASE WHEN substr(gkey, 1, 1) = 'c' THEN gkey ELSE substr(gkey, 1, 1) || guest_hash(@store, gkey) END"
const COLUMNS = `gkey, ${ID_SQL} AS id, customer_id, name, phone, email, visits, recent_visits, spend, spend_rank, first_visit, last_visit, no_shows, spenders`
const ORDER: Record<GuestSort, string> = {
  last_visit: 'last_visit IS NULL, last_visit DESC, gkey',
  spend: 'spend DESC, gkey',
  visits: 'visits DESC, last_visit IS NULL, last_visit DESC, gkey',
  name: 'name IS NULL, name COLLATE NOCASE, gkey',
}

/** A stable, opaque id part for a phone- or email-only guest: no phone number or email in URLs and logs. */
const guestHash = (storeId: number, key: string): string => createHash('sha256').update(`${storeId}:${key}`).digest('base64url').slice(0, 16)

const registered = new WeakSet<Db>()
/**
 * The connection with the two functions the queries use. `phone_key` is the customer app's phone
 * normaliser itself (orders keep the phone as typed), so a guest's phone matches exactly as sign-in
 * and order linking match it; neither is used in a schema object, so other connections need neither.
 */
function ready(db: Db): Db {
  if (!registered.has(db)) {
    db.function('guest_hash', { deterministic: true }, (store: unknown, key: unknown) => guestHash(Number(store), String(key)))
    db.function('phone_key', { deterministic: true }, (raw: unknown) => (typeof raw === 'string' ? normalizePhone(raw) : null))
    registered.add(db)
  }
  return db
}

interface Rules { regularVisits: number; vipPercent: number; lapsedMinVisits: number; noShows: number }
const params = (storeId: number, clock: GuestClock, rules: Rules) => ({ store: storeId, ...clock, ...rules })

const like = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

function searchClause(search: string): { sql: string; args: Record<string, string> } {
  const term = search.trim()
  if (term === '') return { sql: '', args: {} }
  const digits = term.replace(/[^\d+]/g, '')
  const parts = ["COALESCE(name, '') LIKE @q ESCAPE '\\'", "COALESCE(email, '') LIKE @q ESCAPE '\\'", "COALESCE(phone, '') LIKE @q ESCAPE '\\'"]
  const args: Record<string, string> = { q: like(term) }
  // A phone typed with spaces or brackets still finds the normalised one. Only a term that is a
  // phone: the digits inside an email or a name ("c-9f3a1234@…") must not find strangers' phones.
  if (/\d{3}/.test(digits) && /^[\d\s+().-]+$/.test(term)) { parts.push("COALESCE(phone, '') LIKE @qd ESCAPE '\\'"); args.qd = like(digits) }
  return { sql: `(${parts.join(' OR ')})`, args }
}

export const guests = {
  /** A page of the store's guests and the number matching the filters. */
  page(db: Db, storeId: number, clock: GuestClock, rules: Rules, q: GuestQuery): { rows: GuestRow[]; total: number } {
    const s = searchClause(q.search ?? '')
    const where = [s.sql, q.segment ? `seg_${q.segment}` : ''].filter(Boolean)
    const whereSql = where.length ? `WHERE ${where.join(' AND ')}` : ''
    const rows = ready(db).prepare<Record<string, unknown>, GuestRow & { total: number }>(
      `WITH ${GUESTS_CTE} SELECT ${COLUMNS}, COUNT(*) OVER () AS total FROM flagged ${whereSql} ORDER BY ${ORDER[q.sort]} LIMIT @limit OFFSET @offset`,
    ).all({ ...params(storeId, clock, rules), ...s.args, limit: q.limit, offset: q.offset })
    if (rows.length > 0 || q.offset === 0) return { rows: rows.map(({ total: _, ...r }) => r), total: rows[0]?.total ?? 0 }
    // Past the last page: the window gave no count, ask for it.
    const total = ready(db).prepare<Record<string, unknown>, number>(`WITH ${GUESTS_CTE} SELECT COUNT(*) FROM flagged ${whereSql}`).pluck()
      .get({ ...params(storeId, clock, rules), ...s.args }) ?? 0
    return { rows: [], total }
  },

  /** One guest of the store by its public id (`c123`, `p…`, `e…`), or undefined. */
  byId(db: Db, storeId: number, clock: GuestClock, rules: Rules, id: string): GuestRow | undefined {
    // An account's key is its id; the others are found by their hash (only among guests of that kind).
    const match = id.startsWith('c') ? 'gkey = @id' : 'substr(gkey, 1, 1) = substr(@id, 1, 1) AND guest_hash(@store, gkey) = substr(@id, 2)'
    return ready(db).prepare<Record<string, unknown>, GuestRow>(`WITH ${GUESTS_CTE} SELECT ${COLUMNS} FROM flagged WHERE ${match}`)
      .get({ ...params(storeId, clock, rules), id })
  },

  /** The guest's latest orders and reservations (newest first), `limit` of each. */
  touches(db: Db, storeId: number, gkey: string, limit: number): GuestTouchRow[] {
    return ready(db).prepare<Record<string, unknown>, GuestTouchRow>(
      `WITH ${TOUCH_CTE},
       mine AS (SELECT kind, ref_id FROM keyed WHERE gkey = @gkey)
       SELECT * FROM (SELECT 'order' AS kind, o.id, o.status, o.created_at AS at, o.total, NULL AS party_size FROM mine JOIN orders o ON o.id = mine.ref_id WHERE mine.kind = 'order' ORDER BY o.id DESC LIMIT @limit)
       UNION ALL
       SELECT * FROM (SELECT 'reservation', r.id, r.status, r.starts_at, 0, r.party_size FROM mine JOIN reservations r ON r.id = mine.ref_id WHERE mine.kind = 'reservation' ORDER BY r.starts_at DESC LIMIT @limit)`,
    ).all({ store: storeId, gkey, limit })
  },

  /** How many of the store's guests are in each segment, and how many guests there are. */
  segmentCounts(db: Db, storeId: number, clock: GuestClock, rules: Rules): { guests: number; counts: Record<SegmentKey, number> } {
    const sums = SEGMENT_KEYS.map((k) => `COALESCE(SUM(seg_${k}), 0) AS ${k}`).join(', ')
    const r = ready(db).prepare<Record<string, unknown>, Record<string, number>>(`WITH ${GUESTS_CTE} SELECT COUNT(*) AS guests, ${sums} FROM flagged`)
      .get(params(storeId, clock, rules))!
    return { guests: r.guests ?? 0, counts: Object.fromEntries(SEGMENT_KEYS.map((k) => [k, r[k] ?? 0])) as Record<SegmentKey, number> }
  },
}

/**
 * The guest reads as messages (docs/operations.md "Guests and segments", "Off the event loop"): plain
 * data in and out, so they run alike inline and in the read worker (src/storage/guests-worker.ts).
 * `get` reads the guest and its touches in one read transaction: one snapshot.
 */
export type GuestRead =
  | { kind: 'page'; storeId: number; params: { clock: GuestClock; rules: Rules; query: GuestQuery } }
  | { kind: 'get'; storeId: number; params: { clock: GuestClock; rules: Rules; id: string; recent: number } }
  | { kind: 'segments'; storeId: number; params: { clock: GuestClock; rules: Rules } }
export interface GuestReadResults {
  page: { rows: GuestRow[]; total: number }
  get: { guest: GuestRow; touches: GuestTouchRow[] } | null
  segments: { guests: number; counts: Record<SegmentKey, number> }
}
export type GuestReadKind = GuestRead['kind']
export type { Rules as GuestRules }

export function runGuestRead<K extends GuestReadKind>(db: Db, req: Extract<GuestRead, { kind: K }>): GuestReadResults[K]
export function runGuestRead(db: Db, req: GuestRead): GuestReadResults[GuestReadKind] {
  const { storeId, params: p } = req
  switch (req.kind) {
    case 'page': return guests.page(db, storeId, req.params.clock, req.params.rules, req.params.query)
    case 'segments': return guests.segmentCounts(db, storeId, p.clock, p.rules)
    case 'get': {
      const { id, recent } = req.params
      return db.transaction(() => {
        const guest = guests.byId(db, storeId, p.clock, p.rules, id)
        return guest ? { guest, touches: guests.touches(db, storeId, guest.gkey, recent) } : null
      })()
    }
    default: {
      const never: never = req
      throw new Error(`unknown guest read ${JSON.stringify(never)}`)
    }
  }
}
