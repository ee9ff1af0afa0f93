/**
 * Health and metrics (issue 20 item 3, docs/metrics.md): `/metrics` in the Prometheus text format,
 * requests by route id and status, the token on the public port and the separate listener, open
 * sockets by kind, webhook outcomes and queue depth, group-commit histograms, actors; `/readyz`
 * answering 503 when the database or its migrations are not there. A real server, real clients.
 */
import t from 'tap'
import { startServer, findFreePort, type TestServer } from './helpers/server.ts'
import { createAccount, isError, postOrder } from './helpers/fixtures.ts'
import { createEndpoint, startReceiver } from './helpers/webhook-receiver.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { lintExposition, parseMetrics, valueOf, type Sample } from './helpers/prometheus.ts'
import { loadConfig } from '../src/config.ts'
import { buildApp } from '../src/app.ts'
import { createServer } from 'node:net'
import { spawnSync } from 'node:child_process'
import { HttpTimings, requestHistogram } from '../src/metrics/http.ts'

const TOKEN = 'metrics-token-0123456789abcdef'
const metricsPort = await findFreePort()
const s = await startServer({ METRICS_TOKEN: TOKEN, METRICS_PORT: String(metricsPort), WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_RETRY_SCHEDULE: '3600', RATE_LIMIT_PER_MINUTE: '100000' })
const rcv = await startReceiver()
t.teardown(async () => { await s.close(); await rcv.close() })
const acct = createAccount(s.app.svc.db)

const scrape = async (server: TestServer = s): Promise<Sample[]> => {
  const r = await fetch(`${server.site}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
  if (r.status !== 200) throw new Error(`/metrics answered ${r.status}: ${await r.text()}`)
  return parseMetrics(await r.text())
}
const requests = (m: Sample[], route: string, status: number) => valueOf(m, 'dispatch_http_requests_total', { route, status: String(status) }) ?? 0
/** Poll /metrics until `pred` holds (a failure bound, not a timing). */
async function until(pred: (m: Sample[]) => boolean, what: string, ms = 5000): Promise<Sample[]> {
  const end = Date.now() + ms
  for (;;) {
    const m = await scrape()
    if (pred(m)) return m
    if (Date.now() > end) throw new Error(`metrics: ${what} not seen within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

t.test('the exposition parses line by line and carries the process defaults', async (t) => {
  const r = await fetch(`${s.site}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
  t.equal(r.status, 200)
  t.equal(r.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
  t.equal(r.headers.get('cache-control'), 'no-store')
  const text = await r.text()
  const samples = parseMetrics(text) // throws on any line that is not a comment or `name{labels} value`
  t.ok(samples.length > 50, `${samples.length} samples`)
  for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_eventloop_lag_seconds']) {
    t.ok(samples.some((x) => x.name === name), `${name} (process default)`)
  }
  t.match(text, /^# TYPE dispatch_http_request_duration_seconds histogram$/m, 'histogram type line')
  const kinds = samples.filter((x) => x.name === 'dispatch_ws_open_sockets').map((x) => x.labels.kind).sort()
  t.same(kinds, ['dispatch', 'driver', 'kds', 'orders', 'track'], 'one socket gauge per socket kind')
})

t.test('requests count under their route id and status, never the raw URL', async (t) => {
  const before = await scrape()
  const created = await s.req('POST', '/webhook-endpoints', { token: acct.token, body: { url: `${rcv.url}/ok`, events: ['ping'] } })
  t.equal(created.status, 201)
  const missing = await s.req('GET', '/restaurants/987654321', { token: acct.token })
  isError(t, missing, 404, 'not_found')
  const nowhere = await s.req('GET', '/no/such/route/123')
  isError(t, nowhere, 404, 'route_not_found')
  const invalid = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [] })
  isError(t, invalid, 422, 'validation_failed')
  const after = await scrape()
  const moved = (route: string, status: number) => requests(after, route, status) - requests(before, route, status)
  t.equal(moved('POST /api/v1/webhook-endpoints', 201), 1, '201 under its route')
  t.equal(moved('GET /api/v1/restaurants/{id}', 404), 1, '404 of a known route under its template')
  t.equal(moved('unmatched', 404), 1, 'an unknown path under one label')
  t.equal(moved('POST /api/v1/restaurants/{id}/orders', 422), 1, '422 under its route')
  const count = valueOf(after, 'dispatch_http_request_duration_seconds_count', { route: 'POST /api/v1/webhook-endpoints', status: '201' })
  const inf = valueOf(after, 'dispatch_http_request_duration_seconds_bucket', { route: 'POST /api/v1/webhook-endpoints', status: '201', le: '+Inf' })
  t.ok(count && count >= 1 && inf === count, 'the latency histogram counted it (+Inf bucket = count)')
  const routes = new Set(after.filter((x) => x.name === 'dispatch_http_requests_total').map((x) => x.labels.route!))
  t.notOk([...routes].some((r) => /\d{3,}|\/no\/such/.test(r)), `no raw URL among the route labels: ${[...routes].join(', ')}`)
})

t.test('the token is required on the public port', async (t) => {
  const none = await fetch(`${s.site}/metrics`)
  t.equal(none.status, 401)
  t.match(await none.json(), { code: 'unauthenticated' }, 'the §7 envelope')
  t.equal(none.headers.get('www-authenticate'), 'Bearer realm="metrics"')
  const wrong = await fetch(`${s.site}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } })
  t.equal(wrong.status, 401, 'a longer token')
  t.equal(wrong.headers.get('www-authenticate'), 'Bearer realm="metrics", error="invalid_token"', 'a refused token is named in the challenge (RFC 6750 §3.1)')
  const prefix = await fetch(`${s.site}/metrics`, { headers: { authorization: `Bearer ${TOKEN.slice(0, -1)}` } })
  t.equal(prefix.status, 401, 'a prefix of the token')
  const basic = await fetch(`${s.site}/metrics`, { headers: { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` } })
  t.equal(basic.status, 401, 'another scheme')
  t.equal(basic.headers.get('www-authenticate'), 'Bearer realm="metrics"', 'another scheme is no refused token')
  const post = await fetch(`${s.site}/metrics`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })
  t.equal(post.status, 405)
  const right = await fetch(`${s.site}/metrics`, { headers: { authorization: `bearer ${TOKEN}` } })
  t.equal(right.status, 200, 'the scheme is case-insensitive')
  await right.text()

  // Without METRICS_TOKEN and METRICS_PORT nothing serves metrics: /metrics is an unknown path.
  const plain = await startServer()
  t.teardown(() => plain.close())
  t.equal(plain.app.svc.metrics.enabled, false, 'no recorders run')
  isError(t, await plain.req('GET', `${plain.site}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }), 404, 'route_not_found')
})

