/**
 * Same-run A/B of the store website's checkout (issue 33): `node --import tsx bench/website-checkout-ab.ts <treeA> <treeB> [rounds] [seconds]`.
 * As bench/orders-ab.ts, but each request is the browser's checkout form post: `POST /s/{slug}/checkout`
 * (urlencoded, the visitor's CSRF cookie and field, a cart cookie of one to three lines of the demo
 * menu, same-origin `Origin`), answered 303 to the tracking page. The carts carry no id, so no post
 * is an idempotent replay of another. Prints per round the checkouts/s and the server's user and
 * system CPU per checkout, then the medians. Run it under the bench lock:
 * `flock /tmp/bench.lock node --import tsx bench/website-checkout-ab.ts …`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import Database from 'better-sqlite3'
import { startApp, seedDemo, type Server } from './lib/proc.ts'
import { alternate } from './lib/ab.ts'
import { runBenchLoad } from './lib/raw-load.ts'
import { readMenu } from './orders.ts'
import { rng } from './lib/rng.ts'

interface Demo { store: { id: number } }

const [a, b] = [process.argv[2], process.argv[3]].map((p) => resolve(p ?? '.'))
const rounds = Number(process.argv[4] ?? 4)
const seconds = Number(process.argv[5] ?? 4)
const dir = mkdtempSync(join(process.env.BENCH_DB_DIR ?? tmpdir(), 'website-ab-'))
const servers: Server[] = []
const CSRF = 'benchcsrftokenbenchcsrftoken0123456789'

/** Checkout posts over the demo menu: plain items (no required choices), one to three lines each. */
function checkouts(dbPath: string, storeId: number, site: string, count = 64) {
  const db = new Database(dbPath, { readonly: true })
  const slug = db.prepare('SELECT slug FROM stores WHERE id = ?').pluck().get(storeId) as string
  db.close()
  const items = readMenu(dbPath, storeId).filter((i) => i.variants.length === 0)
  const rand = rng(7)
  const body = new URLSearchParams({ csrf: CSRF, type: 'takeaway', customer_name: 'Bench', customer_phone: '+15550001111' }).toString()
  return Array.from({ length: count }, () => {
    const lines = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => [items[Math.floor(rand() * items.length)]!.id, 1 + Math.floor(rand() * 2), null, []])
    const cart = Buffer.from(JSON.stringify({ l: lines, c: null })).toString('base64url')
    return {
      method: 'POST' as const, path: `/s/${slug}/checkout`, body,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site, cookie: `csrf=${CSRF}; cart=${cart}` },
    }
  })
}

try {
  const targets = []
  for (const [name, tree] of [['A', a!], ['B', b!]] as const) {
    const dbPath = join(dir, `${name}.db`)
    const demo = await seedDemo<Demo>(dbPath, tree)
    // Around the clock: the demo store's hours must not close the checkout mid-run.
    const db = new Database(dbPath)
    db.prepare("UPDATE stores SET settings = json_set(COALESCE(settings, '{}'), '$.business_hours', json('null')) WHERE id = ?").run(demo.store.id)
    db.close()
    const server = await startApp(dbPath, tree, { GROUP_COMMIT: '1' })
    servers.push(server)
    targets.push({ name, tree, server, requests: checkouts(dbPath, demo.store.id, server.url), rows: [] as Array<{ rate: number; user: number; sys: number }> })
  }
  // Warm both (the first orders of a database cost more).
  for (const t of targets) {
    const l = await runBenchLoad({ url: t.server.url, requests: t.requests, connections: 32, durationSec: 2 })
    if (!l.statuses['303']) throw new Error(`warm-up: ${JSON.stringify(l.statuses)} (a checkout answers 303)`)
  }
  await alternate(targets, rounds, 'checkout', async (t) => {
    const l = await runBenchLoad({ url: t.server.url, requests: t.requests, connections: 32, durationSec: seconds })
    const ok = l.statuses['303'] ?? 0
    if (ok === 0 || l.errors > 0 || Object.keys(l.statuses).some((st) => st !== '303')) throw new Error(`${t.name}: ${JSON.stringify(l.statuses)}, ${l.errors} errors`)
    return { ok, load: l }
  })
} finally {
  for (const s of servers) await s.stop()
  rmSync(dir, { recursive: true, force: true })
}
