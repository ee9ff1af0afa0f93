/**
 * Leaflet, served by this server from the installed npm package (issue 20 item 8; docs/tracking-page.md):
 * the tracking page loads no script or style from a CDN. The version is in the path, so the
 * files are cached for a year as immutable and a Leaflet upgrade is a new address.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { route, Reply } from '../route.ts'

const require = createRequire(import.meta.url)
const pkgFile = require.resolve('leaflet/package.json')
const dist = join(dirname(pkgFile), 'dist')

export const LEAFLET_VERSION = (JSON.parse(readFileSync(pkgFile, 'utf8')) as { version: string }).version
/** Where the page finds the files: `/assets/leaflet/<version>/leaflet.{js,css}` under the site root. */
export const LEAFLET_BASE = `/assets/leaflet/${LEAFLET_VERSION}`

const IMMUTABLE = { 'Cache-Control': 'public, max-age=31536000, immutable', 'X-Content-Type-Options': 'nosniff' }

function asset(file: string, contentType: string) {
  const body = readFileSync(join(dist, file))
  return route({
    method: 'GET', path: `${LEAFLET_BASE}/${file}`, site: true, tag: 'Public', summary: `Leaflet ${LEAFLET_VERSION} ${file} (map library of the tracking page)`,
    auth: 'none', produces: contentType,
    description: 'Served from the installed `leaflet` package; versioned address, cached as immutable.',
    handler: () => new Reply(200, body, IMMUTABLE, contentType),
  })
}

// The markers are circle markers (vector), so Leaflet's marker images are never requested.
export const leafletAssetRoutes = [
  asset('leaflet.js', 'text/javascript; charset=utf-8'),
  asset('leaflet.css', 'text/css; charset=utf-8'),
]
