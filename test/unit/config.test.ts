/** Configuration (README table): defaults, derived base_url, and refusal of invalid values. */
import t from 'tap'
import { loadConfig } from '../../src/config.ts'

t.test('defaults are the documented ones', async (t) => {
  const c = loadConfig({})
  t.match(c, {
    port: 8080, host: '0.0.0.0', dbPath: './data/dispatch.db', siteUrl: 'http://localhost:8080', baseUrl: 'http://localhost:8080/api/v1',
    logLevel: 'info', webhookAllowLoopback: false, groupCommit: true, rateLimitPerMinute: 120, bodyLimitBytes: 1024 * 1024, demoSeed: true,
  })
  t.same(c.webhookRetrySchedule, [60, 300, 900, 3600])
  t.ok(Object.isFrozen(c), 'frozen')
})

t.test('SITE_URL follows PORT by default and {base_url} is SITE_URL/api/v1', async (t) => {
  t.equal(loadConfig({ PORT: '9090' }).siteUrl, 'http://localhost:9090')
  const c = loadConfig({ SITE_URL: 'https://dispatch.example/' })
  t.equal(c.siteUrl, 'https://dispatch.example', 'trailing slash dropped')
  t.equal(c.baseUrl, 'https://dispatch.example/api/v1')
})

t.test('switches and numbers parse', async (t) => {
  const c = loadConfig({ WEBHOOK_ALLOW_LOOPBACK: '1', GROUP_COMMIT: '0', DEMO_SEED: 'false', RATE_LIMIT_PER_MINUTE: '5', BODY_LIMIT_BYTES: '2048', DB_PATH: ':memory:', LOG_LEVEL: 'silent', WEBHOOK_RETRY_SCHEDULE: '1, 2,3' })
  t.match(c, { webhookAllowLoopback: true, groupCommit: false, demoSeed: false, rateLimitPerMinute: 5, bodyLimitBytes: 2048, dbPath: ':memory:', logLevel: 'silent' })
  t.same(c.webhookRetrySchedule, [1, 2, 3])
})

t.test('invalid values are refused at start, naming the variable', async (t) => {
  for (const env of [{ PORT: 'http' }, { PORT: '-1' }, { LOG_LEVEL: 'loud' }, { RATE_LIMIT_PER_MINUTE: '0' }, { BODY_LIMIT_BYTES: '10' }, { WEBHOOK_RETRY_SCHEDULE: 'soon' }]) {
    const name = Object.keys(env)[0]!
    t.throws(() => loadConfig(env), new RegExp(name), `${name}=${Object.values(env)[0]}`)
  }
})

t.test('cluster mode: NATS_URL switches it on; invalid combinations are refused in one line (docs/cluster.md)', async (t) => {
  t.equal(loadConfig({}).cluster, null, 'off by default')
  const c = loadConfig({ NATS_URL: 'nats://a:4222, nats://b:4222', NODE_ID: 'node-1', HOST: '127.0.0.1', PORT: '8081' }).cluster
  t.match(c, { natsUrls: ['nats://a:4222', 'nats://b:4222'], nodeId: 'node-1', name: 'dispatch', replicas: 2, leaseMs: 3000, maxLagMs: 5000, nodeUrl: 'http://127.0.0.1:8081' })
  t.equal(c?.readLagMs, 2000, 'replicas serve public reads while at most 2 s behind, by default')
  t.equal(loadConfig({ NATS_URL: 'nats://a:4222', NODE_ID: 'n', CLUSTER_READ_LAG_MS: '0' }).cluster?.readLagMs, 0, '0: only while caught up')
  t.equal(loadConfig({ NATS_URL: 'nats://a:4222', NODE_ID: 'n', CLUSTER_READ_LAG_MS: 'off' }).cluster?.readLagMs, null, 'off: every read goes to the primary')
  t.equal(c?.snapshotMinIntervalMs, 60_000, 'snapshots at most once a minute, by default')
  t.equal(loadConfig({ NATS_URL: 'nats://a:4222', NODE_ID: 'n', CLUSTER_SNAPSHOT_MIN_INTERVAL_MS: '0' }).cluster?.snapshotMinIntervalMs, 0, '0: by count alone')
  t.equal(loadConfig({ NATS_URL: 'nats://a:4222', NODE_ID: 'n', NODE_URL: 'https://node-1.internal:8443/' }).cluster?.nodeUrl, 'https://node-1.internal:8443', 'NODE_URL as given, without a trailing slash')
  t.match(loadConfig({ NATS_URL: 'nats://a:4222', NODE_ID: 'n', PORT: '9000' }).cluster?.nodeUrl, /^http:\/\/[^/]+:9000$/, 'listening on every address: this machine\'s name')
  const refused: Array<[Record<string, string>, RegExp]> = [
    [{ NODE_ID: 'n' }, /NODE_ID needs NATS_URL/],
    [{ NODE_URL: 'http://x:1' }, /NODE_URL needs NATS_URL/],
    [{ NATS_URL: 'nats://a:4222' }, /NODE_ID is required/],
    [{ NATS_URL: 'nats://a:4222', NODE_ID: 'n', NODE_URL: 'ftp://x' }, /NODE_URL must be http\(s\):\/\/host:port/],
    [{ NATS_URL: 'nats://a:4222', NODE_ID: 'n', NODE_URL: 'http://x:1/path' }, /NODE_URL must be/],
    [{ NATS_URL: 'nats://a:4222', NODE_ID: 'n', DB_PATH: ':memory:' }, /:memory:/],
    [{ NATS_URL: 'nats://a:4222', NODE_ID: 'n', GROUP_COMMIT: '0' }, /GROUP_COMMIT=0/],
    [{ CLUSTER_READ_LAG_MS: '100' }, /CLUSTER_READ_LAG_MS needs NATS_URL/],
    [{ NATS_URL: 'nats://a:4222', NODE_ID: 'n', CLUSTER_READ_LAG_MS: 'soon' }, /CLUSTER_READ_LAG_MS must be a whole number/],
    [{ NATS_URL: 'nats://a:4222', NODE_ID: 'n', CLUSTER_READ_LAG_MS: '3600001' }, /CLUSTER_READ_LAG_MS must be between 0 and 3600000/],
    [{ CLUSTER_SNAPSHOT_MIN_INTERVAL_MS: '1000' }, /CLUSTER_SNAPSHOT_MIN_INTERVAL_MS needs NATS_URL/],
    [{ NATS_URL: 'nats://a:4222', NODE_ID: 'n', CLUSTER_SNAPSHOT_MIN_INTERVAL_MS: '-1' }, /CLUSTER_SNAPSHOT_MIN_INTERVAL_MS must be/],
  ]
  for (const [env, why] of refused) t.throws(() => loadConfig(env), why, JSON.stringify(env))
})
