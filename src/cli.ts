/**
 * Operator CLI (`dispatch …`), honouring the same environment as the server (DB_PATH, SITE_URL, …).
 * Safe while a server runs on the same database: SQLite WAL allows one writer at a time, the server
 * reads tokens and stores from SQLite on every use, so changes take effect at once; sockets opened
 * with a revoked token close within about half a second (the server watches `PRAGMA data_version`,
 * src/ws/sessions.ts).
 */
import { parseArgs } from 'node:util'
import { loadConfig } from './config.ts'
import { openDb, nowIso, migrate } from './storage/db.ts'
import { clusterRoleOfFile } from './storage/changes.ts'
import { lastWriterOfFile } from './cluster/state.ts'
import { syncPlatformPlans } from './storage/plans.ts'
import { STORE_TYPES, type StoreType } from './domain/verticals.ts'
import { seedDemo, createOwnerToken } from './seed.ts'
import { sha256Hex } from './auth/tokens.ts'
import { isValidCapability } from './domain/capabilities.ts'
import { ACCOUNTS_USAGE, accountsCommand } from './cli-accounts.ts'
import { BILLING_USAGE, billingCommand } from './cli-billing.ts'
import { RESELLER_OPTIONS, RESELLER_USAGE, runResellerCli } from './cli-reseller.ts'
import { OWNER_OPTIONS, OWNER_USAGE, ownerCommand } from './cli-owner.ts'
import { APP_OPTIONS, APP_USAGE, appCommand } from './cli-apps.ts'
import { ApiError } from './errors.ts'
import { requireQuota } from './storage/entitlements.ts'
import { closest, preflight } from './cli-help.ts'
import { TOKEN_LIST_USAGE, tokenList } from './cli-tokens.ts'
import { STORE_OPTIONS, STORE_USAGE, storeCreate } from './cli-stores.ts'
import { BACKUP_USAGE, backupMain, isBackupCommand } from './cli-backup.ts'

const USAGE = `usage:
  dispatch seed --demo [--type STORE_TYPE] [--json]
  dispatch token create --owner ID --scopes LIST [--expires-in DURATION] [--name NAME] [--json]
  dispatch token revoke --token TOKEN [--json]
${TOKEN_LIST_USAGE}
${STORE_USAGE}
${ACCOUNTS_USAGE}
${BILLING_USAGE}
${RESELLER_USAGE}
${OWNER_USAGE}
${APP_USAGE}
  dispatch migrate [--json]
${BACKUP_USAGE}

LIST is comma-separated capabilities: *, read, write, or resource:action
(resources: restaurants, menu, orders, customers, analytics, drivers, webhooks).
DURATION is a number with a unit: 30s, 15m, 12h, 7d.`

export class CliError extends Error {}

function parseDuration(s: string): number {
  const m = /^(\d+)\s*([smhd])$/.exec(s.trim())
  if (!m) throw new CliError(`invalid --expires-in "${s}": use e.g. 30s, 15m, 12h, 7d`)
  const unit = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 }[m[2] as 's' | 'm' | 'h' | 'd']
  return Number(m[1]) * unit
}

const OPTIONS = {
  demo: { type: 'boolean' }, json: { type: 'boolean' }, owner: { type: 'string' }, scopes: { type: 'string' },
  'expires-in': { type: 'string' }, name: { type: 'string' }, token: { type: 'string' }, help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  plan: { type: 'string' }, feature: { type: 'string' }, reason: { type: 'string' },
  amount: { type: 'string' }, at: { type: 'string' }, reference: { type: 'string' },
  ...RESELLER_OPTIONS, ...OWNER_OPTIONS, ...APP_OPTIONS, ...STORE_OPTIONS,
} as const

/** parseArgs, with its complaints turned into what to type instead (exit 2). */
function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options: OPTIONS })
  } catch (err) {
    const words = argv.filter((a) => !a.startsWith('-')).slice(0, 2).join(' ')
    const option = /'(--?[\w-]+)/.exec(err instanceof Error ? err.message : '')?.[1]
    const guess = option?.startsWith('--') ? closest(option.slice(2), Object.keys(OPTIONS)) : null
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.replace(/\. To specify a positional.*$/, '')
    throw new CliError(`${message}${guess ? `; did you mean --${guess}?` : '.'} Run "dispatch ${words ? `${words} ` : ''}--help" for the usage.`)
  }
}

