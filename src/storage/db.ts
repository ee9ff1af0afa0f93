/** Opening the SQLite database: WAL, synchronous=FULL on every open, numbered migrations. */
import Database from 'better-sqlite3'
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export type Db = Database.Database

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations')

export function openDb(path: string): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  // better-sqlite3 comes up NORMAL; FULL makes every commit survive power loss, not just a crash.
  db.pragma('synchronous = FULL')
  db.pragma('foreign_keys = ON')
  // Another process (the CLI) may write while the server runs: wait instead of failing.
  db.pragma('busy_timeout = 5000')
  migrate(db)
  return db
}

/** Apply every `NNN_name.sql` not yet recorded in `schema_migrations`, in order, each atomically. */
export function migrate(db: Db): number[] {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)')
  const done = new Set(db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[])
  const files = readdirSync(MIGRATIONS_DIR).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort()
  const applied: number[] = []
  for (const file of files) {
    const version = Number(file.slice(0, 3))
    if (done.has(version)) continue
    const sql = readFileSync(join(MIGRATIONS_DIR, file), 'utf8')
    db.transaction(() => {
      db.exec(sql)
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(version, file, new Date().toISOString())
    }).immediate()
    applied.push(version)
  }
  return applied
}

/** ISO 8601 with an explicit UTC offset (api-v1 §2.2), e.g. 2026-11-22T20:30:00.000+00:00. */
export const nowIso = (ms: number = Date.now()): string => new Date(ms).toISOString().replace('Z', '+00:00')
