/**
 * Third-party order-integration controls (api-v1 §4.7 "integration"; docs/staff.md "Busy and
 * snooze"): a store marks itself busy (longer prep times for a while) or snoozes incoming
 * partner orders for a period; the status reports both and when they end. Both expire by time
 * alone (no timer): an `until` in the past reads as off.
 */
import * as v from 'valibot'
import { route } from '../route.ts'
import type { Services } from '../../services.ts'
import { nowIso } from '../../storage/db.ts'

const tag = 'Staff'
const BusyBody = v.optional(v.object({
  active: v.optional(v.boolean(), true),
  minutes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(480)), 30),
  extra_prep_minutes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(120)), 15),
}), {})
const SnoozeBody = v.optional(v.object({
  active: v.optional(v.boolean(), true),
  minutes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1440)), 30),
}), {})

const StatusSchema = {
  type: 'object', required: ['busy', 'snoozed', 'prep_minutes', 'accepting_orders'],
  properties: {
    busy: { type: 'object', required: ['active', 'until', 'extra_prep_minutes'], properties: { active: { type: 'boolean' }, until: { type: ['string', 'null'] }, extra_prep_minutes: { type: 'integer' } } },
    snoozed: { type: 'object', required: ['active', 'until'], properties: { active: { type: 'boolean' }, until: { type: ['string', 'null'] } } },
    prep_minutes: { type: 'integer' },
    accepting_orders: { type: 'boolean' },
  },
}

type Row = { busy_until: string | null; extra_prep_minutes: number; snoozed_until: string | null }

/** The integration status of a store at `now`. */
export function integrationStatus(svc: Services, storeId: number, now = Date.now()) {
  const r = svc.db.prepare<[number], Row>('SELECT busy_until, extra_prep_minutes, snoozed_until FROM store_integration WHERE store_id = ?').get(storeId)
  const store = svc.stores.byId(storeId)
  const base = Number((JSON.parse(store?.settings ?? '{}') as { prep_minutes?: unknown }).prep_minutes ?? 15) || 15
  const busy = !!r?.busy_until && Date.parse(r.busy_until) > now
  const snoozed = !!r?.snoozed_until && Date.parse(r.snoozed_until) > now
  return {
    busy: { active: busy, until: busy ? r!.busy_until : null, extra_prep_minutes: busy ? r!.extra_prep_minutes : 0 },
    snoozed: { active: snoozed, until: snoozed ? r!.snoozed_until : null },
    prep_minutes: base + (busy ? r!.extra_prep_minutes : 0),
    accepting_orders: !snoozed,
  }
}

function upsert(svc: Services, storeId: number, cols: Partial<Row>) {
  const now = nowIso()
  return svc.committer.write((db) => {
    db.prepare('INSERT OR IGNORE INTO store_integration (store_id, updated_at) VALUES (?, ?)').run(storeId, now)
    const entries = Object.entries(cols)
    db.prepare(`UPDATE store_integration SET ${entries.map(([k]) => `${k} = ?`).join(', ')}, updated_at = ? WHERE store_id = ?`).run(...entries.map(([, x]) => x), now, storeId)
  })
}

export const staffIntegrationRoutes = [
  route({
    method: 'POST', path: '/staff/integration/busy', tag, auth: 'staff', permission: 'orders', body: BusyBody, response: StatusSchema,
    summary: 'Mark the store busy: longer prep times for a while',
    description: 'Body `{active?: true, minutes?: 30 (1–480), extra_prep_minutes?: 15 (1–120)}`; `{"active": false}` ends it now. Answers the integration status.',
    handler: async ({ svc, principal, body }) => {
      await upsert(svc, principal.storeId, body.active
        ? { busy_until: nowIso(Date.now() + body.minutes * 60_000), extra_prep_minutes: body.extra_prep_minutes }
        : { busy_until: null, extra_prep_minutes: 0 })
      return integrationStatus(svc, principal.storeId)
    },
  }),
  route({
    method: 'POST', path: '/staff/integration/snooze', tag, auth: 'staff', permission: 'orders', body: SnoozeBody, response: StatusSchema,
    summary: 'Pause incoming partner orders for a period',
    description: 'Body `{active?: true, minutes?: 30 (1–1440)}`; `{"active": false}` resumes now. Answers the integration status.',
    handler: async ({ svc, principal, body }) => {
      await upsert(svc, principal.storeId, { snoozed_until: body.active ? nowIso(Date.now() + body.minutes * 60_000) : null })
      return integrationStatus(svc, principal.storeId)
    },
  }),
  route({
    method: 'GET', path: '/staff/integration/status', tag, auth: 'staff', response: StatusSchema,
    summary: 'Busy and snooze state of the store, with when each ends and the prep time in force',
    handler: ({ svc, principal }) => integrationStatus(svc, principal.storeId),
  }),
]
