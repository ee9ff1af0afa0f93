/**
 * Retention (issue 21 item 7; docs/running.md "Backups and retention"): the prune run with a
 * moved clock deletes what is past its retention — finished webhook deliveries and their attempt
 * log, old positions of drivers off shift, idempotency keys, expired or revoked sessions and
 * tokens, expired sign-in codes — and never what is still needed: a pending delivery's attempts, an
 * idempotency key younger than 24 h (a replay still returns the original order), live tokens, a
 * driver on shift. Outbox events go once the webhook fan-out has passed them; a stored POD photo no
 * delivery names, an hour after its upload. No rule scans a table that grows with traffic. Settings are validated at start.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { until } from './helpers/people.ts'
import { createAccount, createCustomer, createDriver, createStaff, postOrder, tokenFor } from './helpers/fixtures.ts'
import Database from 'better-sqlite3'
import { migrate, nowIso, type Db } from '../src/storage/db.ts'
import { lastIdBefore, PRUNE_CHUNK, pruneRules, pruneStep } from '../src/storage/prune.ts'
import { loadConfig } from '../src/config.ts'
import { sha256Hex } from '../src/auth/tokens.ts'
import { installApp, upsertAgentClient } from '../src/storage/apps.ts'
import { AGENT_TERMS } from '../src/ops/apps/agent-clients.ts'
import { createTestApp } from './helpers/apps.ts'

const H = 3600_000
const D = 24 * H
const s = await startServer({ PRUNE_CRON: 'off', RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const count = (sql: string, ...p: unknown[]) => db.prepare(sql).pluck().get(...p) as number
const at = (offsetMs: number) => new Date(Date.now() + offsetMs)
const iso = (offsetMs: number) => nowIso(Date.now() + offsetMs)

t.test('idempotency keys live at least 24 h: a replay a day later still returns the original', async (t) => {
  const body = { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] }
  const first = await postOrder(s, acct.token, acct.storeId, body, { 'idempotency-key': 'prune-key-1' })
  t.equal(first.status, 200)
  const report = await s.app.prune.runNow(at(23 * H))
  t.equal(report?.idempotency_keys, 0, 'not at 23 h')
  const replay = await postOrder(s, acct.token, acct.storeId, body, { 'idempotency-key': 'prune-key-1' })
  t.equal(replay.body.id, first.body.id, 'the replay returns the original order')
  t.equal(replay.headers.get('idempotent-replayed'), 'true')
  t.equal((await s.app.prune.runNow(at(6 * D)))?.idempotency_keys, 0, 'kept for the default 168 h')
  t.equal((await s.app.prune.runNow(at(8 * D)))?.idempotency_keys, 1, 'gone after 168 h')
  t.equal(count("SELECT COUNT(*) FROM idempotency_keys WHERE key = 'prune-key-1'"), 0)
})

t.test('webhook attempt logs: finished deliveries go after retention, a pending delivery keeps everything', async (t) => {
  const old = iso(-40 * D)
  const ep = Number(db.prepare("INSERT INTO webhook_endpoints (owner_id, url, events, secret, from_event_id, paused_at, created_at) VALUES (?, 'https://example.invalid/h', '[\"*\"]', 'whsec_x', 0, ?, ?)").run(acct.ownerId, old, old).lastInsertRowid)
  const delivery = (status: string) => Number(db.prepare("INSERT INTO webhook_deliveries (endpoint_id, msg_id, event, body, status, attempts, next_attempt_at, created_at, updated_at) VALUES (?, ?, 'order.created', '{}', ?, 1, ?, ?, ?)")
    .run(ep, `msg_${status}_${Math.random()}`, status, status === 'pending' ? Date.now() + 60_000 : null, old, old).lastInsertRowid)
  const done = delivery('succeeded')
  const failed = delivery('failed')
  const pending = delivery('pending')
  for (const d of [done, failed, pending]) db.prepare("INSERT INTO webhook_attempts (delivery_id, attempt, http_status, duration_ms, created_at) VALUES (?, 1, 500, 3, ?)").run(d, old)
  const recent = delivery('succeeded')
  db.prepare('UPDATE webhook_deliveries SET updated_at = ? WHERE id = ?').run(iso(-1 * D), recent)
  db.prepare("INSERT INTO webhook_attempts (delivery_id, attempt, http_status, duration_ms, created_at) VALUES (?, 1, 200, 3, ?)").run(recent, iso(-1 * D))

  await s.app.prune.runNow(at(0))
  t.equal(count('SELECT COUNT(*) FROM webhook_deliveries WHERE id IN (?, ?)', done, failed), 0, 'finished deliveries past 30 days are gone')
  t.equal(count('SELECT COUNT(*) FROM webhook_attempts WHERE delivery_id IN (?, ?)', done, failed), 0, 'with their attempts')
  t.equal(count('SELECT COUNT(*) FROM webhook_deliveries WHERE id = ?', pending), 1, 'a pending delivery is kept')
  t.equal(count('SELECT COUNT(*) FROM webhook_attempts WHERE delivery_id = ?', pending), 1, 'and its attempts, however old')
  t.equal(count('SELECT COUNT(*) FROM webhook_attempts WHERE delivery_id = ?', recent), 1, 'a recent delivery keeps its log')
})

t.test('sessions, tokens and sign-in codes go only after expiry or revocation plus retention', async (t) => {
  const expiring = tokenFor(db, acct.ownerId, ['*'], iso(1 * D))
  const forever = tokenFor(db, acct.ownerId, ['*'])
  const revokedStaff = createStaff(db, acct.storeId, { role: 'kitchen' })
  const liveStaff = createStaff(db, acct.storeId, { role: 'kitchen' })
  t.equal((await s.req('POST', '/staff/logout', { token: revokedStaff.token })).status, 200)
  const customer = createCustomer(db, acct.storeId)
  db.prepare('INSERT INTO customer_otps (store_id, phone, code_hash, expires_at, created_at) VALUES (?, ?, ?, ?, ?)').run(acct.storeId, '+15550000001', 'h1', iso(-2 * D), iso(-2 * D))
  db.prepare('INSERT INTO customer_otps (store_id, phone, code_hash, expires_at, created_at) VALUES (?, ?, ?, ?, ?)').run(acct.storeId, '+15550000002', 'h2', iso(10 * 60_000), iso(0))
  db.prepare('INSERT INTO driver_login_codes (phone, code_hash, expires_at, created_at) VALUES (?, ?, ?, ?)').run('+15550000003', 'h3', iso(-2 * D), iso(-2 * D))

  const now = await s.app.prune.runNow(at(0))
  t.equal(now?.customer_otps, 1, 'an OTP expired two days ago goes (24 h retention)')
  t.equal(now?.driver_login_codes, 1)
  t.equal(count("SELECT COUNT(*) FROM customer_otps WHERE phone = '+15550000002'"), 1, 'a code that can still be used stays')
  t.equal(now?.staff_tokens, 0, 'a token revoked just now stays for the retention period')

  const later = await s.app.prune.runNow(at(32 * D))
  t.ok((later?.owner_tokens ?? 0) >= 1, 'the owner token that expired 31 days before is gone')
  t.equal(count('SELECT COUNT(*) FROM owner_tokens WHERE token_hash = ?', sha256Hex(expiring)), 0)
  t.equal((await s.req('GET', '/restaurants', { token: expiring })).status, 401, 'and it stays refused')
  t.ok((later?.staff_tokens ?? 0) >= 1, 'the revoked staff token is gone')
  t.equal((await s.req('GET', '/restaurants', { token: forever })).status, 200, 'a token without expiry still works')
  t.equal((await s.req('GET', '/staff/me', { token: liveStaff.token })).status, 200, 'a live staff token still works')
  t.equal((await s.req('GET', '/customer/me', { token: customer.token })).status, 200, 'a live customer token still works')
  t.equal((await s.req('GET', '/staff/me', { token: revokedStaff.token })).status, 401, 'the pruned one is still refused')
})

t.test('old positions of drivers off shift are cleared; a driver on shift keeps its position', async (t) => {
  const off = createDriver(db, acct.ownerId, acct.storeId)
  const on = createDriver(db, acct.ownerId, acct.storeId, { onShift: true })
  for (const d of [off, on]) db.prepare('INSERT INTO driver_positions (lat, lng, location_updated_at, driver_id) VALUES (52.5, 13.4, ?, ?)').run(iso(-8 * D), d.id)
  await s.app.prune.runNow(at(0))
  t.same(db.prepare('SELECT p.lat, p.lng, p.location_updated_at FROM drivers d LEFT JOIN driver_positions p ON p.driver_id = d.id WHERE d.id = ?').get(off.id), { lat: null, lng: null, location_updated_at: null })
  t.equal(count('SELECT lat FROM driver_positions WHERE driver_id = ?', on.id), 52.5)
})

t.test('outbox events go once the webhook fan-out has passed them and retention is over; the newest stays', async (t) => {
  const o = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
  t.equal(o.status, 200)
  const cursor = () => count('SELECT last_event_id FROM webhook_cursor WHERE id = 1')
  t.equal(cursor(), count('SELECT MAX(id) FROM outbox'), 'the fan-out has passed every event')
  // Written behind the server's back: the fan-out has not seen it when the prune's job runs.
  const unseen = Number(db.prepare("INSERT INTO outbox (owner_id, store_id, event, data, created_at) VALUES (?, ?, 'order.updated', '{}', ?)").run(acct.ownerId, acct.storeId, nowIso()).lastInsertRowid)
  const passed = cursor()
  t.equal((await s.app.prune.runNow(at(29 * D)))?.outbox, 0, 'nothing before 30 days')
  const report = await s.app.prune.runNow(at(31 * D))
  t.ok((report?.outbox ?? 0) > 0, `${report?.outbox} events past retention deleted`)
  t.equal(count('SELECT COUNT(*) FROM outbox WHERE id <= ?', passed), 0, 'every event behind the cursor went')
  t.equal(count('SELECT COUNT(*) FROM outbox WHERE id = ?', unseen), 1, 'an event the fan-out had not passed stayed')
  t.equal(count('SELECT MAX(id) FROM outbox'), unseen, 'the newest event stays (new endpoints start after it)')
})

t.test('lastIdBefore: the id prefix created before a cut-off, by binary search', async (t) => {
  const mem = new Database(':memory:')
  t.teardown(() => mem.close())
  mem.exec('CREATE TABLE outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, created_at TEXT NOT NULL)')
  t.equal(lastIdBefore(mem as unknown as Db, 'outbox', '5'), 0, 'an empty table')
  // Ids with gaps (deleted rows), times increasing with them.
  for (const [id, time] of [[3, '1'], [4, '2'], [9, '2'], [10, '4'], [57, '6'], [58, '8']] as const) mem.prepare('INSERT INTO outbox (id, created_at) VALUES (?, ?)').run(id, time)
  for (const [cutoff, want] of [['0', 0], ['1', 0], ['2', 3], ['3', 9], ['4', 9], ['5', 10], ['7', 57], ['9', 58]] as const) {
    t.equal(lastIdBefore(mem as unknown as Db, 'outbox', cutoff), want, `before ${cutoff}: ${want}`)
  }
})

t.test('a backlog goes in steps of PRUNE_CHUNK rows, each its own transaction, until nothing is left', async (t) => {
  const mem = new Database(':memory:') as unknown as Db
  t.teardown(() => mem.close())
  migrate(mem)
  const old = nowIso(Date.now() - 40 * D)
  const ins = mem.prepare("INSERT INTO outbox (owner_id, store_id, event, data, created_at) VALUES (1, 1, 'order.created', '{}', ?)")
  for (let i = 0; i < 12; i++) ins.run(old)
  mem.prepare('UPDATE webhook_cursor SET last_event_id = (SELECT MAX(id) FROM outbox) WHERE id = 1').run()
  const r = { webhookAttemptsMs: 30 * D, driverPositionsMs: 7 * D, idempotencyMs: 168 * H, sessionsMs: 30 * D, otpMs: 24 * H, eventsMs: 30 * D }
  const steps = [1, 2, 3].map(() => pruneStep(mem, new Date(), r, 5))
  t.same(steps.map((s) => [s.report.outbox, s.more]), [[5, true], [5, true], [1, false]], 'five, five, then the last one but the newest')
  t.equal(mem.prepare('SELECT COUNT(*) FROM outbox').pluck().get(), 1, 'the newest event stays')
})

t.test('the scheduled pass steps until the backlog is gone and adds the steps up', async (t) => {
  // More events past retention than one step deletes, written behind the server's back, then passed by the fan-out.
  const n = PRUNE_CHUNK + 3
  const ins = db.prepare("INSERT INTO outbox (owner_id, store_id, event, data, created_at) VALUES (?, ?, 'order.updated', '{}', ?)")
  db.transaction(() => { for (let i = 0; i < n; i++) ins.run(acct.ownerId, acct.storeId, nowIso()) })()
  const o = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
  t.equal(o.status, 200)
  // The fan-out takes a backlog in slices; the prune only deletes what its cursor has passed.
  await until(() => count('SELECT last_event_id FROM webhook_cursor WHERE id = 1') === count('SELECT MAX(id) FROM outbox'), 15_000)
  const report = await s.app.prune.runNow(at(60 * D))
  t.ok((report?.outbox ?? 0) >= n, `${report?.outbox} events deleted in one pass (more than ${PRUNE_CHUNK})`)
  t.equal(count('SELECT COUNT(*) FROM outbox'), 1, 'only the newest event is left')
})

t.test('agent clients nobody consented to go after the session retention; consented ones and developer apps stay', async (t) => {
  const agent = (clientId: string) => upsertAgentClient(db, {
    clientId, name: clientId, description: '', iconUrl: null, redirectUris: ['http://localhost/cb'], clientSecret: 'x', webhookSecret: 'y',
    terms: AGENT_TERMS, metadataUrl: null,
  }, nowIso())
  const idle = agent('agt_idle')
  const used = agent('agt_used')
  installApp(db, used.id, acct.ownerId, ['mcp:use'], AGENT_TERMS, nowIso())
  const dev = createTestApp(db, acct.ownerId)
  const report = await s.app.prune.runNow(at(31 * D))
  t.ok((report?.apps ?? 0) >= 1, 'the registration nobody took up is deleted')
  t.equal(count('SELECT COUNT(*) FROM apps WHERE id = ?', idle.id), 0)
  t.equal(count('SELECT COUNT(*) FROM apps WHERE id IN (?, ?)', used.id, dev.id), 2, 'an installed agent and a developer app stay')
})

t.test('stored POD photos no delivery names go an hour after their upload; named and recent ones stay', async (t) => {
  const order = (await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })).body.id as number
  const photo = (path: string, createdAt: string) =>
    db.prepare("INSERT INTO pod_photos (path, order_id, type, created_at, bytes) VALUES (?, ?, 'image/png', ?, ?)").run(path, order, createdAt, Buffer.alloc(64, 1))
  photo(`pod/${order}-named.png`, iso(-3 * H))
  db.prepare("INSERT INTO deliveries (order_id, photo_path, photo_type, photo_bytes, photo_at, updated_at) VALUES (?, ?, 'image/png', 64, ?, ?)").run(order, `pod/${order}-named.png`, iso(-3 * H), iso(-3 * H))
  photo(`pod/${order}-orphan.png`, iso(-2 * H))
  photo(`pod/${order}-uploading.png`, iso(-10 * 60_000))
  const report = await s.app.prune.runNow(at(0))
  t.equal(report?.pod_photos, 1, 'the orphan of an upload whose order write never came')
  const left = () => db.prepare('SELECT path FROM pod_photos WHERE order_id = ? ORDER BY path').pluck().all(order)
  t.same(left(), [`pod/${order}-named.png`, `pod/${order}-uploading.png`], 'the photo the delivery names stays, and one still within its upload\'s hour')
  t.equal((await s.app.prune.runNow(at(2 * H)))?.pod_photos, 1, 'the unnamed one goes an hour later')
  t.same(left(), [`pod/${order}-named.png`], 'the named photo stays, however old')
  t.equal((await s.app.prune.runNow(at(60 * D)))?.pod_photos, 0)
  t.same(left(), [`pod/${order}-named.png`])
})

t.test('no rule reads a whole table that grows with traffic (the prune costs what it deletes)', async (t) => {
  const r = { webhookAttemptsMs: D, driverPositionsMs: D, idempotencyMs: D, sessionsMs: D, otpMs: D, eventsMs: D }
  const grown = ['outbox', 'webhook_deliveries', 'webhook_attempts', 'idempotency_keys', 'orders', 'order_lines', 'pod_photos']
  for (const [name, sql, params] of pruneRules(db, new Date(), r)) {
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((p) => p.detail)
    // The plan includes the foreign-key actions of a DELETE (a re-queue's ON DELETE SET NULL).
    t.same(plan.filter((d) => grown.some((g) => new RegExp(`^SCAN ${g}\\b`).test(d))), [], `${name}: ${plan.join(' | ')}`)
  }
})

t.test('a second pass at the same time deletes nothing (idempotent)', async (t) => {
  await s.app.prune.runNow(at(40 * D))
  const again = await s.app.prune.runNow(at(40 * D))
  t.same(Object.values(again ?? { x: 1 }).filter((n) => n > 0), [])
})

t.test('PRUNE_CLOCK moves the scheduled prune\'s clock (tests only); settings are checked at start', async (t) => {
  const moved = await startServer({ PRUNE_CRON: 'off', NODE_ENV: 'test', PRUNE_CLOCK: '+9d' })
  t.teardown(() => moved.close())
  const a = createAccount(moved.app.svc.db)
  const r = await postOrder(moved, a.token, a.storeId, { type: 'takeaway', items: [{ item_id: a.menu.fries, quantity: 1 }] }, { 'idempotency-key': 'k' })
  t.equal(r.status, 200)
  t.equal((await moved.app.prune.runNow())?.idempotency_keys, 1, 'the run without a date uses PRUNE_CLOCK')

  t.throws(() => loadConfig({ RETENTION_IDEMPOTENCY_HOURS: '12' }), /RETENTION_IDEMPOTENCY_HOURS: must be at least 24/)
  t.throws(() => loadConfig({ PRUNE_CRON: 'every day' }), /PRUNE_CRON is not a cron expression/)
  t.throws(() => loadConfig({ PRUNE_CLOCK: '+1d' }), /only with NODE_ENV=test/)
  t.throws(() => loadConfig({ RETENTION_OTP_HOURS: 'x' }), /whole number/)
  t.throws(() => loadConfig({ RETENTION_EVENTS_DAYS: '0' }), /RETENTION_EVENTS_DAYS/)
  t.match(loadConfig({}), { pruneCron: '23 * * * *', retention: { idempotencyMs: 168 * H, webhookAttemptsMs: 30 * D, eventsMs: 30 * D } })
  t.match(loadConfig({ RETENTION_EVENTS_DAYS: '90' }), { retention: { eventsMs: 90 * D } })
})
