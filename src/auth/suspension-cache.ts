/**
 * Is an account suspended: asked on every authentication (src/auth/suspension.ts), so answered from
 * a cache per auth epoch (src/storage/auth-epoch.ts). Suspending or unsuspending updates `owners`,
 * which moves the epoch in the same transaction (also from the CLI's connection): seen at once.
 */
import { EpochCache } from '../storage/auth-epoch.ts'
import { isSuspended } from '../storage/accounts.ts'
import type { Db } from '../storage/db.ts'

const caches = new WeakMap<Db, EpochCache<number, boolean>>()

export function isSuspendedNow(db: Db, ownerId: number): boolean {
  let c = caches.get(db)
  if (!c) caches.set(db, (c = new EpochCache<number, boolean>(db)))
  return c.get(ownerId, () => isSuspended(db, ownerId)) === true
}
