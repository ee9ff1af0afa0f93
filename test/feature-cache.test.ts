/**
 * Plan features are checked by every operation that names one (src/ops/op.ts `defineOp`), now from
 * a cache per auth epoch (src/storage/entitlements.ts, migration 039 moves the epoch on every change
 * of `entitlements`). A revocation or a grant, by the CLI or any other connection, must count from
 * the very next call: each case warms the cache first, so it fails without the invalidation.
 */
import t from 'tap'
import Database from 'better-sqlite3'
import { startServer } from './helpers/server.ts'
import { createAccount } from './helpers/fixtures.ts'
import { runCli } from '../src/cli.ts'
import { nowIso } from '../src/storage/db.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const other = new Database(s.dbPath)
other.pragma('busy_timeout = 5000')
t.teardown(() => other.close())
const cli = (...args: string[]) => runCli(args, { DB_PATH: s.dbPath, SITE_URL: s.site, LOG_LEVEL: 'silent' })

t.test('a plan change through the CLI counts from the next call', async (t) => {
  const a = createAccount(s.app.svc.db)
  const guests = () => s.req('GET', `/restaurants/${a.storeId}/guests`, { token: a.token })
  t.equal((await guests()).status, 200, 'the plan includes crm')
  t.equal((await guests()).status, 200, 'again, from the cache')
  t.equal(cli('plan', 'set', '--owner', String(a.ownerId), '--plan', 'free', '--json').code, 0, 'moved to the free plan (no crm)')
  const refused = await guests()
  t.equal(refused.status, 403, 'refused by the next call')
  t.equal(refused.body.reason, 'feature_not_in_plan')
  t.equal(cli('entitlement', 'grant', '--owner', String(a.ownerId), '--feature', 'crm', '--json').code, 0, 'crm granted by hand')
  t.equal((await guests()).status, 200, 'granted: the next call passes')
})

t.test('a feature revoked on another connection counts from the next call', async (t) => {
  const a = createAccount(s.app.svc.db)
  const guests = () => s.req('GET', `/restaurants/${a.storeId}/guests`, { token: a.token })
  t.equal((await guests()).status, 200)
  t.equal((await guests()).status, 200)
  other.prepare('UPDATE entitlements SET revoked_at = ? WHERE owner_id = ? AND feature_key = ?').run(nowIso(), a.ownerId, 'crm')
  t.equal((await guests()).status, 403, 'refused by the next call')
})
