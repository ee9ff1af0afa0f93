/**
 * Change capture for cluster mode (docs/cluster.md "Change capture"): every row a transaction on the
 * primary inserts, updates or deletes, in every table the server writes, is recorded by triggers
 * into `_changes` in that same transaction; the replicator drains the table into the batch message
 * before the commit (src/cluster/replicator.ts), and replicas replay the rows in order
 * (applyChanges). Complete by construction: the triggers are generated from the schema itself, for
 * every table but the ones below, and test/cluster-capture.test.ts fails for a table that is not.
 *
 * Not captured, because every node derives them itself or they are the node's own:
 * - `sqlite_*` (the AUTOINCREMENT counters follow the rows inserted), `schema_migrations` (each node
 *   runs the same migrations, at its own time);
 * - virtual tables and their shadow tables (the full-text indexes, kept by triggers on the base
 *   tables, which fire on replicas as they apply those rows);
 * - `_changes` and the `_cluster_*` bookkeeping of this file.
 *
 * Rows travel as JSON arrays of the table's columns in declared order (REAL values round-trip, and
 * replicas read values back with SQLite's own json_extract, so 64-bit integers stay exact); the
 * column names travel with the batch, so a replica binds by name. Replicas replay exactly what
 * happened: an insert is an insert, an update an update, a delete a delete, in the primary's order,
 * with foreign keys off (the primary's cascades are rows of the change set too). Inserts and updates
 * replay with OR REPLACE: a primary's `INSERT OR REPLACE` removes the row it replaces without firing
 * a delete trigger, so the replica removes it the same way.
 *
 * The single process never installs the triggers: outside cluster mode nothing here runs.
 */
import Database, { type Statement } from 'better-sqlite3'
import { existsSync } from 'node:fs'
import type { Db } from './db.ts'

export const OP = { insert: 1, update: 2, delete: 3 } as const
export type ChangeOp = (typeof OP)[keyof typeof OP]

/** One captured row change: table, op, rowid (null in WITHOUT ROWID tables), new row, old key. */
export type Change = [table: string, op: ChangeOp, rowid: number | null, row: string | null, oldKey: string | null]

/** What a drain hands the replicator: the changes in order and the columns of every table in them. */
export interface ChangeSet {
  columns: Record<string, string[]>
  changes: Change[]
}

export interface CapturedTable {
  name: string
  columns: string[]
  /** Primary-key columns of a WITHOUT ROWID table (its rows are keyed by them); null for rowid tables. */
  key: string[] | null
  /** Columns declared BLOB: JSON cannot hold bytes, so their values travel as `{"hex": …}` (`captured`, `replayed`). */
  blobs: string[]
}

/** A column's value as the capture triggers put it in a row's JSON array (bytes as `{"hex": …}`). */
const captured = (ref: string, c: string, blob: boolean): string =>
  blob ? `CASE WHEN typeof(${ref}.${q(c)}) = 'blob' THEN json_object('hex', hex(${ref}.${q(c)})) ELSE ${ref}.${q(c)} END` : `${ref}.${q(c)}`

/** The value of element `i` of a captured row (`@row`), bytes back from their `{"hex": …}` form. */
const replayed = (i: number, blob: boolean): string =>
  blob ? `CASE WHEN json_type(@row, '$[${i}]') = 'object' THEN unhex(json_extract(@row, '$[${i}].hex')) ELSE json_extract(@row, '$[${i}]') END` : `json_extract(@row, '$[${i}]')`

const TRIGGER_PREFIX = '_cap_'
const q = (name: string) => `"${name.replace(/"/g, '""')}"`

