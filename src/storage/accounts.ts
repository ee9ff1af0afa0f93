/**
 * Accounts: suspension and store creation under the plan (docs/billing.md "Suspension",
 * "Plans and entitlements").
 *
 *   suspendAccount(db, ownerId, reason: string | null): boolean   // false if already suspended
 *   unsuspendAccount(db, ownerId): boolean                        // false if it was not suspended
 *   isSuspended(db, ownerId): boolean
 *   createStore(db, ownerId, fields: NewStoreFields): StoreRow     // 403 plan_limit_reached (stores),
 *     403 feature_not_in_plan (multi_store) for a 2nd store, 409 conflict for a taken slug.
 *     Call inside a transaction (committer.write fn): the quota check and the insert are one unit.
 *
 * A suspended account keeps every row; its tokens of every family answer 403 account_suspended
 * (src/auth/suspension.ts) and its public pages say the store is unavailable.
 */
import { randomBytes } from 'node:crypto'
import { nowIso, stmt, type Db } from './db.ts'
import { ApiError } from '../errors.ts'
import { requireFeature, requireQuota, quotaUsage } from './entitlements.ts'

export function suspendAccount(db: Db, ownerId: number, reason: string | null = null): boolean {
  return stmt(db, 'UPDATE owners SET suspended_at = ?, suspended_reason = ? WHERE id = ? AND suspended_at IS NULL').run(nowIso(), reason, ownerId).changes === 1
}

export function unsuspendAccount(db: Db, ownerId: number): boolean {
  return stmt(db, 'UPDATE owners SET suspended_at = NULL, suspended_reason = NULL WHERE id = ? AND suspended_at IS NOT NULL').run(ownerId).changes === 1
}

export const isSuspended = (db: Db, ownerId: number): boolean =>
  stmt<[number], 1>(db, 'SELECT 1 FROM owners WHERE id = ? AND suspended_at IS NOT NULL').pluck().get(ownerId) !== undefined

/** Is the account that owns store `storeId` suspended? (public pages, storefront and customer tokens) */
export const isStoreSuspended = (db: Db, storeId: number): boolean =>
  stmt<[number], 1>(db, 'SELECT 1 FROM stores s JOIN owners o ON o.id = s.owner_id WHERE s.id = ? AND o.suspended_at IS NOT NULL').pluck().get(storeId) !== undefined

export const isSlugSuspended = (db: Db, slug: string): boolean =>
  stmt<[string], 1>(db, 'SELECT 1 FROM stores s JOIN owners o ON o.id = s.owner_id WHERE s.slug = ? AND o.suspended_at IS NOT NULL').pluck().get(slug) !== undefined

export interface AccountStatus { id: number; role: string; reseller_id: number | null; suspended_at: string | null; suspended_reason: string | null }
export const accountStatus = (db: Db, ownerId: number): AccountStatus | undefined =>
  stmt<[number], AccountStatus>(db, 'SELECT id, role, reseller_id, suspended_at, suspended_reason FROM owners WHERE id = ?').get(ownerId)

export interface NewStoreFields { title: string; slug?: string; store_type?: string; currency?: string; city?: string | null; template?: string; settings?: Record<string, unknown> }
export interface StoreRow { id: number; owner_id: number; title: string; slug: string; template: string; store_type: string; currency: string; city: string | null; created_at: string }

const slugify = (title: string): string =>
  title.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'store'

/**
 * A new store of `ownerId`, checked against the plan: the `stores` quota, and the `multi_store`
 * feature for any store beyond the first. Without a slug one is derived from the title (with a
 * random suffix when taken); a given slug that is taken is 409.
 */
export function createStore(db: Db, ownerId: number, fields: NewStoreFields): StoreRow {
  return db.transaction(() => {
    if (quotaUsage(db, ownerId, 'stores') >= 1) requireFeature(db, ownerId, 'multi_store')
    requireQuota(db, ownerId, 'stores')
    const taken = (s: string) => stmt<[string], 1>(db, 'SELECT 1 FROM stores WHERE slug = ?').pluck().get(s) !== undefined
    let slug = fields.slug
    if (slug !== undefined) {
      if (taken(slug)) throw new ApiError('conflict', `The slug "${slug}" is taken.`, { slug: ['The slug is taken.'] })
    } else {
      slug = slugify(fields.title)
      while (taken(slug)) slug = `${slugify(fields.title).slice(0, 33)}-${randomBytes(3).toString('hex')}`
    }
    const now = nowIso()
    const id = Number(stmt(db, `INSERT INTO stores (owner_id, title, slug, template, store_type, currency, city, settings, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(ownerId, fields.title, slug, fields.template ?? 'classic', fields.store_type ?? 'restaurant',
      fields.currency ?? 'USD', fields.city ?? null, JSON.stringify(fields.settings ?? {}), now).lastInsertRowid)
    return { id, owner_id: ownerId, title: fields.title, slug, template: fields.template ?? 'classic', store_type: fields.store_type ?? 'restaurant', currency: fields.currency ?? 'USD', city: fields.city ?? null, created_at: now }
  })()
}
