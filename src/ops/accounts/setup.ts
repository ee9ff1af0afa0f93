/**
 * The setup checklist (issue 34 item 16; docs/dashboard.md "First steps"): `GET /account/setup`
 * computes each step from the account's data (src/domain/setup.ts), `PUT /account/setup` hides it
 * or shows it again. The dashboard draws it on its first pages; any client can read it.
 */
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { ownerOf } from '../scope.ts'
import { notFound } from '../../errors.ts'
import { Id } from '../schemas/common.ts'
import { setupChecklist, type SetupChecklist } from '../../domain/setup.ts'
import { setSetupDismissed, setupFacts } from '../../storage/setup.ts'
import { nowIso } from '../../storage/db.ts'
import type { OpCtx } from '../op.ts'

const tag = 'Account'

const StepSchema = {
  type: 'object', required: ['key', 'title', 'done', 'detail', 'page'],
  properties: {
    key: { type: 'string', enum: ['store', 'hours', 'menu', 'channel', 'driver', 'payment'] },
    title: { type: 'string' },
    done: { type: 'boolean', description: 'Read from the account\'s data now, never stored' },
    detail: { type: 'string', description: 'What is there, or what to do' },
    page: { type: 'string', enum: ['stores', 'menu', 'tokens', 'drivers', 'shifts'], description: 'The dashboard page where it is done: `{site_url}/dashboard/{page}`' },
  },
}
const ChecklistSchema = {
  type: 'object', required: ['store_id', 'steps', 'done', 'total', 'complete', 'dismissed', 'dismissed_at'],
  properties: {
    store_id: { type: ['integer', 'null'], description: 'The store the store steps are about; null while the account has none' },
    steps: { type: 'array', items: StepSchema },
    done: { type: 'integer' }, total: { type: 'integer' },
    complete: { type: 'boolean', description: 'Every step is done: the dashboard no longer shows the list' },
    dismissed: { type: 'boolean', description: 'The owner hid the list' },
    dismissed_at: { type: ['string', 'null'], format: 'date-time' },
  },
}

const StoreQuery = v.optional(v.pipe(v.string(), v.regex(/^[1-9]\d{0,15}$/, 'A store id: a positive whole number.')))

function checklist(ctx: OpCtx, storeId: string | number | undefined): SetupChecklist {
  const facts = setupFacts(ctx.svc.db, ownerOf(ctx).ownerId, storeId === undefined ? undefined : Number(storeId))
  if (!facts) throw notFound('restaurant')
  return setupChecklist(facts, ctx.svc.payments.name)
}

export const getSetup = defineOp({
  id: 'account.setup.get', tag, access: { owner: '*:read' }, scope: [],
  input: v.object({ restaurant_id: StoreQuery }),
  output: ChecklistSchema,
  summary: 'The setup checklist: store, hours, menu, storefront or website, a driver, a payment method',
  description: 'Each step is computed from the account\'s data at the time of the call. `restaurant_id` names the store the store steps are about (default: the account\'s first store); another account\'s store is 404. docs/dashboard.md "First steps".',
  run: (ctx, input) => checklist(ctx, input.restaurant_id),
})

export const setSetup = defineOp({
  id: 'account.setup.set', tag, access: { owner: '*:write' }, scope: [],
  input: v.object({ dismissed: v.boolean(), restaurant_id: v.optional(Id) }),
  output: ChecklistSchema,
  summary: 'Hide the setup checklist, or show it again',
  description: 'Body `{dismissed: true, restaurant_id?}` hides the list on the dashboard (for every session of the account), `{dismissed: false}` shows it again. Answers the checklist.',
  run: async (ctx, input) => {
    const owner = ownerOf(ctx).ownerId
    checklist(ctx, input.restaurant_id) // a store that is not the account's: 404 before anything is written
    await ctx.svc.committer.write((db) => setSetupDismissed(db, owner, input.dismissed ? nowIso() : null))
    return checklist(ctx, input.restaurant_id)
  },
})

export const setupOps = [getSetup, setSetup]
