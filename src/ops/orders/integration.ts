/**
 * Third-party order-integration controls (api-v1 §4.7 "integration"; docs/staff.md "Busy and
 * snooze"): a store marks itself busy (longer prep times for a while) or snoozes incoming partner
 * orders for a period; the status reports both and when they end (rules: src/domain/integration.ts).
 */
import * as v from 'valibot'
import { defineOp, type OpCtx } from '../op.ts'
import { storeOf } from '../scope.ts'
import { basePrepMinutes, integrationStatus as statusAt, type IntegrationStatus } from '../../domain/integration.ts'
import { integrationRow, setIntegration, type IntegrationRow } from '../../storage/staff.ts'
import { nowIso } from '../../storage/db.ts'
import type { Services } from '../../services.ts'

const tag = 'Staff'

const StatusSchema = {
  type: 'object', required: ['busy', 'snoozed', 'prep_minutes', 'accepting_orders'],
  properties: {
    busy: { type: 'object', required: ['active', 'until', 'extra_prep_minutes'], properties: { active: { type: 'boolean' }, until: { type: ['string', 'null'] }, extra_prep_minutes: { type: 'integer' } } },
    snoozed: { type: 'object', required: ['active', 'until'], properties: { active: { type: 'boolean' }, until: { type: ['string', 'null'] } } },
    prep_minutes: { type: 'integer' },
    accepting_orders: { type: 'boolean' },
  },
}

/** The integration status of a store now (also read by the storefront's store info). */
export function integrationStatus(svc: Services, storeId: number, nowMs = Date.now()): IntegrationStatus {
  return statusAt(integrationRow(svc.db, storeId), basePrepMinutes(svc.stores.byId(storeId)?.settings), nowMs)
}

const BusyInput = v.optional(v.object({
  active: v.optional(v.boolean(), true),
  minutes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(480)), 30),
  extra_prep_minutes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(120)), 15),
}), {})
const SnoozeInput = v.optional(v.object({
  active: v.optional(v.boolean(), true),
  minutes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1440)), 30),
}), {})

const minutesFromNow = (minutes: number): string => nowIso(Date.now() + minutes * 60_000)

/** Store the scope's store's busy or snooze change (durable before the reply) and answer the status it makes. */
async function changeIntegration(ctx: OpCtx, changes: Partial<IntegrationRow>): Promise<IntegrationStatus> {
  const storeId = storeOf(ctx).id
  await ctx.svc.committer.write((db) => setIntegration(db, storeId, changes))
  return integrationStatus(ctx.svc, storeId)
}

export const setBusy = defineOp({
  id: 'staff.integration.busy', tag, summary: 'Mark the store busy: longer prep times for a while',
  description: 'Body `{active?: true, minutes?: 30 (1–480), extra_prep_minutes?: 15 (1–120)}`; `{"active": false}` ends it now. Answers the integration status.',
  access: { staff: 'orders' }, scope: ['store'], input: BusyInput, output: StatusSchema,
  run: (ctx, input) => changeIntegration(ctx, input.active
    ? { busy_until: minutesFromNow(input.minutes), extra_prep_minutes: input.extra_prep_minutes }
    : { busy_until: null, extra_prep_minutes: 0 }),
})

export const setSnooze = defineOp({
  id: 'staff.integration.snooze', tag, summary: 'Pause incoming partner orders for a period',
  description: 'Body `{active?: true, minutes?: 30 (1–1440)}`; `{"active": false}` resumes now. Answers the integration status.',
  access: { staff: 'orders' }, scope: ['store'], input: SnoozeInput, output: StatusSchema,
  run: (ctx, input) => changeIntegration(ctx, { snoozed_until: input.active ? minutesFromNow(input.minutes) : null }),
})

export const getIntegration = defineOp({
  id: 'staff.integration.get', tag, summary: 'Busy and snooze state of the store, with when each ends and the prep time in force',
  access: { staff: 'any' }, scope: ['store'], output: StatusSchema,
  run: (ctx) => integrationStatus(ctx.svc, storeOf(ctx).id),
})

export const integrationOps = [setBusy, setSnooze, getIntegration]