export function runCli(argv: string[], env: Record<string, string | undefined> = process.env): { code: number; out: string } {
  const { values, positionals } = parse(argv)
  const json = Boolean(values.json)
  const emit = (obj: Record<string, unknown>, text: string) => (json ? JSON.stringify(obj) : text)
  const [cmd, sub] = positionals
  // Help, --version, a group alone and mistyped words need no database (src/cli-help.ts).
  const early = preflight(USAGE, positionals, values, emit, (m) => new CliError(m))
  if (early) return early
  if (!cmd) return { code: 2, out: USAGE }

  const config = loadConfig(env)
  if (config.dbPath === ':memory:') throw new CliError('DB_PATH=:memory: has nothing to share with a server: point DB_PATH at a file')
  // A cluster replica's file takes rows from the stream only (docs/cluster.md "Not yet": the CLI):
  // checked before the file is opened, which would also migrate it.
  if (clusterRoleOfFile(config.dbPath) === 'replica') {
    const primary = lastWriterOfFile(config.dbPath)
    throw new CliError(`DB_PATH=${config.dbPath} is a cluster replica's database: run the command on the primary's${primary ? ` (${primary}, as far as this file knows)` : ''}; any node's /readyz names it`)
  }
  const db = openDb(config.dbPath)
  syncPlatformPlans(db)
  try {
    if (cmd === 'migrate') {
      const applied = migrate(db)
      return { code: 0, out: emit({ applied }, applied.length ? `applied migrations ${applied.join(', ')}` : 'database is up to date') }
    }
    const reseller = runResellerCli(db, cmd, sub, values, (m) => new CliError(m))
    if (reseller) return reseller
    if (cmd === 'seed') {
      if (!values.demo) throw new CliError('seed needs --demo or --reseller: dispatch seed --demo --json')
      // --type: one of the store types (src/domain/verticals.ts) with its demo catalogue (docs/verticals.md "Demo stores").
      const type = values.type === undefined ? 'restaurant' : String(values.type)
      if (!(STORE_TYPES as readonly string[]).includes(type)) throw new CliError(`unknown --type "${type}": use one of ${STORE_TYPES.join(', ')}`)
      const demo = seedDemo(db, config.siteUrl, type as StoreType)
      return { code: 0, out: json ? JSON.stringify(demo) : `Demo account:\n${JSON.stringify(demo, null, 2)}` }
    }
    if (cmd === 'token' && sub === 'create') {
      const ownerId = Number(values.owner)
      if (!Number.isInteger(ownerId) || ownerId < 1) throw new CliError('--owner must be an owner id')
      if (!db.prepare('SELECT 1 FROM owners WHERE id = ?').get(ownerId)) throw new CliError(`no owner with id ${ownerId}`)
      const scopes = (values.scopes ?? '').split(',').map((s) => s.trim()).filter(Boolean)
      if (scopes.length === 0) throw new CliError('--scopes needs at least one capability')
      const bad = scopes.filter((s) => !isValidCapability(s))
      if (bad.length) throw new CliError(`unknown capabilities: ${bad.join(', ')}`)
      const expiresAt = values['expires-in'] ? nowIso(Date.now() + parseDuration(values['expires-in'])) : null
      // The plan's api_tokens quota, checked in the inserting transaction (docs/billing.md).
      const t = db.transaction(() => { requireQuota(db, ownerId, 'api_tokens'); return createOwnerToken(db, ownerId, scopes, expiresAt, values.name ?? 'cli') }).immediate()
      return { code: 0, out: emit({ token: t.token, id: t.id, owner_id: ownerId, capabilities: scopes, expires_at: expiresAt }, t.token) }
    }
    if (cmd === 'token' && sub === 'list') return tokenList(db, values.owner, emit)
    if (cmd === 'store' && sub === 'create') return storeCreate(db, config, values, emit)
    if (cmd === 'token' && sub === 'revoke') {
      if (!values.token) throw new CliError('--token is required')
      const r = db.prepare('UPDATE owner_tokens SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL').run(nowIso(), sha256Hex(values.token))
      const known = r.changes > 0 || db.prepare('SELECT 1 FROM owner_tokens WHERE token_hash = ?').get(sha256Hex(values.token))
      if (!known) throw new CliError('no such token')
      return { code: 0, out: emit({ revoked: true }, 'token revoked') }
    }
    const appCmd = appCommand(db, config, positionals, values, emit)
    if (appCmd) return appCmd
    const ownerCmd = ownerCommand(db, cmd, sub, values, emit)
    if (ownerCmd) return ownerCmd
    const account = accountsCommand(db, cmd, sub, values, emit)
    if (account) return account
    const billing = billingCommand(db, config, cmd, sub, values, emit)
    if (billing) return billing
    throw new CliError(`unknown command: ${positionals.join(' ')}. Run "dispatch --help" to see every command.`)
  } finally {
    db.close()
  }
}

export function main(argv = process.argv.slice(2)): void {
  if (isBackupCommand(argv)) return backupMain(argv) // async (SQLite's backup API): src/cli-backup.ts
  const json = argv.includes('--json')
  try {
    const { code, out } = runCli(argv)
    process.stdout.write(out + '\n')
    process.exitCode = code
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    // A refusal by a plan or account rule carries the API's `code` and `reason` (forbidden, plan_limit_reached; docs/errors.md).
    const api = err instanceof ApiError ? (({ code, reason, details }) => ({ code, reason, ...(details ? { details } : {}) }))(err.toJSON()) : {}
    if (json) process.stdout.write(JSON.stringify({ error: message, ...api }) + '\n')
    else process.stderr.write(`dispatch: ${message}\n`)
    process.exitCode = err instanceof CliError || (err instanceof Error && /invalid configuration|Unknown option|Unexpected argument/i.test(err.message)) ? 2 : 1
  }
}
