/**
 * Put an account on a plan with every feature and no quota (`bench-unlimited`), written straight
 * into a stopped or running server's database: benches measure capacity, and a plan's quotas
 * (Pro: 200 drivers, 20 webhook endpoints) would refuse their set-up part-way. The quota checks
 * themselves still run on every request.
 */
import Database from 'better-sqlite3'
import { setAccountPlan } from '../../src/storage/plans.ts'
import { FEATURE_KEYS } from '../../src/domain/plans.ts'

export function unlimitedPlan(dbPath: string, ownerId: number): void {
  const db = new Database(dbPath)
  try {
    db.pragma('busy_timeout = 5000')
    db.prepare(`INSERT OR IGNORE INTO plans (key, name, price, features, quotas, created_at) VALUES ('bench-unlimited', 'Bench', 0, ?, '{}', ?)`)
      .run(JSON.stringify([...FEATURE_KEYS]), new Date().toISOString())
    db.transaction(() => setAccountPlan(db as never, ownerId, 'bench-unlimited'))()
  } finally {
    db.close()
  }
}
