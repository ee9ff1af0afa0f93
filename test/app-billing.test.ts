/**
 * App billing through the wallet (api-v1 §4.10, §7 rule 2, §8; docs/apps.md "Billing"): usage
 * reports charge price × quantity once per ref, within the period cap, refused by an empty wallet;
 * only an installed app's token may report; recurring apps pay at install and once per 30-day
 * period, also across a restart with the billing clock moved.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config.ts'
import { buildApp, type App } from '../src/app.ts'
import { startServer, request, type TestServer } from './helpers/server.ts'
import { createOwner, tokenFor, isError } from './helpers/fixtures.ts'
import { createTestApp, installTestApp } from './helpers/apps.ts'
import { credit, walletBalance } from '../src/storage/wallet.ts'
import { chargeAtInstall } from '../src/billing/app-charges.ts'
import { installationById } from '../src/storage/apps.ts'
import { grantEntitlement } from '../src/storage/plans.ts'

const usage = (s: TestServer, token: string | undefined, fields: Record<string, string>) =>
  request(`${s.site}/api/app/usage`, 'POST', {
    ...(token ? { token } : {}), raw: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })

const entries = (db: App['svc']['db'], ownerId: number, reason: string) =>
  db.prepare('SELECT amount, reference FROM wallet_entries WHERE owner_id = ? AND reason = ? ORDER BY id').all(ownerId, reason) as Array<{ amount: number; reference: string }>

t.test('usage reports', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const db = s.app.svc.db
  const dev = createOwner(db)
  const owner = createOwner(db)
  db.transaction(() => credit(db, owner, 1000, 'top_up', null, 'test'))()
  const app = createTestApp(db, dev, { pricing: 'usage', price: 5, cap: 60 })
  const { installation, accessToken } = installTestApp(db, app.id, owner)

  await t.test('price × quantity to the wallet, a ledger entry referencing the installation', async (t) => {
    const r = await usage(s, accessToken, { quantity: '3', ref: 'job-1' })
    t.equal(r.status, 200, r.text)
    t.match(r.body, { duplicate: false, message: 'recorded', quantity: 3, ref: 'job-1', amount: 0.15, currency: 'USD', capped: false })
    t.equal(walletBalance(db, owner), 985)
    const e = entries(db, owner, 'app_usage')
    t.equal(e.length, 1)
    t.equal(e[0]!.amount, -15)
    t.match(e[0]!.reference, new RegExp(`^app_installation:${installation.id}:usage:`))
  })

  await t.test('a duplicate ref is "already recorded", nothing charged', async (t) => {
    const r = await usage(s, accessToken, { quantity: '7', ref: 'job-1' })
    t.equal(r.status, 200, r.text)
    t.match(r.body, { duplicate: true, message: 'already recorded', quantity: 3, amount: 0.15 })
    t.equal(walletBalance(db, owner), 985)
    t.equal(entries(db, owner, 'app_usage').length, 1)
  })

  await t.test('no ref: every report counts', async (t) => {
    t.equal((await usage(s, accessToken, { quantity: '1' })).status, 200)
    t.equal((await usage(s, accessToken, { quantity: '1' })).status, 200)
    t.equal(walletBalance(db, owner), 975)
  })

  await t.test('the cap per period limits what is charged', async (t) => {
    // 25 charged so far; the cap is 60: a report of 10 units (50) is charged 35, the next nothing.
    const r = await usage(s, accessToken, { quantity: '10', ref: 'big' })
    t.match(r.body, { amount: 0.35, capped: true })
    const r2 = await usage(s, accessToken, { quantity: '1', ref: 'after-cap' })
    t.match(r2.body, { amount: 0, capped: true, duplicate: false })
    t.equal(walletBalance(db, owner), 940)
  })

  await t.test('422 for a bad quantity or ref, nothing written', async (t) => {
    const before = db.prepare('SELECT COUNT(*) FROM app_usage').pluck().get()
    for (const fields of [{}, { quantity: '0' }, { quantity: '-2' }, { quantity: 'abc' }, { quantity: '' }, { quantity: '1', ref: 'x'.repeat(121) }, { quantity: '1', ref: '' }]) {
      const r = await usage(s, accessToken, fields as Record<string, string>)
      isError(t, r, 422, 'validation_failed', JSON.stringify(fields))
    }
    t.equal(db.prepare('SELECT COUNT(*) FROM app_usage').pluck().get(), before)
  })

  await t.test('403 for a token that is not an app\'s; 401 without one', async (t) => {
    isError(t, await usage(s, tokenFor(db, owner, ['*']), { quantity: '1' }), 403, 'forbidden')
    isError(t, await usage(s, undefined, { quantity: '1' }), 401, 'unauthenticated')
  })

  await t.test('an empty wallet: 402 insufficient_funds, nothing recorded', async (t) => {
    const poor = createOwner(db)
    const app2 = createTestApp(db, dev, { pricing: 'usage', price: 100 })
    const inst = installTestApp(db, app2.id, poor)
    const r = await usage(s, inst.accessToken, { quantity: '1', ref: 'r1' })
    isError(t, r, 402, 'insufficient_funds')
    t.equal(db.prepare('SELECT COUNT(*) FROM app_usage WHERE installation_id = ?').pluck().get(inst.installation.id), 0)
    // The same ref after a top-up is a new report, charged once.
    db.transaction(() => credit(db, poor, 100, 'top_up', null, 'test'))()
    t.match((await usage(s, inst.accessToken, { quantity: '1', ref: 'r1' })).body, { duplicate: false, amount: 1 })
    t.equal(walletBalance(db, poor), 0)
  })

  await t.test('a free app charges nothing', async (t) => {
    const free = createTestApp(db, dev, { pricing: 'free' })
    const rich = createOwner(db)
    db.transaction(() => credit(db, rich, 500, 'top_up', null, 'test'))()
    const inst = installTestApp(db, free.id, rich)
    t.match((await usage(s, inst.accessToken, { quantity: '4' })).body, { amount: 0 })
    t.equal(walletBalance(db, rich), 500)
  })

  await t.test('the developer sees its earnings; another developer gets 404', async (t) => {
    const r = await s.req('GET', `/developer/apps/${app.id}/earnings`, { token: tokenFor(db, dev, ['*']) })
    t.equal(r.status, 200, r.text)
    t.match(r.body, { app_id: app.id, currency: 'USD', usage: 0.6, recurring: 0, total: 0.6, installations_active: 1 })
    isError(t, await s.req('GET', `/developer/apps/${app.id}/earnings`, { token: tokenFor(db, owner, ['*']) }), 404, 'not_found')
    // An app token cannot read account-wide data.
    isError(t, await s.req('GET', `/developer/apps/${app.id}/earnings`, { token: accessToken }), 403, 'forbidden')
  })
})

t.test('recurring: charged at install, once per 30-day period, unpaid when the wallet is empty, none twice after a restart', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-app-billing-'))
  const DB_PATH = join(dir, 'apps.db')
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const DAY = 86_400_000
  const server = (clock?: string): App =>
    buildApp(loadConfig({ LOG_LEVEL: 'silent', DB_PATH, BILLING_CRON: 'off', ...(clock ? { NODE_ENV: 'test', BILLING_CLOCK: clock } : {}) }))

  const first = server()
  await first.billing.started
  const db = first.svc.db
  const dev = createOwner(db)
  // `apps` by the operator's grant on the free plan: a paid plan's renewal would go unpaid in the 65
  // days and the subscription expire, and periods that come due without `apps` are not charged
  // (docs/apps.md "When the plan lacks apps", test/app-entitlement-reach.test.ts).
  const owner = createOwner(db, undefined, 'free')
  db.transaction(() => {
    grantEntitlement(db, owner, 'apps', 'manual')
    credit(db, owner, 2500, 'top_up', null, 'test')
  })()
  const app = createTestApp(db, dev, { pricing: 'recurring', price: 1000 })
  const installed = db.transaction(() => {
    const { installation } = installTestApp(db, app.id, owner)
    chargeAtInstall(db, installation, new Date(installation.installed_at))
    // A re-consent in the same period charges nothing more.
    chargeAtInstall(db, installationById(db, installation.id)!, new Date(installation.installed_at))
    return installation
  })()
  t.equal(walletBalance(db, owner), 1500, 'the first period at install')
  await first.close()

  const later = new Date(Date.parse(installed.installed_at) + 65 * DAY).toISOString()
  const second = server(later)
  const report = await second.billing.started
  const mine = (report!.tasks.app_charges as Array<{ installation_id: number; result: string; period_start: string }>).filter((c) => c.installation_id === installed.id)
  t.same(mine.map((c) => c.result), ['charged', 'unpaid'], 'day 30 paid from what was left; day 60 unpaid')
  t.equal(walletBalance(second.svc.db, owner), 500)
  await second.close()

  const third = server(later)
  const again = await third.billing.started
  t.same((again!.tasks.app_charges as Array<{ installation_id: number; result: string }>).filter((c) => c.installation_id === installed.id).map((c) => c.result), ['unpaid'],
    'after a restart: only the unpaid period is tried again')
  t.equal(entries(third.svc.db, owner, 'app_recurring').length, 2, 'no period charged twice')
  // A top-up: the next run pays the unpaid period, once.
  third.svc.db.transaction(() => credit(third.svc.db, owner, 1000, 'top_up', null, 'test'))()
  await third.close()
  const fourth = server(later)
  await fourth.billing.started
  const charges = fourth.svc.db.prepare('SELECT result FROM app_charges WHERE installation_id = ? ORDER BY period_start').pluck().all(installed.id)
  t.same(charges, ['charged', 'charged', 'charged'])
  t.equal(walletBalance(fourth.svc.db, owner), 500)
  t.equal(new Set(entries(fourth.svc.db, owner, 'app_recurring').map((e) => e.reference)).size, 3)
  await fourth.close()
})
