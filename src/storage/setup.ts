/**
 * What the setup checklist reads (docs/dashboard.md "First steps"; src/domain/setup.ts decides
 * what each fact means): the account's real data, one store's at a time. Reads only, except
 * the dismissal, which is written inside a committer transaction (`svc.committer.write`).
 */
import type { Db } from './db.ts'
import { stmt } from './db.ts'
import { parseSettings } from './stores.ts'
import type { SetupFacts } from '../domain/setup.ts'

interface StoreBits { id: number; title: string; settings: string | null }

const count = (db: Db, sql: string, ...args: unknown[]): number => stmt<unknown[], { n: number }>(db, sql).get(...args)!.n

/**
 * The facts of the owner's store `storeId` (their first live store when none is named); undefined
 * when `storeId` names no live store of theirs (another account's is a 404 like a missing one).
 */
export function setupFacts(db: Db, ownerId: number, storeId?: number): SetupFacts | undefined {
  const store = storeId === undefined
    ? stmt<[number], StoreBits>(db, 'SELECT id, title, settings FROM stores WHERE owner_id = ? AND deleted_at IS NULL ORDER BY id LIMIT 1').get(ownerId)
    : stmt<[number, number], StoreBits>(db, 'SELECT id, title, settings FROM stores WHERE id = ? AND owner_id = ? AND deleted_at IS NULL').get(storeId, ownerId)
  if (storeId !== undefined && !store) return undefined
  const dismissed = stmt<[number], { at: string | null }>(db, 'SELECT setup_dismissed_at AS at FROM owners WHERE id = ?').get(ownerId)
  const drivers = count(db, 'SELECT COUNT(*) AS n FROM drivers WHERE owner_id = ? AND (restaurant_id IS NULL OR restaurant_id = ?)', ownerId, store?.id ?? 0)
  if (!store) return { store: null, drivers, dismissedAt: dismissed?.at ?? null }
  const hours = parseSettings(store.settings).business_hours
  return {
    store: {
      id: store.id, title: store.title,
      hasHours: hours != null && typeof hours === 'object',
      menuItems: count(db, 'SELECT COUNT(*) AS n FROM menu_items WHERE store_id = ?', store.id),
      storefrontTokens: count(db, 'SELECT COUNT(*) AS n FROM storefront_tokens WHERE store_id = ? AND revoked_at IS NULL', store.id),
      websiteThemed: count(db, 'SELECT COUNT(*) AS n FROM store_themes WHERE store_id = ?', store.id) > 0,
      tills: count(db, 'SELECT COUNT(*) AS n FROM shifts WHERE store_id = ?', store.id),
      paymentsTaken: count(db, "SELECT COUNT(*) AS n FROM payments WHERE store_id = ? AND status = 'succeeded'", store.id),
    },
    drivers,
    dismissedAt: dismissed?.at ?? null,
  }
}

/** Inside a write: hide the checklist (`at`) or show it again (null). */
export const setSetupDismissed = (db: Db, ownerId: number, at: string | null): void => {
  stmt(db, 'UPDATE owners SET setup_dismissed_at = ? WHERE id = ?').run(at, ownerId)
}
