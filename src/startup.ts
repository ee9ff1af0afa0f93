/**
 * What `main.ts` checks before it serves, and how it fails: one line on stderr and a documented
 * exit code (docs/running.md "Exit codes"), never a stack trace for a mistake an operator made.
 */
import { closeSync, mkdirSync, openSync, statSync, unlinkSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'

/** sysexits(3) numbers, so systemd and container runtimes can tell a bad setting from a crash. */
export const EXIT = {
  /** A setting is invalid (EX_CONFIG). */
  config: 78,
  /** The database cannot be created or opened (EX_CANTCREAT). */
  database: 73,
  /** The address cannot be listened on: the port is taken or not allowed (EX_UNAVAILABLE). */
  listen: 69,
  /** The drain did not finish within SHUTDOWN_TIMEOUT_MS; the process exited anyway (EX_SOFTWARE). */
  shutdownTimeout: 70,
  /** Cluster mode: NATS cannot be reached or its stream and bucket cannot be set up (EX_UNAVAILABLE, as listen). */
  unavailable: 69,
  /** Cluster mode: this primary lost its lease or was fenced by the stream; restart it, it rejoins as a replica (EX_TEMPFAIL). */
  fenced: 75,
} as const

/** A refusal to start, for `fatal`: its message is the whole line the operator reads. */
export class StartupError extends Error {
  constructor(readonly exitCode: number, message: string) { super(message) }
}

/** Print `dispatch: <message>` and exit; the only way main.ts stops before it serves. */
export function fatal(err: unknown, fallbackCode = 1): never {
  const code = err instanceof StartupError ? err.exitCode : fallbackCode
  const msg = err instanceof Error ? err.message : String(err)
  process.stderr.write(`dispatch: ${msg.split('\n')[0]}\n`)
  process.exit(code)
}

/**
 * DB_PATH's folder exists (created here, one level at a time) and takes a new file. Checked by
 * writing, not by `access(2)`: root passes every permission check, yet cannot create files on a
 * read-only mount or in /proc — where a recursive mkdir never returns.
 */
export function checkDbFolder(dbPath: string): void {
  if (dbPath === ':memory:') return
  const dir = resolve(dirname(dbPath))
  const refuse = (why: string) => new StartupError(EXIT.database, `DB_PATH=${dbPath}: ${why}`)
  const missing: string[] = []
  for (let d = dir; ; d = dirname(d)) {
    let st
    try { st = statSync(d) } catch { missing.unshift(d); if (d === dirname(d)) break; continue }
    if (!st.isDirectory()) throw refuse(`${d} is not a folder`)
    break
  }
  for (const d of missing) {
    try { mkdirSync(d) } catch (e) { throw refuse(`cannot create the folder ${d} (${(e as NodeJS.ErrnoException).code ?? String(e)})`) }
  }
  const probe = join(dir, `.dispatch-write-check-${process.pid}`)
  try {
    closeSync(openSync(probe, 'wx'))
    unlinkSync(probe)
  } catch (e) {
    throw refuse(`the folder ${dir} is not writable (${(e as NodeJS.ErrnoException).code ?? String(e)})`)
  }
}
