/**
 * Entitlements (docs/billing.md "Plans and entitlements", api-v1 §6 `entitlement.changed`): the
 * features an account holds, each with its source; plan features follow the live subscription
 * (source 'subscription') and fall back to the default plan's (source 'plan') when it is paused or
 * over; every grant and revocation appends exactly one `entitlement.changed` with exactly the spec's
 * data; the start-up sync of the platform catalog is idempotent.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createOwner, outbox, tokenFor } from './helpers/fixtures.ts'
import { runCli } from '../src/cli.ts'
import { setAccountPlan, syncEntitlements, syncPlatformPlans } from '../src/storage/plans.ts'
import { accountPlan, hasFeature } from '../src/storage/entitlements.ts'
import { PLATFORM_PLANS } from '../src/domain/plans.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const env = { DB_PATH: s.dbPath, LOG_LEVEL: 'silent' }
const plan = (key: string) => PLATFORM_PLANS.find((p) => p.key === key)!
const eventsOf = (ownerId: number) => outbox(db, 'entitlement.changed').filter((e) => e.owner_id === ownerId).map((e) => e.data as Record<string, unknown>)

t.test('a plan change grants and revokes the difference, one exact event each', async (t) => {
  const ownerId = createOwner(db, 'Changer', null)
  const token = tokenFor(db, ownerId, ['*'])
  t.notOk(hasFeature(db, ownerId, 'crm'), 'the default plan has no crm')
  const seen = eventsOf(ownerId).length
  const { subscription_id } = setAccountPlan(db, ownerId, 'growth')
  const events = eventsOf(ownerId).slice(seen)
  const free = plan('free').features
  const growth = plan('growth').features
  t.equal(events.filter((e) => e.action === 'revoked').length, free.length, 'every default-plan grant is revoked (its source ended)')
  t.same(events.filter((e) => e.action === 'granted').map((e) => e.feature_key).sort(), [...growth].sort(), 'every growth feature is granted')
  for (const e of events) {
    t.same(Object.keys(e).sort(), ['action', 'feature_key', 'occurred_at', 'source_id', 'source_type', 'user_id'], 'exactly the spec\'s data')
    t.equal(e.user_id, ownerId)
  }
  t.match(events.find((e) => e.action === 'granted'), { source_type: 'subscription', source_id: subscription_id })
  t.ok(hasFeature(db, ownerId, 'crm'))
  const r = await s.req('GET', '/account/entitlements', { token })
  t.same(r.body.data.map((e: { feature_key: string }) => e.feature_key).sort(), [...growth].sort())
  const again = eventsOf(ownerId).length
  setAccountPlan(db, ownerId, 'growth')
  t.equal(eventsOf(ownerId).length, again, 'putting the account on the plan it has changes nothing')
})

t.test('paused or ended subscription: the default plan\'s features and quotas, source plan', async (t) => {
  const ownerId = createOwner(db, 'Pauser', 'pro')
  db.prepare("UPDATE subscriptions SET status = 'paused' WHERE owner_id = ? AND status = 'active'").run(ownerId)
  db.transaction(() => syncEntitlements(db, ownerId))()
  t.equal(accountPlan(db, ownerId).key, 'free', 'paused: the default plan applies')
  t.same(accountPlan(db, ownerId).quotas, plan('free').quotas)
  t.notOk(hasFeature(db, ownerId, 'mcp'))
  const token = tokenFor(db, ownerId, ['*'])
  const r = await s.req('GET', '/account/plan', { token })
  t.match(r.body, { plan: { key: 'free' }, status: 'paused', subscription_id: null })
  t.match(r.body.features.find((f: { key: string }) => f.key === 'kds'), { included: true, sources: [{ source_type: 'plan' }] })
  db.prepare("UPDATE subscriptions SET status = 'expired', ended_at = ? WHERE owner_id = ? AND status = 'paused'").run(new Date().toISOString(), ownerId)
  t.same(db.transaction(() => syncEntitlements(db, ownerId))(), [], 'expired: still the default plan, nothing to change')
  t.equal(accountPlan(db, ownerId).key, 'free')
})

t.test('manual grants and revocations through the CLI', async (t) => {
  const ownerId = createOwner(db, 'Manual', 'free')
  const token = tokenFor(db, ownerId, ['*'])
  const grant = JSON.parse(runCli(['entitlement', 'grant', '--owner', String(ownerId), '--feature', 'crm', '--json'], env).out)
  t.match(grant, { owner_id: ownerId, feature_key: 'crm', action: 'granted', changed: true })
  t.match(eventsOf(ownerId).at(-1), { action: 'granted', feature_key: 'crm', source_type: 'manual', source_id: null, user_id: ownerId })
  const view = await s.req('GET', '/account/plan', { token })
  t.match(view.body.features.find((f: { key: string }) => f.key === 'crm'), { included: true, sources: [{ source_type: 'manual', source_id: null }] })
  t.match(JSON.parse(runCli(['entitlement', 'grant', '--owner', String(ownerId), '--feature', 'crm', '--json'], env).out), { changed: false }, 'granting twice is a no-op')
  t.match(JSON.parse(runCli(['entitlement', 'revoke', '--owner', String(ownerId), '--feature', 'crm', '--json'], env).out), { action: 'revoked', changed: true })
  t.match(eventsOf(ownerId).at(-1), { action: 'revoked', feature_key: 'crm', source_type: 'manual' })
  t.notOk(hasFeature(db, ownerId, 'crm'))
  t.throws(() => runCli(['entitlement', 'grant', '--owner', String(ownerId), '--feature', 'teleport'], env), /--feature must be one of/)
  t.match(JSON.parse(runCli(['plan', 'set', '--owner', String(ownerId), '--plan', 'pro', '--json'], env).out), { owner_id: ownerId, plan: 'pro' })
  t.equal(accountPlan(db, ownerId).key, 'pro')
  t.throws(() => runCli(['plan', 'set', '--owner', String(ownerId), '--plan', 'platinum'], env), /no plan/)
})

t.test('the start-up catalog sync is idempotent', async (t) => {
  const before = outbox(db, 'entitlement.changed').length
  t.same(syncPlatformPlans(db), { changed: [] })
  t.equal(outbox(db, 'entitlement.changed').length, before, 'no events')
})
