/**
 * Public reads on a cluster replica (docs/cluster.md "Public reads on replicas"): the public menu,
 * the tracking view and page, the store website's pages and photos, the catalog (its API and its MCP
 * server) are answered from the replica's own database, through the **same** route table and HTTP
 * front door as on the primary (src/http/server.ts `mountHttp` on the routes of `LOCAL_READS` only,
 * over the read-only view of src/cluster/read-view.ts), while the replica is within
 * CLUSTER_READ_LAG_MS of the primary. Everything else — and these too when the replica is further
 * behind, has a problem, is still joining, or does not hold what was asked for yet — is forwarded
 * to the primary as before (src/http/forward.ts).
 *
 * Every answer served here says so: `X-Dispatch-Served-By` (this node) and `X-Dispatch-Lag-Ms` (how
 * far behind it was). Rate limits and the client's address follow the primary's rules (the same
 * RATE_LIMIT_PER_MINUTE, MCP_PUBLIC_RATE_PER_MINUTE, route limits and TRUST_PROXY): the replica sees
 * the client directly, and counts its budget on this node.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js'
import type { Config } from '../config.ts'
import type { Logger } from '../log.ts'
import type { Services } from '../services.ts'
import type { ClusterStatus } from '../cluster/node.ts'
import { readView, type ReadView } from '../cluster/read-view.ts'
import { allRoutes } from './routes/index.ts'
import { fullPath, mountHttp, type RawEndpoint } from './server.ts'
import { Router } from './router.ts'
import type { Route } from './route.ts'
import { LOCAL_READ_PATHS, localReadKey } from './replica-read-paths.ts'
import { corsHeaders } from '../net/respond.ts'

type Params = Readonly<Record<string, string>>
/** Whether the replica holds what the request names; false: forwarded (it may have been created a moment ago on the primary). */
type Present = (holds: ReadView['holds'], params: Params) => boolean

const storeById: Present = (h, p) => /^[1-9]\d{0,15}$/.test(p.restaurantId ?? '') && h.store(Number(p.restaurantId))
const storeBySlug: Present = (h, p) => h.storeSlug(p.slug ?? '')
const tracked: Present = (h, p) => h.trackToken(p.token ?? '')
const photo: Present = (h, p) => h.photo(p.name ?? '')

/**
 * What each read must find in the replica's database before the replica answers it (else the primary
 * does). The store website's pages of a signed-in customer (a `customer` cookie) are forwarded: they
 * show the customer's own data, which they may have just changed on the primary.
 */
const PRESENT: Readonly<Record<string, Present>> = {
  '/api/v1/menu/{restaurantId}': storeById,
  '/api/v1/track/{token}': tracked,
  '/t/{token}': tracked,
  '/media/items/{name}': photo,
}

/** The reads a replica answers itself (src/http/replica-read-paths.ts), each with what it must hold first. */
export const LOCAL_READS: ReadonlyArray<{ path: string; present?: Present; website?: true }> = LOCAL_READ_PATHS.map((path) =>
  path.startsWith('/s/{slug}') ? { path, present: storeBySlug, website: true as const } : { path, ...(PRESENT[path] ? { present: PRESENT[path] } : {}) })

/**
 * Why this replica may not answer a read itself now, or null when it may: CLUSTER_READ_LAG_MS off, not
 * a replica (promoting), a problem (joining, stopped applying), the stream's length not checked within
 * a lease (its lag unknown: just started, or cut off from NATS), or further behind than the bound.
 */
export function localReadRefusal(s: ClusterStatus | null, streamCheckedAt: number, now: number, boundMs: number | null, leaseMs: number): string | null {
  if (boundMs === null) return 'off'
  if (!s) return 'starting'
  if (s.role !== 'replica') return `role ${s.role}`
  if (s.problem !== null) return s.problem
  if (streamCheckedAt === 0 || now - streamCheckedAt > leaseMs) return 'lag unknown'
  if (s.lag_ms > boundMs) return `lag ${s.lag_ms} ms over ${boundMs} ms`
  return null
}

export interface LocalReadStats {
  /** Reads this node answered from its own database since it started. */
  served: number
  /** Reads of the list it forwarded to the primary instead (too far behind, joining, or not holding what was asked yet). */
  forwarded: number
  /** CLUSTER_READ_LAG_MS; null: off. */
  lag_bound_ms: number | null
  /** Why this node passes the reads on now (`localReadRefusal`), or null while it answers them itself. */
  refused: string | null
}

