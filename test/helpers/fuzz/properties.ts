/**
 * The properties every fuzzed request must keep (issue 21 item 1), shared by the CI tests
 * (test/fuzz-*.test.ts) and `npm run fuzz` (tools/fuzz.ts): never a 5xx, an answer within a
 * bound, every error as the api-v1 §7 envelope with a code from the catalog, and a 4xx writes
 * nothing (row counts and the highest rowid of every table, the outbox included, unchanged).
 */
import Database from 'better-sqlite3'
import { ERROR_CATALOG } from '../../../src/errors.ts'
import { specCode } from '../spec-errors.ts'

/** How long any single answer may take before it counts as a hang. */
export const ANSWER_BOUND_MS = 5000

/** The default seed of the CI sample; `FUZZ_SEED` (or `--seed`) overrides it. */
export const DEFAULT_SEED = 2121

/** `FUZZ_SEED` from the environment, else the default. */
export const seedFromEnv = (): number => (process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : DEFAULT_SEED)

/** A stable per-subject seed, so `--only` replays exactly the cases the full run sent to that subject. */
export function subSeed(seed: number, subject: string): number {
  let h = seed | 0
  for (let i = 0; i < subject.length; i++) h = Math.imul(h ^ subject.charCodeAt(i), 0x01000193)
  return h >>> 0
}

/**
 * Tables a refused request may legitimately write, each with why. Nothing else is excluded.
 */
export const MAY_WRITE_ON_4XX: Record<string, string> = {
  // The attempt log is written by webhook-endpoint actors on their own retry timers, whatever request
  // is in flight (a fuzzed `resume` un-pauses the world's endpoint). A refused request queuing a
  // delivery would show in `webhook_deliveries` and the outbox, which are compared.
  webhook_attempts: 'background delivery attempts',
  // FTS5 shadow tables: maintained by triggers of the catalog tables, whose own counts are compared.
  catalog_items_fts_data: 'FTS index of catalog items', catalog_items_fts_idx: 'FTS index', catalog_items_fts_docsize: 'FTS index', catalog_items_fts_config: 'FTS index',
  catalog_stores_fts_data: 'FTS index of catalog stores', catalog_stores_fts_idx: 'FTS index', catalog_stores_fts_docsize: 'FTS index', catalog_stores_fts_config: 'FTS index',
}

/** Row counts and highest rowids of every table, read through a second, read-only connection. */
export class Snapshots {
  private readonly db: Database.Database
  private readonly stmt: Database.Statement
  readonly tables: string[]

  constructor(dbPath: string) {
    this.db = new Database(dbPath, { readonly: true, fileMustExist: true })
    const all = this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[]
    // Virtual FTS tables are views of their shadow tables (above): they have no rowid counter to compare.
    this.tables = all.filter((t) => !(t in MAY_WRITE_ON_4XX) && !/_fts$/.test(t))
    // WITHOUT ROWID tables (auth_epoch) have no rowid: their count is compared alone.
    const noRowid = new Set(this.db.prepare("SELECT name FROM pragma_table_list WHERE schema = 'main' AND wr = 1").pluck().all() as string[])
    const cols = this.tables.map((t) =>
      noRowid.has(t) ? `(SELECT COUNT(*) || ':-' FROM "${t}") AS "${t}"` : `(SELECT COUNT(*) || ':' || IFNULL(MAX(rowid), 0) FROM "${t}") AS "${t}"`)
    this.stmt = this.db.prepare(`SELECT ${cols.join(', ')}`)
  }

  take(): Record<string, string> {
    return this.stmt.get() as Record<string, string>
  }

  /** Tables whose count or highest rowid differ, as `table count:max → count:max`. */
  static diff(a: Record<string, string>, b: Record<string, string>): string[] {
    return Object.keys(a).filter((t) => a[t] !== b[t]).map((t) => `${t} ${a[t]} → ${b[t]}`)
  }

  /**
   * Wait (bounded) until nothing is being written: work a 2xx set off after its reply (event
   * reactions, webhook attempts to the world's endpoint) must not be blamed on the next request.
   */
  async settle(maxMs = 1000): Promise<void> {
    const end = Date.now() + maxMs
    let last = JSON.stringify(this.take())
    while (Date.now() < end) {
      await new Promise((r) => setTimeout(r, 15))
      const now = JSON.stringify(this.take())
      if (now === last) return
      last = now
    }
  }

  close(): void { this.db.close() }
}

/** What is wrong with an error answer, or null: the §7 envelope `{message, code, reason, errors?, details?}`, `reason` a catalog code of the status, `code` the spec's. */
export function envelopeProblem(status: number, contentType: string | null, text: string): string | null {
  if (!contentType?.startsWith('application/json')) return `content-type ${contentType ?? 'none'} instead of the JSON envelope: ${text.slice(0, 200)}`
  let body: unknown
  try { body = JSON.parse(text) } catch { return `not JSON: ${text.slice(0, 200)}` }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return `not an object: ${text.slice(0, 200)}`
  const b = body as Record<string, unknown>
  if (typeof b.reason !== 'string' || !(b.reason in ERROR_CATALOG)) return `reason ${JSON.stringify(b.reason)} is not in the error catalog`
  if (typeof b.message !== 'string' || !b.message) return 'message missing'
  const entry = ERROR_CATALOG[b.reason as keyof typeof ERROR_CATALOG]
  if (entry.status !== status) return `reason ${b.reason} is catalogued as ${entry.status}, answered ${status}`
  if (b.code !== specCode(b.reason)) return `code ${JSON.stringify(b.code)} instead of ${specCode(b.reason)} (api-v1 §7)`
  // OAuth's token address also sends RFC 6749 §5.2 `error`/`error_description` (docs/apps.md).
  const extra = Object.keys(b).filter((k) => !['message', 'code', 'reason', 'errors', 'details', 'error', 'error_description'].includes(k))
  if (extra.length) return `unexpected keys ${extra.join(', ')}`
  if ('errors' in b && (!b.errors || typeof b.errors !== 'object' || Object.values(b.errors).some((v) => !Array.isArray(v) || !v.every((m) => typeof m === 'string')))) return '`errors` is not {field: [string]}'
  if (status === 422 && Object.keys((b.errors ?? {}) as object).length === 0) return 'a 422 without `errors`'
  return null
}

/** Requests sent and outcomes, by family and by status class; failures with their reproduction. */
export class Tally {
  sent = 0
  readonly byFamily: Record<string, number> = {}
  readonly byClass: Record<string, number> = {}
  readonly byKind: Record<string, number> = {}
  readonly failures: string[] = []

  count(family: string, kind: string, outcome: string): void {
    this.sent++
    this.byFamily[family] = (this.byFamily[family] ?? 0) + 1
    this.byKind[kind] = (this.byKind[kind] ?? 0) + 1
    this.byClass[outcome] = (this.byClass[outcome] ?? 0) + 1
  }

  summary(title: string): string {
    const fmt = (o: Record<string, number>) => Object.entries(o).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ')
    return `${title}: ${this.sent} sent, ${this.failures.length} failed\n  by family: ${fmt(this.byFamily)}\n  by outcome: ${fmt(this.byClass)}\n  by input: ${fmt(this.byKind)}`
  }
}

export const statusClass = (status: number): string => `${String(status)[0]}xx`
