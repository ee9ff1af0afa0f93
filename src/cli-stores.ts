/**
 * Creating a store for an owner (README "Operator CLI"):
 *
 *   dispatch store create --owner ID --title T [--type restaurant] [--currency USD] [--city C] [--slug S] [--json]
 *     → the same object as `POST /restaurants`: {"id", "title", "slug", "url", …, "currency", "city"}
 *
 * The same rules as `POST /restaurants` (src/ops/accounts/account-plan.ts `createStoreOp`): its input schema,
 * and the storage function that checks the plan's `stores` quota and the `multi_store` feature in the
 * inserting transaction (403 `plan_limit_reached` / `feature_not_in_plan`, carried as `code`).
 * The operator acts for the account, so no token capability is involved.
 */
import type { Db } from './storage/db.ts'
import type { Config } from './config.ts'
import { createStoreOp } from './ops/accounts/account-plan.ts'
import { validate } from './ops/validate.ts'
import { createStore } from './storage/accounts.ts'
import { createStoreQueries, storeSummary } from './storage/stores.ts'
import { ApiError } from './errors.ts'
import { CliError } from './cli.ts'
import type { Emit, Reply } from './cli-help.ts'

export const STORE_USAGE = '  dispatch store create --owner ID --title TITLE [--type restaurant] [--currency USD] [--city CITY] [--slug SLUG] [--json]'
export const STORE_OPTIONS = { title: { type: 'string' }, type: { type: 'string' }, currency: { type: 'string' }, city: { type: 'string' }, slug: { type: 'string' } } as const

export interface StoreArgs { owner?: string; title?: string; type?: string; currency?: string; city?: string; slug?: string }

/** `--owner` as an existing owner's id, or a CliError saying what to type. */
export function ownerArg(db: Db, raw: string | undefined, command: string): number {
  const id = Number(raw)
  if (raw === undefined || !Number.isInteger(id) || id < 1) throw new CliError(`--owner must be an owner id: dispatch ${command} --owner ID`)
  if (!db.prepare('SELECT 1 FROM owners WHERE id = ?').get(id)) throw new CliError(`no owner with id ${id}`)
  return id
}

/** Map the op's input errors back to the flags an operator typed. */
const FLAG: Record<string, string> = { title: '--title', slug: '--slug', store_type: '--type', currency: '--currency', city: '--city' }

export function storeCreate(db: Db, config: Config, a: StoreArgs, emit: Emit): Reply {
  const ownerId = ownerArg(db, a.owner, 'store create')
  if (a.title === undefined) throw new CliError('--title is required: dispatch store create --owner ID --title "My Store"')
  const raw = {
    title: a.title,
    ...(a.slug !== undefined ? { slug: a.slug } : {}),
    ...(a.type !== undefined ? { store_type: a.type } : {}),
    ...(a.currency !== undefined ? { currency: a.currency } : {}),
    ...(a.city !== undefined ? { city: a.city } : {}),
  }
  let input
  try {
    input = validate(createStoreOp.input!, raw, 'arguments')
  } catch (e) {
    if (e instanceof ApiError && e.errors) throw new CliError(Object.entries(e.errors).map(([k, m]) => `${FLAG[k] ?? k}: ${m.join(' ')}`).join('; '))
    throw e
  }
  const created = db.transaction(() => createStore(db, ownerId, { title: input.title, slug: input.slug, store_type: input.store_type, currency: input.currency, city: input.city ?? null })).immediate()
  // Read back as the API answers it (src/ops/accounts/account-plan.ts createStoreOp).
  const store = createStoreQueries(db).byId(created.id)!
  const out = { ...storeSummary(store, config.siteUrl), currency: store.currency, city: store.city }
  return { code: 0, out: emit(out, `store ${out.id} "${out.title}" created for owner ${ownerId}: ${out.url}`) }
}