t.test('the separate listener serves /metrics without a token, and nothing else', async (t) => {
  const r = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
  t.equal(r.status, 200)
  t.equal(r.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
  const samples = parseMetrics(await r.text())
  t.ok(samples.some((x) => x.name === 'dispatch_http_requests_total'), 'the same registry')
  const other = await fetch(`http://127.0.0.1:${metricsPort}/api/v1/me`, { headers: { authorization: `Bearer ${acct.token}` } })
  t.equal(other.status, 404, 'no API there')
  await other.text()
})

t.test('a taken metrics address stops the start with a message', async (t) => {
  const squatter = createServer()
  await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', () => r()))
  t.teardown(() => new Promise<void>((r) => squatter.close(() => r())))
  const taken = (squatter.address() as { port: number }).port
  const app = buildApp(loadConfig({ LOG_LEVEL: 'silent', HOST: '127.0.0.1', PORT: String(await findFreePort()), DB_PATH: ':memory:', METRICS_PORT: String(taken) }))
  await t.rejects(app.listen(), { message: new RegExp(`cannot listen for metrics on 127.0.0.1:${taken}`) })
  await app.close()
})

t.test('an open socket shows in the gauge of its kind and is gone after close', async (t) => {
  const kind = (m: Sample[]) => valueOf(m, 'dispatch_ws_open_sockets', { kind: 'dispatch' })
  t.equal(kind(await scrape()), 0)
  const ws = await WsClient.open(`${wsBase(s)}/ws/dispatch/${acct.storeId}`, { token: acct.token })
  await until((m) => kind(m) === 1, 'dispatch socket open')
  t.equal(valueOf(await scrape(), 'dispatch_ws_open_sockets', { kind: 'track' }), 0, 'other kinds unmoved')
  await ws.close()
  await until((m) => kind(m) === 0, 'dispatch socket closed')
  t.pass('back to 0 after close')
})

t.test('webhook attempts count by outcome; the queue gauge shows what waits for a retry', async (t) => {
  rcv.respond = (r) => (r.path === '/fail' ? { status: 500 } : { status: 200 })
  const outcome = (m: Sample[], o: string) => valueOf(m, 'dispatch_webhook_attempts_total', { outcome: o }) ?? -1
  const before = await scrape()
  const ok = await createEndpoint(s.base, acct.token, `${rcv.url}/ok2`, ['order.created'])
  const failing = await createEndpoint(s.base, acct.token, `${rcv.url}/fail`, ['order.created'])
  t.ok(ok.id && failing.id)
  const o = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.burger.id, quantity: 1 }] })
  t.equal(o.status, 200)
  // An attempt is counted once its record (with the retry time) is committed and synced: the scrape
  // that first counts the retry already shows the delivery waiting in the queue.
  const scheduled = (m: Sample[]) => valueOf(m, 'dispatch_webhook_queue_depth', { state: 'scheduled' }) ?? 0
  const after = await until((m) => outcome(m, 'delivered') > outcome(before, 'delivered') && outcome(m, 'retried') > outcome(before, 'retried'), 'a delivered and a retried attempt')
  t.equal(outcome(after, 'delivered') - outcome(before, 'delivered'), 1, 'the 200 counts as delivered')
  t.equal(outcome(after, 'retried') - outcome(before, 'retried'), 1, 'the 500 counts as retried (a retry is scheduled)')
  t.equal(outcome(after, 'failed'), outcome(before, 'failed'), 'nothing gave up')
  t.ok(scheduled(after) >= 1, 'the failed delivery waits in the queue for its retry')
  t.ok(valueOf(after, 'dispatch_webhook_attempts_in_flight') !== undefined)
})

