/**
 * The public reads a cluster replica answers from its own database (docs/cluster.md "Public reads on
 * replicas"; src/http/replica-reads.ts), by the full path of their GET routes: the public menu and
 * tracking view (api-v1 §4.4), the tracking page and its map library, menu photos, the catalog, and
 * the store website's pages (not its forms, not the signed-in customer's account page). Kept apart
 * from the serving code so the OpenAPI document can say which answers may come from a replica.
 */
import { LEAFLET_BASE } from './routes/leaflet-assets.ts'

export const LOCAL_READ_PATHS: readonly string[] = [
  '/api/v1/menu/{restaurantId}',
  '/api/v1/track/{token}',
  '/t/{token}',
  `${LEAFLET_BASE}/*`,
  '/media/items/{name}',
  '/api/v1/catalog/stores',
  '/api/v1/catalog/stores/{store}',
  '/api/v1/catalog/items',
  '/api/v1/catalog/starter-menus',
  ...['', '/menu', '/items/{item}', '/cart', '/checkout', '/account/login'].map((p) => `/s/{slug}${p}`),
]

/** A GET route's full path as the list names it (the Leaflet files by their folder). */
export const localReadKey = (fullPath: string): string => (fullPath.startsWith(`${LEAFLET_BASE}/`) ? `${LEAFLET_BASE}/*` : fullPath)

const listed = new Set(LOCAL_READ_PATHS)
/** Whether a replica may answer GET and HEAD of this full path itself. */
export const isLocalRead = (fullPath: string): boolean => listed.has(localReadKey(fullPath))