export interface ReplicaReads {
  /**
   * Answer the request here when it is one of the public reads and this node is fresh enough (true:
   * answered, or answering); false: the caller forwards it. Call first thing in the handler.
   */
  serve(res: HttpResponse, req: HttpRequest): boolean
  stats(): LocalReadStats
  /** The read-only view, for other front doors of the replica (its sockets). */
  readonly view: ReadView
  close(): Promise<void>
}

export interface ReplicaReadsOptions {
  /** As the replica serves: TRUST_PROXY joined with the cluster's secret. */
  config: Config
  dbPath: string
  log: Logger
  node: string
  boundMs: number | null
  leaseMs: number
  /**
   * The public MCP servers it answers itself, built on the view (the catalog's: its tools only read;
   * every method at their addresses is answered here). Given by the caller: src/http imports no other front door.
   */
  mcp(svc: Services): RawEndpoint[]
  /** The node's status and when it last read the stream's length (null before the node started). */
  freshness(): { status: ClusterStatus; streamCheckedAt: number } | null
}

const EXPOSED = `${corsHeaders()['Access-Control-Expose-Headers']}, X-Dispatch-Served-By, X-Dispatch-Lag-Ms`

export function replicaReads(o: ReplicaReadsOptions): ReplicaReads {
  const view = readView(o.config, o.dbPath, o.log)
  const { svc } = view
  const wanted = new Map(LOCAL_READS.map((r) => [r.path, r]))
  const routes = allRoutes({ appGroup: o.config.appGroup }).filter((r) => r.method === 'GET' && wanted.has(localReadKey(fullPath(r))))
  const router = new Router()
  for (const r of routes) router.add(fullPath(r), r)
  const raw = o.mcp(svc)
  const rawPaths = new Set(raw.map((e) => e.path))
  // The front door itself, mounted on a stand-in app: its one handler is called for the reads chosen below.
  let handler: ((res: HttpResponse, req: HttpRequest) => void) | null = null
  const capture = { any: (_pattern: string, h: (res: HttpResponse, req: HttpRequest) => void) => { handler = h; return capture } } as unknown as TemplatedApp
  let lag = 0
  mountHttp(capture, svc, routes, svc.auth, raw, {
    headers: () => ({ 'X-Dispatch-Served-By': o.node, 'X-Dispatch-Lag-Ms': String(lag), 'Access-Control-Expose-Headers': EXPOSED }),
  })
  const door = handler as unknown as (res: HttpResponse, req: HttpRequest) => void
  let served = 0
  let forwarded = 0
  const refusalNow = (f: ReturnType<ReplicaReadsOptions['freshness']>) => localReadRefusal(f?.status ?? null, f?.streamCheckedAt ?? 0, Date.now(), o.boundMs, o.leaseMs)
  let closed = false

  /** One of the listed reads, holding what it names (null: not a read of the list; false: forwarded). */
  function listed(req: HttpRequest, method: string, path: string): boolean | null {
    if (rawPaths.has(path)) return true
    if (method !== 'GET' && method !== 'HEAD') return null
    const m = router.match('GET', path)
    if (m.kind !== 'found') return null
    const entry = wanted.get(localReadKey(fullPath(m.route)))!
    if (entry.website && /(?:^|;)\s*customer=[^;\s]/.test(req.getHeader('cookie'))) return false
    try {
      return entry.present ? entry.present(view.holds, m.params) : true
    } catch (err) {
      o.log.warn({ err, path }, 'a replica read could not check its data; forwarding it')
      return false
    }
  }

  return {
    view,
    serve(res, req) {
      if (closed) return false
      const method = req.getCaseSensitiveMethod().toUpperCase()
      const path = req.getUrl()
      const f = o.freshness()
      // Checked first: a replica too far behind reads nothing of its own file, not even to look a token up.
      const refusal = refusalNow(f)
      if (refusal !== null) {
        if (o.boundMs !== null && (rawPaths.has(path) || ((method === 'GET' || method === 'HEAD') && router.match('GET', path).kind === 'found'))) forwarded++
        return false
      }
      const local = listed(req, method, path)
      if (local === null) return false
      if (!local) { forwarded++; return false }
      served++
      lag = f!.status.lag_ms
      door(res, req)
      return true
    },
    stats: () => ({ served, forwarded, lag_bound_ms: o.boundMs, refused: refusalNow(o.freshness()) }),
    async close() {
      closed = true
      await view.close()
    },
  }
}