t.test('group commit: batch sizes, commit time and fsync latency have counts; actors are live', async (t) => {
  const o = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.burger.id, quantity: 1 }] })
  t.equal(o.status, 200)
  const m = await scrape()
  const batches = valueOf(m, 'dispatch_commit_batch_size_count') ?? 0
  t.ok(batches >= 1, `${batches} batches`)
  t.ok((valueOf(m, 'dispatch_commit_batch_size_sum') ?? 0) >= batches, 'at least one write per batch')
  t.equal(valueOf(m, 'dispatch_commit_duration_seconds_count'), batches, 'one commit time per batch')
  t.ok((valueOf(m, 'dispatch_commit_fsync_seconds_count') ?? 0) >= 1, 'WAL fsyncs observed (file database, group commit)')
  t.ok((valueOf(m, 'dispatch_actors_live', { kind: 'store' }) ?? 0) >= 1, 'the store actor is live')
  t.ok((valueOf(m, 'dispatch_actors_live', { kind: 'webhook' }) ?? 0) >= 1, 'endpoint actors are live')
  t.equal(valueOf(m, 'dispatch_actor_mailbox_depth', { kind: 'order' }), 0, 'nothing queued at rest')
  t.equal(valueOf(m, 'dispatch_actor_mailbox_max', { kind: 'store' }), 0)
})

t.test('/readyz: 503 when migrations are missing or the database does not answer', async (t) => {
  const ready = async () => { const r = await fetch(`${s.site}/readyz`); return { status: r.status, body: await r.json() as { status: string; checks: Record<string, boolean> } } }
  t.match(await ready(), { status: 200, body: { status: 'ready', checks: { database: true, migrations: true, draining: false } } })
  const db = s.app.svc.db
  const newest = db.prepare('SELECT * FROM schema_migrations ORDER BY version DESC LIMIT 1').get() as { version: number; name: string; applied_at: string }
  db.prepare('DELETE FROM schema_migrations WHERE version = ?').run(newest.version)
  t.match(await ready(), { status: 503, body: { status: 'not_ready', checks: { database: true, migrations: false } } }, 'a migration not applied')
  db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (@version, @name, @applied_at)').run(newest)
  db.exec('ALTER TABLE schema_migrations RENAME TO schema_migrations_away')
  t.match(await ready(), { status: 503, body: { status: 'not_ready', checks: { database: false } } }, 'the query fails')
  db.exec('ALTER TABLE schema_migrations_away RENAME TO schema_migrations')
  t.equal((await ready()).status, 200, 'ready again')
})

/**
 * `promtool check metrics` on `text` when promtool is here (PROMTOOL, else on PATH; .ci/run takes
 * it from Debian's prometheus package): its exit status and report, or null without promtool.
 */
function promtool(text: string): { status: number | null; report: string } | null {
  const run = spawnSync(process.env.PROMTOOL ?? 'promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' })
  return run.error ? null : { status: run.status, report: `${run.stdout}${run.stderr}`.trim() }
}

