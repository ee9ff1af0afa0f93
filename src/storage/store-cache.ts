/**
 * The store lookups of every request (the policy's `ownedBy` and `byId`: src/auth/policy.ts), cached
 * per auth epoch (src/storage/auth-epoch.ts): any update or delete of a store row, committed on this
 * connection or another, empties the cache before the next lookup, so a removed store is 404 at once.
 * The rows are shared between requests and must not be changed by them.
 */
import { EpochCache } from './auth-epoch.ts'
import type { Db } from './db.ts'
import type { StoreQueries, StoreRow } from './stores.ts'

export function withStoreCache(db: Db, q: StoreQueries): StoreQueries {
  const byId = new EpochCache<number, StoreRow>(db)
  // Keyed `id` for an owner: one owner's hit never answers another owner's question.
  const owned = new EpochCache<string, StoreRow>(db)
  return {
    ...q,
    byId: (id: number) => byId.get(id, () => q.byId(id)),
    ownedBy: (id: number, ownerId: number) => owned.get(`${id}/${ownerId}`, () => q.ownedBy(id, ownerId)),
  }
}
