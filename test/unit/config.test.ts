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
