/** Readiness of the database for `GET /readyz` (docs/running.md "Health and readiness"). */
import { readMigrations, stmt, type Db } from './db.ts'

/** The newest migration this build ships; read once, the files do not change while it runs. */
let newest: number | undefined

export interface DbReadiness {
  /** The database answered a query. */
  database: boolean
  /** Every migration file of this build is recorded as applied. */
  migrations: boolean
}

export function databaseReadiness(db: Db): DbReadiness {
  newest ??= Math.max(0, ...readMigrations().map((m) => m.version))
  try {
    const applied = stmt(db, 'SELECT MAX(version) FROM schema_migrations').pluck().get() as number | null
    return { database: true, migrations: (applied ?? 0) >= newest }
  } catch {
    return { database: false, migrations: false }
  }
}