/** The bookkeeping tables: created on every node in cluster mode (never by a migration). */
export function ensureChangeTables(db: Db): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS _changes (id INTEGER PRIMARY KEY, tbl TEXT NOT NULL, op INTEGER NOT NULL, rid INTEGER, row TEXT, old TEXT);
    CREATE TABLE IF NOT EXISTS _cluster_state (k TEXT PRIMARY KEY, v) WITHOUT ROWID;
  `)
}

/** Every table whose rows the cluster replicates, with its columns, from the schema as it is now. */
export function capturedTables(db: Db): CapturedTable[] {
  const all = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string; sql: string | null }>
  const virtual = all.filter((t) => /^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(t.sql ?? '')).map((t) => t.name)
  const skipped = (name: string) =>
    name.startsWith('sqlite_') || name === 'schema_migrations' || name === '_changes' || name.startsWith('_cluster_') ||
    virtual.some((v) => name === v || name.startsWith(`${v}_`))
  return all.filter((t) => !skipped(t.name)).map((t) => {
    const cols = db.prepare(`SELECT name, pk, type FROM pragma_table_info(?) ORDER BY cid`).all(t.name) as Array<{ name: string; pk: number; type: string }>
    const withoutRowid = /\)\s*WITHOUT\s+ROWID\s*;?\s*$/i.test(t.sql ?? '')
    const key = withoutRowid ? cols.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name) : null
    return { name: t.name, columns: cols.map((c) => c.name), key, blobs: cols.filter((c) => /^BLOB$/i.test(c.type)).map((c) => c.name) }
  })
}

/** (Re)create the capture triggers of every captured table; returns the tables (the drain's columns). */
export function installCapture(db: Db): CapturedTable[] {
  const tables = capturedTables(db)
  db.transaction(() => {
    removeCaptureTriggers(db)
    for (const t of tables) {
      const row = (ref: 'NEW' | 'OLD') => `json_array(${t.columns.map((c) => captured(ref, c, t.blobs.includes(c))).join(', ')})`
      const rid = (ref: 'NEW' | 'OLD') => (t.key ? 'NULL' : `${ref}.rowid`)
      const oldKey = t.key ? `json_array(${t.key.map((c) => `OLD.${q(c)}`).join(', ')})` : 'NULL'
      const name = (op: string) => q(`${TRIGGER_PREFIX}${t.name}_${op}`)
      db.exec(`CREATE TRIGGER ${name('i')} AFTER INSERT ON ${q(t.name)} BEGIN
        INSERT INTO _changes (tbl, op, rid, row) VALUES ('${t.name}', ${OP.insert}, ${rid('NEW')}, ${row('NEW')}); END`)
      // An update that moves a row's rowid is its old row deleted and the new one inserted.
      db.exec(`CREATE TRIGGER ${name('u')} AFTER UPDATE ON ${q(t.name)} BEGIN
        ${t.key ? '' : `INSERT INTO _changes (tbl, op, rid) SELECT '${t.name}', ${OP.delete}, OLD.rowid WHERE OLD.rowid IS NOT NEW.rowid;`}
        INSERT INTO _changes (tbl, op, rid, row, old) VALUES ('${t.name}', ${t.key ? OP.update : `CASE WHEN OLD.rowid IS NOT NEW.rowid THEN ${OP.insert} ELSE ${OP.update} END`}, ${rid('NEW')}, ${row('NEW')}, ${oldKey}); END`)
      db.exec(`CREATE TRIGGER ${name('d')} AFTER DELETE ON ${q(t.name)} BEGIN
        INSERT INTO _changes (tbl, op, rid, old) VALUES ('${t.name}', ${OP.delete}, ${rid('OLD')}, ${oldKey}); END`)
    }
  }).immediate()
  return tables
}

function removeCaptureTriggers(db: Db): void {
  const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '\\_cap\\_%' ESCAPE '\\'").pluck().all() as string[]
  for (const n of names) db.exec(`DROP TRIGGER IF EXISTS ${q(n)}`)
}

/**
 * Before a node opens its file (and runs migrations): the capture triggers a previous primary role
 * left go, so the migrations' own row changes are not taken for unsent writes; `_changes` is kept,
 * for the divergence check to see what a crashed primary captured and never sent.
 */
export function dropCaptureTriggersOf(path: string): void {
  if (path === ':memory:' || !existsSync(path)) return
  const db = new Database(path)
  try {
    db.pragma('busy_timeout = 5000')
    removeCaptureTriggers(db)
  } finally {
    db.close()
  }
}

/** A replica captures nothing: its rows come from the stream. */
export function removeCapture(db: Db): void {
  db.transaction(() => {
    removeCaptureTriggers(db)
    db.exec('DELETE FROM _changes')
  }).immediate()
}

/** Drains `_changes` inside the caller's transaction; null when the transaction changed nothing. */
export class ChangeDrain {
  private readonly read: Statement<[], Change>
  private readonly clear: Statement
  private readonly columns: Map<string, string[]>

  constructor(db: Db, tables: readonly CapturedTable[]) {
    this.read = db.prepare<[], Change>('SELECT tbl, op, rid, row, old FROM _changes ORDER BY id').raw(true)
    this.clear = db.prepare('DELETE FROM _changes')
    this.columns = new Map(tables.map((t) => [t.name, t.columns]))
  }

  drain(): ChangeSet | null {
    const changes = this.read.all()
    if (changes.length === 0) return null
    this.clear.run()
    const columns: Record<string, string[]> = {}
    for (const c of changes) columns[c[0]] ??= this.columns.get(c[0])!
    return { columns, changes }
  }
}

/**
 * Replays change sets on a replica, on its own connection, statements prepared once per table and
 * column list. A row that cannot be replayed (a constraint the primary's row did not break) throws:
 * the replica's data would no longer be the primary's, so the caller stops applying.
 */
export class ChangeApplier {
  private readonly statements = new Map<string, Statement>()
  private readonly tables = new Map<string, { key: string[] | null; blobs: string[] }>()

  constructor(private readonly db: Db) {}

  /** Keys of the WITHOUT ROWID tables here and BLOB columns (the replica's own schema decides how rows are found and read). */
  private shapeOf(table: string): { key: string[] | null; blobs: string[] } {
    if (!this.tables.has(table)) {
      const t = capturedTables(this.db).find((x) => x.name === table)
      this.tables.set(table, { key: t?.key ?? null, blobs: t?.blobs ?? [] })
    }
    return this.tables.get(table)!
  }

  private statement(sig: string, sql: () => string): Statement {
    let s = this.statements.get(sig)
    if (!s) this.statements.set(sig, (s = this.db.prepare(sql())))
    return s
  }

  apply(set: ChangeSet): void {
    for (const [table, op, rid, row, old] of set.changes) {
      const cols = set.columns[table]
      if (!cols) throw new Error(`change set without the columns of ${table}`)
      const { key, blobs } = this.shapeOf(table)
      const value = (i: number) => replayed(i, blobs.includes(cols[i]!))
      const byKey = (from: string) => key!.map((k, i) => `${q(k)} = json_extract(${from}, '$[${i}]')`).join(' AND ')
      if (op === OP.insert) {
        this.statement(`${table}|${op}|${cols.join(',')}`, () => key
          ? `INSERT OR REPLACE INTO ${q(table)} (${cols.map(q).join(', ')}) VALUES (${cols.map((_, i) => value(i)).join(', ')})`
          : `INSERT OR REPLACE INTO ${q(table)} (rowid, ${cols.map(q).join(', ')}) VALUES (@rid, ${cols.map((_, i) => value(i)).join(', ')})`)
          .run(key ? { row } : { row, rid })
      } else if (op === OP.update) {
        const assign = cols.map((c, i) => `${q(c)} = ${value(i)}`).join(', ')
        const r = this.statement(`${table}|${op}|${cols.join(',')}`, () => `UPDATE OR REPLACE ${q(table)} SET ${assign} WHERE ${key ? byKey('@old') : 'rowid = @rid'}`)
          .run(key ? { row, old } : { row, rid })
        if (r.changes !== 1) throw new Error(`replayed update of ${table} ${key ? old : rid} changed ${r.changes} rows`)
      } else {
        this.statement(`${table}|${op}`, () => `DELETE FROM ${q(table)} WHERE ${key ? byKey('@old') : 'rowid = @rid'}`)
          .run(key ? { old } : { rid })
      }
    }
  }
}

/**
 * The role a database file has in a cluster, as the file itself says: `replica` (it applies the
 * stream: nothing else may write to it), `primary` (its writes are captured) or null (a single
 * server's file). Read by the operator CLI before it opens (and migrates) the file.
 */
export function clusterRoleOfFile(path: string): 'primary' | 'replica' | null {
  if (path === ':memory:' || !existsSync(path)) return null
  const db = new Database(path, { readonly: true })
  try {
    return clusterRoleOf(db)
  } finally {
    db.close()
  }
}

export function clusterRoleOf(db: Db): 'primary' | 'replica' | null {
  const hasState = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_cluster_state'").get()
  if (!hasState) return null
  const capturing = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name LIKE '\\_cap\\_%' ESCAPE '\\' LIMIT 1").get()
  return capturing ? 'primary' : 'replica'
}