t.test('the exposition as `promtool check metrics` reads it: no problem', async (t) => {
  // After the tests above every family has series: requests, sockets, webhooks, commits, actors.
  const r = await fetch(`${s.site}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
  const text = await r.text()
  t.same(lintExposition(text), [], 'Prometheus\'s naming rules: counters end in _total and nothing else does, HELP on every family, valid names, no duplicates')
  for (const name of ['nodejs_active_handles', 'nodejs_active_requests', 'nodejs_active_resources']) {
    t.match(text, new RegExp(`^# TYPE ${name} gauge$`, 'm'), `${name} (by type) is kept`)
    t.notMatch(text, new RegExp(`^# TYPE ${name}_total `, 'm'), `${name}_total, a gauge named like a counter, is not`)
  }
  const checked = promtool(text)
  if (!checked) return t.comment('promtool not found (set PROMTOOL): checked by the rules above only')
  t.same(checked, { status: 0, report: '' }, 'promtool: 0 problems')
})

t.test('the rules find what promtool finds', async (t) => {
  const bad = [
    '# HELP nodejs_active_handles_total Total number of active handles.', '# TYPE nodejs_active_handles_total gauge', 'nodejs_active_handles_total 3',
    '# HELP jobs_done Jobs done.', '# TYPE jobs_done counter', 'jobs_done 1',
    '# TYPE no_help_bytes gauge', 'no_help_bytes 1',
    '# HELP latency_ms Latency.', '# TYPE latency_ms gauge', 'latency_ms 1',
    '# HELP queueDepth Depth.', '# TYPE queueDepth gauge', 'queueDepth 1',
    '# HELP fine_seconds Fine.', '# TYPE fine_seconds histogram', 'fine_seconds_bucket{le="+Inf"} 1', 'fine_seconds_sum 1', 'fine_seconds_count 1',
    '',
  ].join('\n')
  // Ours say `name: what`, promtool's `name what`.
  const names = (problems: string[]) => [...new Set(problems.map((p) => p.split(/:? /)[0]!))].sort()
  const found = lintExposition(bad)
  t.same(names(found), ['jobs_done', 'latency_ms', 'no_help_bytes', 'nodejs_active_handles_total', 'queueDepth'], `the rules: ${found.join('; ')}`)
  const checked = promtool(bad)
  if (!checked) return t.comment('promtool not found (set PROMTOOL)')
  t.not(checked.status, 0)
  t.same(names(checked.report.split('\n')), names(found), `promtool agrees: ${checked.report}`)
})

t.test('route timers: buckets are cumulative and `le` is inclusive (pure)', async (t) => {
  const timings = new HttpTimings()
  const timer = timings.timer('GET /x')
  for (const s of [0.001, 0.0011, 20]) timer.observe(200, s)
  const values = requestHistogram(timings).get().values.filter((v) => v.labels.route === 'GET /x')
  const bucket = (le: string) => values.find((v) => v.metricName?.endsWith('_bucket') && String(v.labels.le) === le)?.value
  t.equal(bucket('0.0005'), 0)
  t.equal(bucket('0.001'), 1, '0.001 falls in le=0.001')
  t.equal(bucket('0.0025'), 2)
  t.equal(bucket('10'), 2, '20 s is above the last finite bucket')
  t.equal(bucket('+Inf'), 3)
  t.equal(values.find((v) => v.metricName?.endsWith('_count'))?.value, 3)
  t.equal(timings.timer('GET /x'), timer, 'one timer per route id')
})

t.test('METRICS_* are validated at start', async (t) => {
  t.throws(() => loadConfig({ METRICS_TOKEN: 'short' }), /METRICS_TOKEN: must be 16 to 256 printable characters/)
  t.throws(() => loadConfig({ METRICS_TOKEN: 'has a space in it here' }), /METRICS_TOKEN/)
  t.throws(() => loadConfig({ METRICS_HOST: '127.0.0.1' }), /METRICS_HOST needs METRICS_PORT/)
  t.throws(() => loadConfig({ PORT: '9000', METRICS_PORT: '9000' }), /METRICS_PORT must differ from PORT/)
  t.throws(() => loadConfig({ METRICS_PORT: '70000' }), /METRICS_PORT: must be at most 65535/)
  t.throws(() => loadConfig({ METRICS_HOST: 'bad host!', METRICS_PORT: '9100' }), /METRICS_HOST/)
  t.same(loadConfig({ METRICS_PORT: '9100' }).metricsListen, { host: '127.0.0.1', port: 9100 }, 'loopback by default')
  t.equal(loadConfig({}).metricsToken, null)
  t.equal(loadConfig({}).metricsListen, null)
})
