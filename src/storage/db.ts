/** Opening the SQLite database: WAL, synchronous=FULL on every open, numbered migrations. */
import Database from 'better-sqlite3'
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export type Db = Database.Database

const statements = new WeakMap<Db, Map<string, Database.Statement>>()

/**
 * `db.prepare(sql)`, once per connection and SQL text: preparing costs tens of µs and the menu
 * write path prepared ~20 statements per write (profiled: 0.4 ms of ~3 ms). The statement comes
 * back with `pluck` off, so a call site that does not pluck never sees another site's setting.
 */
export function stmt<P extends unknown[] | {} = unknown[], R = unknown>(db: Db, sql: string): Database.Statement<P, R> {
  let byText = statements.get(db)
  if (!byText) statements.set(db, (byText = new Map()))
  let s = byText.get(sql)
  if (!s) byText.set(sql, (s = db.prepare(sql)))
  else if (s.reader) s.pluck(false)
  return s as unknown as Database.Statement<P, R>
}

/**
 * `make(db)` once per connection (its prepared statements, a query object): the committer hands every
 * write the same connection, so statements prepared for it are reused, and a closed database's go with it.
 */
export function perDb<T>(make: (db: Db) => T): (db: Db) => T {
  const made = new WeakMap<Db, T>()
  return (db) => {
    let x = made.get(db)
    if (x === undefined) made.set(db, (x = make(db)))
    return x
  }
}

/** Rows grouped by a key (an item's variants, a store's batches), each group in the rows' order. */
export function groupBy<T, K>(rows: readonly T[], key: (r: T) => K): Map<K, T[]> {
  const m = new Map<K, T[]>()
  for (const r of rows) {
    const k = key(r)
    const list = m.get(k)
    if (list) list.push(r)
    else m.set(k, [r])
  }
  return m
}

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
  // Savepoints (one per write in a group-commit batch) journal the pages they change in a
  // sub-journal; on disk that is a temporary file created, written page by page and deleted per
  // savepoint: profiled at ~40 µs of system CPU per order. In memory it costs a copy. Durability is
  // the WAL's, not the sub-journal's (it only serves rolling one write back inside its transaction).
  db.pragma('temp_store = MEMORY')
  migrate(db)
  return db
}

/**
 * A migration whose first line is exactly this runs with foreign-key enforcement off: the opt-in for
 * rebuilding tables by SQLite's 12-step procedure (https://www.sqlite.org/lang_altertable.html#otheralter).
 * With enforcement on, the DROP TABLE of that procedure is an implicit DELETE that fires every
 * ON DELETE CASCADE / SET NULL of the tables that reference the dropped one, destroying their rows.
 * `PRAGMA foreign_keys` is a no-op inside a transaction, so the runner switches it off before the
 * migration's transaction, runs `PRAGMA foreign_key_check` inside it (any violation rolls the
 * migration back) and restores the previous setting afterwards, whether the migration worked or not.
 */
export const FOREIGN_KEYS_OFF_MARKER = '-- migrate: foreign_keys=off'

export interface Migration { version: number; name: string; sql: string; foreignKeysOff: boolean }

/** The `NNN_name.sql` files of `dir`, in order; two files with one number are refused, not skipped. */
export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort()
  const seen = new Map<number, string>()
  return files.map((name) => {
    const version = Number(name.slice(0, 3))
    const other = seen.get(version)
    if (other) throw new Error(`migrations ${other} and ${name} share the number ${version}: renumber one`)
    seen.set(version, name)
    const sql = readFileSync(join(dir, name), 'utf8')
    return { version, name, sql, foreignKeysOff: sql.split('\n', 1)[0]!.trim() === FOREIGN_KEYS_OFF_MARKER }
  })
}

/** Apply every migration not yet recorded in `schema_migrations`, in order, each atomically. */
export function migrate(db: Db, migrations: Migration[] = readMigrations()): number[] {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)')
  const done = new Set(db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[])
  const newest = Math.max(0, ...done)
  const applied: number[] = []
  for (const m of migrations) {
    if (done.has(m.version)) continue
    // Out of order, a migration could undo a later one (a table rebuild drops columns added since).
    if (m.version < newest) throw new Error(`migration ${m.name} is older than migration ${newest}, already applied: this database was migrated out of order; recreate it or restore it from before ${newest}`)
    const run = db.transaction(() => {
      db.exec(m.sql)
      if (m.foreignKeysOff) assertForeignKeys(db, m.name)
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString())
    })
    if (m.foreignKeysOff) withForeignKeysOff(db, () => run.immediate())
    else run.immediate()
    applied.push(m.version)
  }
  return applied
}

function withForeignKeysOff(db: Db, fn: () => void): void {
  if (db.inTransaction) throw new Error('a foreign_keys=off migration cannot run inside a transaction (PRAGMA foreign_keys is a no-op there)')
  const before = db.pragma('foreign_keys', { simple: true }) as number
  db.pragma('foreign_keys = OFF')
  try {
    fn()
  } finally {
    db.pragma(`foreign_keys = ${before ? 'ON' : 'OFF'}`)
  }
}

/** Step 10 of the procedure: the rebuilt schema must hold every row's references. */
function assertForeignKeys(db: Db, name: string): void {
  const bad = db.pragma('foreign_key_check') as Array<{ table: string; rowid: number; parent: string; fkid: number }>
  if (bad.length === 0) return
  const sample = bad.slice(0, 5).map((v) => `${v.table} rowid ${v.rowid} → ${v.parent}`).join(', ')
  throw new Error(`migration ${name} leaves ${bad.length} foreign key violation(s): ${sample}`)
}

/** The second `nowIso` last formatted, and its text up to the milliseconds ("YYYY-MM-DDTHH:MM:SS."). */
let isoSecond = Number.NaN
let isoPrefix = ''
const isoFull = (ms: number): string => new Date(ms).toISOString().replace('Z', '+00:00')

/**
 * ISO 8601 with an explicit UTC offset (api-v1 §2.2), e.g. 2026-11-22T20:30:00.000+00:00. Stamped on
 * every order, event and driver position: Date formatting costs about a microsecond, and the stamps
 * of one second share everything up to the milliseconds, so that part is formatted once per second.
 */
export function nowIso(ms: number = Date.now()): string {
  // Four-digit years and whole milliseconds only (toISOString writes others differently).
  if (!Number.isInteger(ms) || ms < 0 || ms >= 253402300800000) return isoFull(ms)
  const sec = Math.floor(ms / 1000)
  if (sec !== isoSecond) {
    isoPrefix = isoFull(sec * 1000).slice(0, 20)
    isoSecond = sec
  }
  const m = ms - sec * 1000
  return isoPrefix + (m < 10 ? '00' : m < 100 ? '0' : '') + m + '+00:00'
}
