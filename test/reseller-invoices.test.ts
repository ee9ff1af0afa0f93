/**
 * Reseller invoices from the billing run (docs/billing.md "Resellers"): one platform invoice per
 * reseller per complete 30-day period (wholesale per active customer less the tier discount), one
 * customer invoice per renewal on a reseller plan; idempotent and catch-up safe; numbered without
 * gaps even when an attempt fails and rolls back; immutable once issued. Time travel through
 * runBilling's `at` (the same function `dispatch billing run --at` calls).
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount } from './helpers/fixtures.ts'
import { runBilling } from '../src/billing/run.ts'
import { nowIso } from '../src/storage/db.ts'
import { planByKey } from '../src/storage/plans.ts'
import { credit } from '../src/storage/wallet.ts'
import { grantReseller, insertAccount, insertResellerPlan, startCustomerPlan } from '../src/storage/reseller.ts'
import { discountOf, invoiceTotals, tierStatus } from '../src/domain/reseller.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '1000000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const DAY = 86_400_000

/** A reseller with `n` customers on its own Growth-based plan (39.00 retail, 15.00 wholesale), all starting at `start`. */
function reseller(n: number, start: number) {
  const acc = createAccount(db)
  const at = nowIso(start)
  grantReseller(db, acc.ownerId, at)
  const base = planByKey(db, 'growth')!
  const plan = insertResellerPlan(db, acc.ownerId, {
    key: `r${acc.ownerId}-t-${n}`, name: 'Test plan', basePlanId: base.id, price: 3900, currency: 'USD', periodDays: 30, trialDays: 0, features: ['kds'], quotas: base.quotas,
  }, at)
  const customers = Array.from({ length: n }, (_, i) => {
    const id = insertAccount(db, { name: `C${i}`, email: `c${i}@example.com`, resellerId: acc.ownerId }, at)
    startCustomerPlan(db, id, plan.key, at)
    return id
  })
  return { ...acc, customers }
}

const invoices = (id: number) => db.prepare('SELECT * FROM reseller_invoices WHERE reseller_id = ? ORDER BY seq').all(id) as Array<Record<string, any>>
const seqs = () => db.prepare('SELECT seq FROM reseller_invoices ORDER BY seq').pluck().all() as number[]
const contiguous = (xs: number[]) => xs.every((x, i) => x === i + 1)

t.test('invoice math: tiers and the integer discount rounding', async (t) => {
  t.equal(discountOf(18000, 10), 1800)
  t.equal(discountOf(1005, 10), 101, '100.5 rounds half up')
  t.equal(discountOf(1004, 10), 100)
  t.same(tierStatus(9).next, { tier: tierStatus(10).tier, customers_needed: 1 })
  t.equal(tierStatus(200).next, null, 'top tier')
  const lines = Array.from({ length: 50 }, (_, i) => ({ customer_id: i, plan_id: 1, base_plan_key: 'growth', wholesale: 1500 }))
  t.match(invoiceTotals(lines), { active_customers: 50, tier: 'gold', discount_percent: 20, subtotal: 75000, discount: 15000, total: 60000 })
})

const start = Date.now()
const big = reseller(12, start)
const small = reseller(2, start)
// One of the small reseller's customers can pay its renewal; the other cannot (past due: no invoice).
credit(db, small.customers[0]!, 10_000, 'top_up', 'test', 'test')

t.test('the billing run issues one invoice per reseller per complete period, with the tier discount', async (t) => {
  runBilling(db, new Date(start + 29 * DAY))
  t.same(invoices(big.ownerId), [], 'nothing before the period is complete')
  const report = runBilling(db, new Date(start + 31 * DAY))
  t.ok((report.tasks.reseller_invoicing ?? []).length >= 2, 'the run reports what it issued')
  const [inv] = invoices(big.ownerId)
  t.match(inv, { active_customers: 12, tier: 'silver', discount_percent: 10, subtotal: 18000, discount: 1800, total: 16200, period_start: nowIso(start), period_end: nowIso(start + 30 * DAY) })
  t.equal(JSON.parse(inv!.lines).length, 12, 'one line per active customer')
  t.match(invoices(small.ownerId)[0], { active_customers: 2, tier: 'starter', subtotal: 3000, discount: 0, total: 3000 })

  const api = await s.req('GET', '/reseller/invoices', { token: big.token })
  t.equal(api.status, 200)
  t.match(api.body.data[0], { number: inv!.number, total: 162, subtotal: 180, discount: 18, status: 'issued', lines: Array })

  runBilling(db, new Date(start + 31 * DAY))
  t.equal(invoices(big.ownerId).length, 1, 'a repeated run issues nothing twice')
  t.ok(contiguous(seqs()), 'numbers without gaps')
})

