/**
 * The subscription lifecycle against a real server and its database (docs/billing.md "Subscriptions"):
 * each transition with its `subscription.*` event and payload, driven by the owner API and by
 * `dispatch billing run --at` (time travel, no sleeps): renewal charged to the wallet, past_due with
 * retries and expiry after the grace period, a paid retry, trial_ending, cancel → expiring → ended,
 * pause/resume, prorated upgrade, downgrade at period end, 402 when the wallet cannot pay, capabilities.
 */
import t, { type Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { createOwner, outbox, tokenFor } from './helpers/fixtures.ts'
import { runCli } from '../src/cli.ts'
import { hasFeature } from '../src/storage/entitlements.ts'
import { EVENT_CATALOG } from '../src/domain/webhook-events.ts'
import { checkSchema } from './helpers/jsonschema.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const env = { DB_PATH: s.dbPath, SITE_URL: s.site, LOG_LEVEL: 'silent' }
const cli = (...args: string[]) => {
  const r = runCli([...args, '--json'], env)
  if (r.code !== 0) throw new Error(`dispatch ${args.join(' ')}: ${r.out}`)
  return JSON.parse(r.out)
}
const DAY = 86_400_000
const shift = (iso: string, days: number) => new Date(Date.parse(iso) + days * DAY).toISOString()

/** A funded (or not) account on `plan` with a `*` token. */
function account(plan: string | null, funds?: string) {
  const ownerId = createOwner(db, undefined, plan)
  if (funds) cli('wallet', 'top-up', '--owner', String(ownerId), '--amount', funds)
  return { ownerId, token: tokenFor(db, ownerId, ['*']) }
}
/** `dispatch billing run --at`, only the actions of one account. */
const run = (at: string, ownerId: number) => (cli('billing', 'run', '--at', at).actions as any[]).filter((a) => a.owner_id === ownerId)
const sub = async (token: string) => (await s.req('GET', '/subscription', { token })).body
const events = (ownerId: number, name: string) => outbox(db, `subscription.${name}`).filter((e) => e.owner_id === ownerId).map((e) => e.data)

/** Every subscription.* payload is exactly the documented one. */
function conforms(t: Test, data: Record<string, unknown>, name: string) {
  const schema = EVENT_CATALOG[`subscription.${name}`]!.data as { properties: Record<string, unknown> }
  t.same(checkSchema(schema, data, {}), [], `${name} data matches the documented schema`)
  t.same(Object.keys(data).filter((k) => !(k in schema.properties)), [], `${name} has no undocumented key`)
}

t.test('renewal at the period end is charged to the wallet once, with subscription.renewed', async (t) => {
  const a = account('growth', '100.00')
  const before = await sub(a.token)
  t.match(before, { status: 'active', live: true, plan: { key: 'growth', price: 29 }, wallet_balance: 100 })
  const end = before.current_period_end
  t.same(run(shift(end, -0.001), a.ownerId), [], 'nothing before the period end')
  const acts = run(end, a.ownerId)
  t.match(acts, [{ kind: 'renewal', result: 'renewed', charged: 2900, plan_key: 'growth', period_key: end, events: ['subscription.renewed'] }])
  t.same(run(end, a.ownerId), [], 'the same run again does nothing')
  const after = await sub(a.token)
  t.match(after, { status: 'active', current_period_start: end, wallet_balance: 71 })
  t.equal(Date.parse(after.current_period_end) - Date.parse(end), 30 * DAY, 'a 30-day period (api-v1 §8)')
  const [ev] = events(a.ownerId, 'renewed')
  t.same(ev, { subscription_id: before.id, user_id: a.ownerId, plan_key: 'growth', status: 'active', current_period_end: after.current_period_end, occurred_at: ev!.occurred_at })
  conforms(t, ev!, 'renewed')
  const w = (await s.req('GET', '/wallet', { token: a.token })).body
  t.match(w.data[0], { amount: -29, reason: 'subscription_renewal', reference: `subscription:${before.id}:${end}` })
})

t.test('unpaid renewal: past_due, retries on the schedule, expired after the grace period; features fall back', async (t) => {
  const a = account('growth')
  const { current_period_end: end, id } = await sub(a.token)
  t.match(run(end, a.ownerId), [{ kind: 'renewal', result: 'past_due', charged: 0, events: ['subscription.past_due'] }])
  t.match(await sub(a.token), { status: 'past_due', past_due_since: end, next_retry_at: new Date(Date.parse(end) + DAY).toISOString().replace('Z', '+00:00') })
  t.ok(hasFeature(db, a.ownerId, 'crm'), 'a past-due account keeps its plan meanwhile')
  conforms(t, events(a.ownerId, 'past_due')[0]!, 'past_due')
  t.same(run(shift(end, 0.5), a.ownerId), [], 'no retry before +1 day')
  t.match(run(shift(end, 1), a.ownerId), [{ kind: 'retry:1', result: 'retry_failed' }])
  // Down for a week: the two retries left and the expiry, once each, in order.
  t.match(run(shift(end, 8), a.ownerId), [{ kind: 'retry:2', result: 'retry_failed' }, { kind: 'retry:3', result: 'retry_failed' }, { kind: 'expiry', result: 'expired', events: ['subscription.expired'] }])
  const ended = await sub(a.token)
  t.match(ended, { id, status: 'expired', live: false, ended_at: shift(end, 7).replace('Z', '+00:00') })
  const [ev] = events(a.ownerId, 'expired')
  t.match(ev, { subscription_id: id, status: 'expired', plan_key: 'growth' })
  conforms(t, ev!, 'expired')
  t.notOk(hasFeature(db, a.ownerId, 'crm'), 'expired: the default plan\'s features only')
  t.same(run(shift(end, 60), a.ownerId), [], 'nothing more to do')
})

t.test('a retry that can be paid renews from the original boundary', async (t) => {
  const a = account('growth')
  const { current_period_end: end } = await sub(a.token)
  run(end, a.ownerId)
  cli('wallet', 'top-up', '--owner', String(a.ownerId), '--amount', '30')
  t.match(run(shift(end, 1), a.ownerId), [{ kind: 'retry:1', result: 'renewed', charged: 2900, events: ['subscription.renewed'] }])
  const after = await sub(a.token)
  t.match(after, { status: 'active', current_period_start: end, past_due_since: null, next_retry_at: null, wallet_balance: 1 })
})

t.test('a trial: trial_ending 3 days before its end, then the first charge', async (t) => {
  const a = account('free')
  const start = await s.req('POST', '/subscription/plan', { token: a.token, body: { plan_key: 'growth' } })
  t.equal(start.status, 200)
  t.match(start.body, { status: 'trialing', plan: { key: 'growth' }, wallet_balance: 0 })
  const trialEnd = start.body.trial_end
  t.equal(Date.parse(trialEnd) - Date.parse(start.body.current_period_start), 14 * DAY, 'the plan\'s 14-day trial')
  t.match(events(a.ownerId, 'plan_changed'), [{ plan_key: 'growth', previous_plan_key: 'free', status: 'trialing' }])
  t.same(run(shift(trialEnd, -3.1), a.ownerId), [])
  t.match(run(shift(trialEnd, -3), a.ownerId), [{ kind: 'reminder:trial_ending', result: 'reminded', events: ['subscription.trial_ending'] }])
  t.same(run(shift(trialEnd, -1), a.ownerId), [], 'reminded once')
  conforms(t, events(a.ownerId, 'trial_ending')[0]!, 'trial_ending')
  cli('wallet', 'top-up', '--owner', String(a.ownerId), '--amount', '29.00')
  t.match(run(trialEnd, a.ownerId), [{ kind: 'renewal', result: 'renewed', charged: 2900 }])
  t.match(await sub(a.token), { status: 'active', trial_end: trialEnd, wallet_balance: 0 })
  // One trial per account: after the subscription ends, a new one is charged at once.
  const { current_period_end: end } = (await s.req('POST', '/subscription/cancel', { token: a.token })).body
  t.match(run(end, a.ownerId), [{ kind: 'end', result: 'cancelled' }])
  cli('wallet', 'top-up', '--owner', String(a.ownerId), '--amount', '30.00')
  const back = await s.req('POST', '/subscription/plan', { token: a.token, body: { plan_key: 'growth' } })
  t.match(back.body, { status: 'active', live: true, trial_end: null, wallet_balance: 1 })
})

t.test('cancel at period end: expiring N days before, then cancelled without a charge; resume-renewal undoes it', async (t) => {
  const a = account('growth', '50.00')
  const c = await s.req('POST', '/subscription/cancel', { token: a.token })
  t.match(c.body, { status: 'active', cancel_at_period_end: true })
  const undo = await s.req('POST', '/subscription/resume-renewal', { token: a.token })
  t.match(undo.body, { cancel_at_period_end: false })
  t.equal((await s.req('POST', '/subscription/resume-renewal', { token: a.token })).status, 422, 'nothing to undo: invalid_transition')
  await s.req('POST', '/subscription/cancel', { token: a.token })
  const { current_period_end: end, id } = await sub(a.token)
  t.same(run(shift(end, -7.1), a.ownerId), [])
  t.match(run(shift(end, -7), a.ownerId), [{ kind: 'reminder:expiring', events: ['subscription.expiring'] }], 'BILLING_EXPIRING_DAYS (7) before the end')
  conforms(t, events(a.ownerId, 'expiring')[0]!, 'expiring')
  t.match(run(end, a.ownerId), [{ kind: 'end', result: 'cancelled', charged: 0, events: ['subscription.expired'] }])
  t.match(events(a.ownerId, 'expired'), [{ subscription_id: id, status: 'cancelled' }])
  t.match(await sub(a.token), { status: 'cancelled', live: false, ended_at: end, wallet_balance: 50 })
  // A new subscription after the end; this account never had a trial, so it starts with one.
  const back = await s.req('POST', '/subscription/plan', { token: a.token, body: { plan_key: 'growth' } })
  t.match(back.body, { status: 'trialing', live: true, wallet_balance: 50 })
  t.not(back.body.id, id, 'a new subscription row')
})

t.test('expiring also warns before a period the wallet cannot renew', async (t) => {
  const a = account('growth', '10.00')
  const { current_period_end: end } = await sub(a.token)
  t.match(run(shift(end, -7), a.ownerId), [{ kind: 'reminder:expiring' }])
})

t.test('pause and resume: nothing renews while paused; the paid time is kept', async (t) => {
  const a = account('growth', '100.00')
  const before = await sub(a.token)
  const p = await s.req('POST', '/subscription/pause', { token: a.token })
  t.match(p.body, { status: 'paused' })
  t.match(events(a.ownerId, 'paused'), [{ status: 'paused', subscription_id: before.id }])
  conforms(t, events(a.ownerId, 'paused')[0]!, 'paused')
  t.notOk(hasFeature(db, a.ownerId, 'crm'), 'paused: the default plan\'s features')
  t.equal((await s.req('POST', '/subscription/pause', { token: a.token })).status, 422, 'already paused')
  t.same(run(shift(before.current_period_end, 40), a.ownerId), [], 'nothing renews while paused')
  const r = await s.req('POST', '/subscription/resume', { token: a.token })
  t.match(r.body, { status: 'active', paused_at: null, wallet_balance: 100 })
  t.ok(Date.parse(r.body.current_period_end) >= Date.parse(before.current_period_end), 'the period end moved by the pause')
  conforms(t, events(a.ownerId, 'resumed')[0]!, 'resumed')
  t.ok(hasFeature(db, a.ownerId, 'crm'), 'resumed: the plan\'s features again')
})

t.test('upgrade at once, prorated; downgrade at period end; 402 when the wallet cannot pay', async (t) => {
  const a = account('growth', '100.00')
  const { id, current_period_end: end } = await sub(a.token)
  const up = await s.req('POST', '/subscription/plan', { token: a.token, body: { plan_key: 'pro' } })
  t.equal(up.status, 200)
  t.match(up.body, { id, status: 'active', plan: { key: 'pro' }, current_period_end: end })
  // A whole period is (almost) left: (79 - 29) × the part left, to the cent.
  t.ok(up.body.wallet_balance >= 50 && up.body.wallet_balance <= 50.1, `proration charged: ${up.body.wallet_balance}`)
  t.match(events(a.ownerId, 'plan_changed'), [{ plan_key: 'pro', previous_plan_key: 'growth' }])
  conforms(t, events(a.ownerId, 'plan_changed')[0]!, 'plan_changed')
  t.ok(hasFeature(db, a.ownerId, 'apps'), 'the new plan\'s features at once')

  const down = await s.req('POST', '/subscription/plan', { token: a.token, body: { plan_key: 'growth' } })
  t.match(down.body, { plan: { key: 'pro' }, pending_plan: { key: 'growth' } })
  t.equal(events(a.ownerId, 'plan_changed').length, 1, 'no event until it applies')
  const balance = down.body.wallet_balance
  t.match(run(end, a.ownerId), [{ kind: 'renewal', result: 'renewed', plan_key: 'growth', charged: 2900, events: ['subscription.plan_changed', 'subscription.renewed'] }])
  t.match(await sub(a.token), { plan: { key: 'growth' }, pending_plan: null })
  t.equal((await sub(a.token)).wallet_balance, Math.round((balance - 29) * 100) / 100)

  const poor = account('growth')
  const refused = await s.req('POST', '/subscription/plan', { token: poor.token, body: { plan_key: 'pro' } })
  t.equal(refused.status, 402)
  t.match(refused.body, { code: 'insufficient_funds', details: { balance: 0 } })
  t.match(await sub(poor.token), { plan: { key: 'growth' } }, 'nothing changed')
  t.equal(events(poor.ownerId, 'plan_changed').length, 0)
  const unknown = await s.req('POST', '/subscription/plan', { token: poor.token, body: { plan_key: 'platinum' } })
  t.equal(unknown.status, 422)
  t.match(unknown.body, { code: 'validation_failed', errors: { plan_key: [String] } })
})

t.test('capabilities: reads need read, changes need write (api-v1 §5 rule 3)', async (t) => {
  const a = account('growth')
  const reader = tokenFor(db, a.ownerId, ['read'])
  const menuOnly = tokenFor(db, a.ownerId, ['menu:write'])
  t.equal((await s.req('GET', '/subscription', { token: reader })).status, 200)
  t.equal((await s.req('GET', '/wallet', { token: reader })).status, 200)
  t.equal((await s.req('POST', '/subscription/pause', { token: reader })).status, 403)
  t.equal((await s.req('GET', '/wallet', { token: menuOnly })).status, 403, 'a resource capability is not an account one')
  t.equal((await s.req('POST', '/subscription/plan', { token: menuOnly, body: { plan_key: 'pro' } })).status, 403)
  t.equal((await s.req('GET', '/subscription')).status, 401)
})
