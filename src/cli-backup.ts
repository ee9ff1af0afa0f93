/**
 * `dispatch backup <file>` and `dispatch restore <backup>` (issue 21 item 7; docs/running.md
 * "Backups and retention").
 *
 * Backup is online: SQLite's backup API (better-sqlite3 `db.backup()`) copies the database page by
 * page from a read snapshot, restarting when another connection writes, so a server may keep taking
 * orders meanwhile and the copy is still one consistent moment. The copy is checked with
 * `PRAGMA integrity_check` before the command reports success.
 *
 * Restore replaces DB_PATH and therefore refuses while anything has DB_PATH open. Detection is the
 * database's own locking, not a pid file: a connection in exclusive locking mode switches the file
 * out of WAL (`PRAGMA journal_mode = DELETE`), which SQLite allows only when no other connection
 * has it open, then holds `BEGIN EXCLUSIVE` while the checked backup is renamed into place. A
 * server running on DB_PATH makes the switch fail (refused, exit 1); a server starting during the
 * restore finds the file locked and fails to open instead of reading half a file. The database
 * replaced is kept beside it as `<DB_PATH>.pre-restore`.
 */
import Database from 'better-sqlite3'
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { loadConfig } from './config.ts'

export const BACKUP_USAGE = `  dispatch backup FILE [--json]        online copy of DB_PATH (safe while the server runs)
  dispatch restore BACKUP [--json]     replace DB_PATH with BACKUP (refused while a server has it open)`

class BackupError extends Error {
  constructor(message: string, readonly exitCode = 2) { super(message) }
}

type Result = { code: number; out: string }

/** Pages per backup step: more than any database here has, so one step copies everything. */
const ALL_PAGES = 2 ** 30

/** `backup`/`restore` argv, or null for every other command (src/cli.ts hands these over). */
export function isBackupCommand(argv: readonly string[]): boolean {
  const cmd = argv.find((a) => !a.startsWith('-'))
  return (cmd === 'backup' || cmd === 'restore') && !argv.includes('--help') && !argv.includes('-h')
}

function integrity(path: string): string {
  const db = new Database(path, { readonly: true, fileMustExist: true })
  try {
    return (db.pragma('integrity_check') as Array<{ integrity_check: string }>).map((r) => r.integrity_check).join('; ')
  } finally { db.close() }
}

/** Copy DB_PATH to `file` while the server may be writing to it. */
export async function backup(dbPath: string, file: string): Promise<{ file: string; bytes: number; pages: number; integrity: string }> {
  const target = resolve(file)
  if (existsSync(target)) throw new BackupError(`${file} already exists: choose a new file name (a backup never overwrites)`)
  if (!existsSync(dbPath)) throw new BackupError(`no database at DB_PATH=${dbPath}`)
  // Read-only on purpose: a backup must never migrate or write the live database.
  const src = new Database(dbPath, { readonly: true, fileMustExist: true })
  let pages = 0
  try {
    src.pragma('busy_timeout = 5000')
    // All pages in one step, under one read snapshot: in steps, every write the server commits in
    // between would restart the copy (from another process SQLite cannot carry the change over),
    // so a busy server could keep a stepwise backup from ever finishing. WAL readers do not block
    // the server's writers, so the single step costs the server nothing.
    await src.backup(target, { progress: (p) => { pages = p.totalPages; return ALL_PAGES } })
  } catch (err) {
    rmSync(target, { force: true })
    throw new BackupError(`backup failed: ${(err as Error).message}`, 1)
  } finally { src.close() }
  const check = integrity(target)
  if (check !== 'ok') throw new BackupError(`the backup at ${file} failed its integrity check: ${check}`, 1)
  return { file: target, bytes: statSync(target).size, pages, integrity: check }
}

/** Replace `dbPath` with the checked `from`, only when nothing else has `dbPath` open. */
export function restore(dbPath: string, from: string): { restored: string; from: string; previous: string | null; integrity: string } {
  const source = resolve(from)
  if (!existsSync(source)) throw new BackupError(`no backup at ${from}`)
  let check: string
  try { check = integrity(source) } catch (err) { throw new BackupError(`${from} is not a SQLite database: ${(err as Error).message}`) }
  if (check !== 'ok') throw new BackupError(`${from} failed its integrity check: ${check}`)
  const target = resolve(dbPath)
  if (target === source) throw new BackupError('the backup is DB_PATH itself')
  // Stage the copy next to the target so the final rename stays on one file system (atomic).
  const staged = `${target}.restoring`
  mkdirSync(dirname(target), { recursive: true })
  copyFileSync(source, staged)
  let lock: Database.Database | null = null
  let previous: string | null = null
  try {
    if (existsSync(target)) {
      lock = new Database(target, { fileMustExist: true })
      lock.pragma('busy_timeout = 0')
      lock.pragma('locking_mode = EXCLUSIVE')
      let mode: string
      try { mode = String(lock.pragma('journal_mode = DELETE', { simple: true })) } catch { mode = 'busy' }
      if (mode !== 'delete') throw new BackupError(`a server (or another process) has ${dbPath} open: stop it first, then restore`, 1)
      try { lock.exec('BEGIN EXCLUSIVE') } catch { throw new BackupError(`${dbPath} is locked by another process: stop it first, then restore`, 1) }
      previous = `${target}.pre-restore`
      rmSync(previous, { force: true })
      renameSync(target, previous)
    }
    // The WAL and index of the replaced file must not be applied to the restored one.
    rmSync(`${target}-wal`, { force: true })
    rmSync(`${target}-shm`, { force: true })
    renameSync(staged, target)
  } finally {
    lock?.close()
    rmSync(staged, { force: true })
  }
  return { restored: target, from: source, previous, integrity: check }
}

/** Run `backup` or `restore`; resolves to the exit code and what to print. */
export async function runBackupCli(argv: readonly string[], env: Record<string, string | undefined> = process.env): Promise<Result> {
  const json = argv.includes('--json')
  const [cmd, file, extra] = argv.filter((a) => a !== '--json')
  try {
    if (!file || file.startsWith('-') || extra !== undefined) throw new BackupError(`usage:\n${BACKUP_USAGE}`)
    const { dbPath } = loadConfig(env)
    if (dbPath === ':memory:') throw new BackupError('DB_PATH=:memory: has nothing to back up or restore: point DB_PATH at a file')
    if (cmd === 'backup') {
      const r = await backup(dbPath, file)
      return { code: 0, out: json ? JSON.stringify(r) : `backed up ${dbPath} to ${r.file} (${r.bytes} bytes, integrity ${r.integrity})` }
    }
    const r = restore(dbPath, file)
    return { code: 0, out: json ? JSON.stringify(r) : `restored ${r.restored} from ${r.from}${r.previous ? ` (the replaced database is at ${r.previous})` : ''}` }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    const code = err instanceof BackupError ? err.exitCode : /invalid configuration/i.test(message) ? 2 : 1
    return { code, out: json ? JSON.stringify({ error: message }) : `dispatch: ${message}` }
  }
}

/** The process entry for these commands (output to stdout on success, stderr on failure without --json). */
export function backupMain(argv: readonly string[]): void {
  void runBackupCli(argv).then(({ code, out }) => {
    const toStderr = code !== 0 && !argv.includes('--json')
    ;(toStderr ? process.stderr : process.stdout).write(out + '\n')
    process.exitCode = code
  })
}
