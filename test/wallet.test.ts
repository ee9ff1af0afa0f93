/**
 * The wallet (docs/billing.md "The wallet"): `dispatch wallet top-up` output, GET /wallet (balance
 * and entries, newest first, paginated, the caller's own only), the balance never below zero, and
 * references that make a charge or top-up safe to repeat.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createOwner, tokenFor } from './helpers/fixtures.ts'
import { runCli } from '../src/cli.ts'
import { credit, debit, walletBalance } from '../src/storage/wallet.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const env = { DB_PATH: s.dbPath, SITE_URL: s.site, LOG_LEVEL: 'silent' }
const ownerId = createOwner(db, undefined, 'growth')
const token = tokenFor(db, ownerId, ['*'])

t.test('top-up by the CLI: exact JSON, decimal amounts to minor units', async (t) => {
  const r = runCli(['wallet', 'top-up', '--owner', String(ownerId), '--amount', '25.00', '--json'], env)
  t.equal(r.code, 0)
  const out = JSON.parse(r.out)
  t.same(Object.keys(out).sort(), ['amount', 'balance', 'currency', 'entry_id', 'owner_id', 'repeated'])
  t.match(out, { owner_id: ownerId, entry_id: Number, amount: '25.00', balance: '25.00', currency: 'USD', repeated: false })
  const r2 = JSON.parse(runCli(['wallet', 'top-up', '--owner', String(ownerId), '--amount', '0.1', '--reference', 'gift-1', '--json'], env).out)
  t.match(r2, { amount: '0.10', balance: '25.10' })
  const again = JSON.parse(runCli(['wallet', 'top-up', '--owner', String(ownerId), '--amount', '0.1', '--reference', 'gift-1', '--json'], env).out)
  t.match(again, { entry_id: r2.entry_id, balance: '25.10', repeated: true }, 'a repeated reference is a no-op')
  for (const bad of ['-5', '0', '1.234', 'ten', '']) {
    t.throws(() => runCli(['wallet', 'top-up', '--owner', String(ownerId), '--amount', bad, '--json'], env), /--amount/, `--amount ${bad} refused`)
  }
  t.throws(() => runCli(['wallet', 'top-up', '--owner', '999999', '--amount', '1', '--json'], env), /no owner/)
  t.equal(walletBalance(db, ownerId), 2510, 'refusals wrote nothing')
})

t.test('GET /wallet: balance and entries, newest first, 25 per page', async (t) => {
  db.transaction(() => { for (let i = 0; i < 30; i++) credit(db, ownerId, 100, 'top_up', `bulk-${i}`, 'test') })()
  const p1 = await s.req('GET', '/wallet', { token })
  t.equal(p1.status, 200)
  t.match(p1.body, { balance: 55.1, currency: 'USD', current_page: 1, last_page: 2, per_page: 25, total: 32 })
  t.equal(p1.body.data.length, 25)
  t.match(p1.body.data[0], { amount: 1, reason: 'top_up', reference: 'bulk-29', created_by: 'test' })
  const p2 = await s.req('GET', '/wallet?page=2', { token })
  t.equal(p2.body.data.length, 7)
  t.match(p2.body.data.at(-1), { amount: 25, reason: 'top_up', reference: null, created_by: 'cli' })
  t.equal((await s.req('GET', '/wallet?page=0', { token })).status, 422)
  const other = createOwner(db, undefined, 'growth')
  const o = await s.req('GET', '/wallet', { token: tokenFor(db, other, ['read']) })
  t.match(o.body, { balance: 0, total: 0, data: [] }, 'another account sees only its own wallet')
})

t.test('the balance never goes below zero', async (t) => {
  const poor = createOwner(db, undefined, 'growth')
  db.transaction(() => credit(db, poor, 500, 'top_up', null))()
  t.equal(db.transaction(() => debit(db, poor, 501, 'app_fee', 'fee-1'))(), false, 'a debit that would go negative is refused')
  t.equal(walletBalance(db, poor), 500, 'and writes nothing')
  t.match(db.transaction(() => debit(db, poor, 500, 'app_fee', 'fee-2'))(), { balance: 0, repeated: false })
  t.match(db.transaction(() => debit(db, poor, 500, 'app_fee', 'fee-2'))(), { balance: 0, repeated: true }, 'a repeated charge is not taken twice')
  t.equal(db.transaction(() => debit(db, poor, 1, 'app_fee', 'fee-3'))(), false)
  const w = await s.req('GET', '/wallet', { token: tokenFor(db, poor, ['read']) })
  t.match(w.body, { balance: 0, total: 2 })
  t.match(w.body.data[0], { amount: -5, reason: 'app_fee', reference: 'fee-2' })
})
