/**
 * The conventional baseline for bench/orders.ts: Fastify + better-sqlite3 with the same durability
 * (WAL, synchronous=FULL, opened through src/storage/db.ts) and one transaction per request, doing
 * the same work per order as the real server: bearer token lookup by SHA-256 in owner_tokens,
 * capability check, tenancy lookup of the store, valibot validation with the server's schema,
 * server-side pricing with src/domain/orders.ts against the store's menu, the same inserts (order,
 * lines, outbox row) and the same response body.
 *
 * The menu is read from SQLite once per store and kept (as the store actor does); a stateless
 * server reading it on every request would be slower, so this is the baseline's favourable case.
 *
 * Run by the bench in its own process: `DB_PATH=… PORT=… node --import tsx bench/baseline/fastify-orders.ts`.
 */
import Fastify from 'fastify'
import * as v from 'valibot'
import { openDb, nowIso } from '../../src/storage/db.ts'
import { createStoreQueries, pricingIndex } from '../../src/storage/stores.ts'
import { insertOrder, viewOfNew, type NewOrder } from '../../src/storage/orders.ts'
import { appendEvent } from '../../src/storage/outbox.ts'
import { draftOrder } from '../../src/domain/orders.ts'
import { verticalOf } from '../../src/domain/verticals.ts'
import { centsToDecimalString } from '../../src/domain/money.ts'
import { grants } from '../../src/domain/capabilities.ts'
import { OrderInputSchema } from '../../src/ops/schemas/common.ts'
import { newTrackToken, sha256Hex } from '../../src/auth/tokens.ts'
import type { PricedItem } from '../../src/domain/pricing.ts'

const dbPath = process.env.DB_PATH ?? './data/baseline.db'
const port = Number(process.env.PORT ?? 8090)
const siteUrl = `http://localhost:${port}`

const db = openDb(dbPath)
const stores = createStoreQueries(db)
const tokenByHash = db.prepare<[string], { id: number; owner_id: number; capabilities: string; expires_at: string | null; revoked_at: string | null }>(
  'SELECT id, owner_id, capabilities, expires_at, revoked_at FROM owner_tokens WHERE token_hash = ?',
)
const menus = new Map<number, Map<number, PricedItem>>()
const menuOf = (storeId: number) => menus.get(storeId) ?? menus.set(storeId, pricingIndex(stores.menu(storeId))).get(storeId)!

const error = (code: string, message: string, errors?: Record<string, string[]>) => (errors ? { message, code, errors } : { message, code })

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 })

app.get('/healthz', async () => ({ status: 'ok' }))

app.post<{ Params: { id: string } }>('/api/v1/restaurants/:id/orders', async (req, reply) => {
  const auth = req.headers.authorization
  const bearer = auth && /^bearer\s+/i.test(auth) ? auth.replace(/^bearer\s+/i, '').trim() : null
  const tok = bearer ? tokenByHash.get(sha256Hex(bearer)) : undefined
  if (!tok || tok.revoked_at || (tok.expires_at && Date.parse(tok.expires_at) <= Date.now())) {
    return reply.code(401).send(error('unauthenticated', 'A valid token is required.'))
  }
  if (!grants(JSON.parse(tok.capabilities) as string[], 'orders:write')) return reply.code(403).send(error('forbidden', 'Missing capability.'))
  const store = /^[1-9]\d{0,15}$/.test(req.params.id) ? stores.ownedBy(Number(req.params.id), tok.owner_id) : undefined
  if (!store) return reply.code(404).send(error('not_found', 'The restaurant does not exist.'))

  const parsed = v.safeParse(OrderInputSchema, req.body)
  if (!parsed.success) {
    const errors: Record<string, string[]> = {}
    for (const issue of parsed.issues) (errors[v.getDotPath(issue) ?? 'body'] ??= []).push(issue.message)
    return reply.code(422).send(error('validation_failed', 'The request is invalid.', errors))
  }
  const now = nowIso()
  const drafted = draftOrder(verticalOf(store.store_type), menuOf(store.id), parsed.output, now)
  if (!drafted.ok) return reply.code(422).send(error('validation_failed', 'The request is invalid.', drafted.errors))

  const order: NewOrder = { ...drafted.draft, store_id: store.id, is_paid: false, customer_id: null, track_token: newTrackToken(), created_at: now }
  // One durable transaction per request: the conventional design group commit is measured against.
  const ids = db.transaction(() => {
    const ids = insertOrder(db, order)
    appendEvent(db, {
      ownerId: store.owner_id, storeId: store.id, event: 'order.created',
      data: { order_id: ids.id, restaurant_id: store.id, type: order.type, status: order.status, total: centsToDecimalString(order.total) },
    })
    return ids
  }).immediate()
  return reply.code(200).send(viewOfNew(order, ids, siteUrl))
})

await app.listen({ port, host: '127.0.0.1' })

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    app.close().then(() => { db.close(); process.exit(0) }, () => process.exit(1))
  })
}
