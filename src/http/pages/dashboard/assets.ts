/** The dashboard's script and stylesheet, read once, each with a content tag for its address. */
import { readFileSync } from 'node:fs'
import { createHash } from 'node:crypto'

const read = (name: string) => readFileSync(new URL(`./${name}`, import.meta.url), 'utf8')

export interface Asset { body: string; type: string }

export const DASHBOARD_ASSETS: Readonly<Record<string, Asset>> = {
  'app.js': { body: read('app.js'), type: 'text/javascript; charset=utf-8' },
  'app.css': { body: read('app.css'), type: 'text/css; charset=utf-8' },
}

/** Changes whenever either file does: pages ask for `app.js?v=<tag>`, so a cached copy is never stale. */
export const ASSET_TAG = createHash('sha256').update(Object.values(DASHBOARD_ASSETS).map((a) => a.body).join('\0')).digest('hex').slice(0, 12)
