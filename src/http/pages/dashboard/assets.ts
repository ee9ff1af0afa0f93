/**
 * The dashboard's script modules (src/browser/dashboard/*.ts, compiled: browser-code.ts) and its
 * stylesheet, read once, each addressed with a content tag.
 */
import { readFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { browserScript } from '../browser-code.ts'

const read = (name: string) => readFileSync(new URL(`../../../browser/dashboard/${name}`, import.meta.url), 'utf8')

export interface Asset { body: string; type: string }

const JS = 'text/javascript; charset=utf-8'
/** app.js is the entry module the shell loads; the others are the modules it imports. */
const SCRIPTS = ['app.js', 'core.js', 'payments.js', 'shifts.js', 'reservations.js', 'guests.js', 'dispatch.js', 'setup.js', 'arrivals.js', 'website.js', 'menu.js'] as const
const raw: Record<string, Asset> = {
  ...Object.fromEntries(SCRIPTS.map((name) => [name, { body: browserScript(`dashboard/${name}`), type: JS }])),
  'app.css': { body: read('app.css'), type: 'text/css; charset=utf-8' },
}

/** Changes whenever any file does: pages ask for `app.js?v=<tag>`, so a cached copy is never stale. */
export const ASSET_TAG = createHash('sha256').update(Object.values(raw).map((a) => a.body).join('\0')).digest('hex').slice(0, 12)

/** `from "./core.js"` (the compiler's quotes) → `from './core.js?v=<tag>'`. */
const tagImports = (code: string): string => code.replace(/(\bfrom\s*)(["'])(\.\/[\w-]+\.js)\2/g, (_m, from: string, _q, path: string) => `${from}'${path}?v=${ASSET_TAG}'`)

/**
 * The files as served. Every asset is cached for a year (`immutable`), so a module's own imports
 * (`from './core.js'`) are given the same tag as the page's `app.js?v=<tag>`: a new release fetches
 * every module afresh, and all of them import one and the same `core.js?v=<tag>` instance.
 */
export const DASHBOARD_ASSETS: Readonly<Record<string, Asset>> = Object.fromEntries(Object.entries(raw).map(([name, a]) =>
  [name, a.type === JS ? { ...a, body: tagImports(a.body) } : a]))
