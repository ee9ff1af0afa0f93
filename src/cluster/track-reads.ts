/**
 * What a replica's tracking sockets read on its own copy (docs/cluster.md "Sockets on any node"):
 * the primary's own queries, opened on the replica's file (src/ws/replica-sockets.ts).
 */
import type { Db } from '../storage/db.ts'
import type { Services } from '../services.ts'
import { createOrderQueries } from '../storage/orders.ts'
import { createStoreQueries } from '../storage/stores.ts'
import { isSuspended } from '../storage/accounts.ts'

/** What the tracking socket's upgrade and snapshot read: the same queries the primary's socket uses. */
export type TrackReads = Pick<Services, 'db' | 'orders' | 'stores' | 'accounts'>

/** The primary's own queries on `db` (no caches: a replica's copy changes under them, written by its applier). */
export function trackReads(db: Db, siteUrl: string): TrackReads {
  return { db, orders: createOrderQueries(db, siteUrl), stores: createStoreQueries(db), accounts: { suspended: (ownerId: number) => isSuspended(db, ownerId) } }
}
