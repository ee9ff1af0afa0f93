/**
 * Reseller commands of the operator CLI (src/cli.ts; docs/billing.md "Resellers"):
 *
 *   dispatch seed --reseller [--json]       → {"reseller": {"id", "token"}, "customers": [{"id", "token", "store_id"}]}
 *   dispatch account create --reseller --name NAME --email EMAIL [--json]
 *                                           → {"id", "name", "email", "role": "reseller", "token"} (a `*` owner token, shown once)
 *   dispatch reseller grant --owner ID [--json]
 *                                           → {"id", "role": "reseller", "reseller_since"}
 */
import type { Db } from './storage/db.ts'
import { nowIso } from './storage/db.ts'
import { createOwnerToken } from './seed.ts'
import { seedReseller } from './seed-reseller.ts'
import { grantReseller, insertAccount } from './storage/reseller.ts'
import { ownerArg } from './cli-accounts.ts'

export const RESELLER_USAGE = `  dispatch seed --reseller [--json]
  dispatch account create --reseller --name NAME --email EMAIL [--json]
  dispatch reseller grant --owner ID [--json]`

/** Options these commands read (merged into the CLI's parseArgs options). */
export const RESELLER_OPTIONS = { reseller: { type: 'boolean' }, email: { type: 'string' } } as const

export interface ResellerArgs { reseller?: boolean; name?: string; email?: string; owner?: string; json?: boolean }

/** Runs a reseller command, or returns null when `cmd sub` is not one; throws `fail(message)` on bad input. */
export function runResellerCli(db: Db, cmd: string, sub: string | undefined, a: ResellerArgs, fail: (message: string) => Error): { code: number; out: string } | null {
  const emit = (obj: unknown, text: string) => ({ code: 0, out: a.json ? JSON.stringify(obj) : text })
  if (cmd === 'seed' && a.reseller) {
    const seed = seedReseller(db)
    return emit(seed, `Reseller account:\n${JSON.stringify(seed, null, 2)}`)
  }
  if (cmd === 'account' && sub === 'create') {
    if (!a.reseller) throw fail('account create needs --reseller (owner accounts come from seed --demo or a reseller)')
    const name = a.name?.trim()
    const email = a.email?.trim()
    if (!name) throw fail('--name is required')
    if (!email || !/^[^\s@]+@[^\s@]+$/.test(email)) throw fail('--email must be an email address')
    const created = db.transaction(() => {
      const now = nowIso()
      const id = insertAccount(db, { name, email }, now)
      grantReseller(db, id, now)
      return { id, name, email, role: 'reseller', token: createOwnerToken(db, id, ['*'], null, 'cli').token }
    }).immediate()
    return emit(created, `reseller account ${created.id} created; its token (shown once):\n${created.token}`)
  }
  if (cmd === 'reseller' && sub === 'grant') {
    const id = ownerArg(db, a.owner)
    const r = db.transaction(() => grantReseller(db, id)).immediate()
    return emit({ id: r.id, role: 'reseller', reseller_since: r.reseller_since }, `account ${r.id} is a reseller`)
  }
  return null
}
