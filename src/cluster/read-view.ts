/**
 * A cluster replica's read-only view of the server (docs/cluster.md "Public reads on replicas"): the
 * same `Services` the full server builds (src/app.ts), made from the same factories — store and order
 * queries, the store cache, the authenticators of every family, the theme pool — on a **read-only
 * connection** to the replica's own database file, which the applier keeps current from the stream.
 * Nothing here writes: SQLite refuses any write on this connection (SQLITE_READONLY, an error, never
 * a divergence from the stream), the committer refuses, and the parts of the server that act (actors,
 * events, webhooks, sockets, providers, dispatch) are absent: touching one throws, naming it. No
 * background work runs.
 *
 * The caches it reads through are checked against the database on every use, so the applier's
 * commits (another connection's) are seen at once: stores and suspensions per auth epoch (a counter
 * bumped by triggers on `stores`, `owners` and `owner_tokens`, which fire on the replica as it
 * applies those rows: src/storage/auth-epoch.ts), a store's theme per `store_themes` version and
 * upload time (src/themes/store-site.ts). Menus, orders and pages are read afresh per request.
 *
 * Used by the replica's public reads (src/http/replica-reads.ts); anything else a replica answers
 * itself from its own data (a tracking socket's token, say) can authenticate through it alike.
 */
import Database from 'better-sqlite3'
import type { Config } from '../config.ts'
import type { Logger } from '../log.ts'
import type { Db } from '../storage/db.ts'
import type { Services } from '../services.ts'
import { ApiError } from '../errors.ts'
import { authFamilies } from '../auth/families.ts'
import { createStoreQueries } from '../storage/stores.ts'
import { withStoreCache } from '../storage/store-cache.ts'
import { createOrderQueries } from '../storage/orders.ts'
import { createDriverQueries } from '../storage/drivers.ts'
import { createResellerQueries } from '../storage/reseller.ts'
import { developerApp } from '../storage/apps.ts'
import { isSuspended } from '../storage/accounts.ts'
import { databaseReadiness } from '../storage/health.ts'
import { createMetrics } from '../metrics/registry.ts'
import { createThemePool } from '../themes/pool.ts'
import { newRequestCounter } from '../net/respond.ts'
import { photoStored } from '../storage/menu-photos.ts'

export interface ReadView {
  svc: Services
  /**
   * Whether the replica's copy holds what a read names (a store, an order's tracking token, a photo):
   * what it does not hold yet may have been created a moment ago on the primary.
   */
  holds: {
    store(id: number): boolean
    storeSlug(slug: string): boolean
    trackToken(token: string): boolean
    /** A photo address `{key}.jpg` or `{key}-thumb.jpg`. */
    photo(name: string): boolean
  }
  /** Close the theme pool's threads and the connection (the node is promoted, or stops). */
  close(): Promise<void>
}

/**
 * A stand-in for a part of the server that acts: any use throws, naming it (answered 500 and logged
 * where a route reaches one by mistake; no read route does).
 */
function absent<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get(_t, key) {
      if (typeof key === 'symbol' || key === 'then') return undefined
      throw new Error(`svc.${name}.${key} is not available on a replica's read-only view (src/cluster/read-view.ts)`)
    },
  })
}

/** `config` as the replica serves with it (its TRUST_PROXY already joined with the cluster's secret). */
export function readView(config: Config, dbPath: string, log: Logger): ReadView {
  const db: Db = new Database(dbPath, { readonly: true, fileMustExist: true })
  // The applier commits on its own connection; a read waits for its lock rather than failing.
  db.pragma('busy_timeout = 5000')
  const themes = createThemePool({ workers: config.themeWorkers, log })
  const svc: Services = {
    config, db, log,
    committer: {
      write: () => Promise.reject(new ApiError('unavailable', 'This node is a replica: it does not write.')),
      flush: () => undefined,
      close: () => undefined,
      addHook: () => undefined,
      durable: () => Promise.resolve(),
      stats: { batches: 0, writes: 0 },
    },
    stores: withStoreCache(db, createStoreQueries(db)),
    orders: createOrderQueries(db, config.siteUrl),
    drivers: createDriverQueries(db),
    endpoints: { ownedBy: () => undefined },
    auth: authFamilies(db, config, () => { /* a web session's last use is the primary's to record */ }),
    accounts: { suspended: (ownerId) => isSuspended(db, ownerId) },
    mcpServers: [],
    resellers: createResellerQueries(db),
    apps: { ownedBy: (id, developerId) => developerApp(db, developerId, id) ?? undefined },
    lifecycle: { draining: () => false, database: () => databaseReadiness(db), requests: newRequestCounter() },
    metrics: createMetrics(false),
    themes,
    events: absent('events'),
    webhooks: absent('webhooks'),
    hub: absent('hub'),
    realtime: absent('realtime'),
    kds: absent('kds'),
    sms: absent('sms'),
    push: absent('push'),
    dispatch: absent('dispatch'),
    router: absent('router'),
    geocoder: absent('geocoder'),
    email: absent('email'),
    payments: absent('payments'),
    guests: absent('guests'),
    actors: absent('actors'),
  }
  return {
    svc,
    holds: {
      store: (id) => svc.stores.byId(id) !== undefined,
      storeSlug: (slug) => svc.stores.bySlug(slug) !== undefined,
      trackToken: (token) => svc.orders.rowByTrackToken(token) !== undefined,
      photo: (name) => photoStored(db, /^([0-9a-f]{32})(-thumb)?\.jpg$/.exec(name)?.[1] ?? ''),
    },
    async close() {
      await themes.close()
      db.close()
    },
  }
}