t.test('customer invoices: one per renewal charged on a reseller plan, in the reseller\'s own series', async (t) => {
  const rows = db.prepare('SELECT * FROM customer_invoices WHERE reseller_id = ? ORDER BY seq').all(small.ownerId) as Array<Record<string, any>>
  t.equal(rows.length, 1, 'only the customer whose renewal was paid')
  t.match(rows[0], { customer_id: small.customers[0], amount: 3900, seq: 1, number: `R${small.ownerId}-000001` })
  const api = await s.req('GET', '/reseller/customer-invoices', { token: small.token })
  t.match(api.body, { total: 1, data: [{ amount: 39, customer_id: small.customers[0], status: 'issued' }] })
  runBilling(db, new Date(start + 31 * DAY))
  t.equal(db.prepare('SELECT COUNT(*) FROM customer_invoices').pluck().get(), 1, 'not issued twice')
  const other = await s.req('GET', '/reseller/customer-invoices', { token: big.token })
  t.equal(other.body.total, 0, "another reseller's customer invoices are not visible")
})

t.test('numbering stays gap-free when an attempt fails and rolls back', async (t) => {
  const failing = reseller(1, start)
  const fine = reseller(1, start)
  // An injected failure at the insert, after the failing reseller's number was counted.
  db.exec(`CREATE TEMP TRIGGER fail_invoice BEFORE INSERT ON reseller_invoices WHEN NEW.reseller_id = ${failing.ownerId}
    BEGIN SELECT RAISE(ABORT, 'injected failure'); END`)
  const report = runBilling(db, new Date(start + 31 * DAY))
  db.exec('DROP TRIGGER fail_invoice')
  t.match(report.tasks.reseller_invoicing, [{ kind: 'failed', reseller_id: failing.ownerId, error: /injected/ }, { kind: 'reseller_invoice', reseller_id: fine.ownerId }])
  t.equal(invoices(failing.ownerId).length, 0, 'the failed invoice was rolled back')
  t.ok(contiguous(seqs()), 'the next invoice took the number the failed one would have had')
  runBilling(db, new Date(start + 31 * DAY))
  t.equal(invoices(failing.ownerId).length, 1, 'the next run issues it')
  t.ok(contiguous(seqs()), `still without gaps: ${seqs().join(',')}`)
})

t.test('catch-up after downtime: each missed period once, in order', async (t) => {
  const late = reseller(1, start)
  runBilling(db, new Date(start + 95 * DAY))
  const rows = invoices(late.ownerId)
  t.same(rows.map((r) => r.period_start), [0, 1, 2].map((k) => nowIso(start + k * 30 * DAY)), 'three periods, oldest first')
  t.ok(rows.every((r, i) => i === 0 || r.seq > rows[i - 1]!.seq), 'numbered in period order')
  runBilling(db, new Date(start + 95 * DAY))
  t.equal(invoices(late.ownerId).length, 3, 'no duplicates')
  t.ok(contiguous(seqs()))
})

t.test('issued invoices are immutable', async (t) => {
  const [inv] = invoices(big.ownerId)
  t.throws(() => db.prepare('UPDATE reseller_invoices SET total = 0 WHERE id = ?').run(inv!.id), /immutable/, 'UPDATE fails')
  t.throws(() => db.prepare('DELETE FROM reseller_invoices WHERE id = ?').run(inv!.id), /immutable/, 'DELETE fails')
  const ci = db.prepare('SELECT id FROM customer_invoices LIMIT 1').pluck().get() as number
  t.throws(() => db.prepare('UPDATE customer_invoices SET amount = 1 WHERE id = ?').run(ci), /immutable/)
  t.throws(() => db.prepare('DELETE FROM customer_invoices WHERE id = ?').run(ci), /immutable/)
  t.equal(invoices(big.ownerId)[0]!.total, 16200, 'unchanged')
})
