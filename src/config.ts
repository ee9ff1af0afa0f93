/** Environment parsed once into a frozen configuration object (README "Configuration"). */
import * as v from 'valibot'
import { randomBytes } from 'node:crypto'
import { validate as validateCron } from 'node-cron'
import { isClockSpec } from './billing/clock.ts'
import { parseTrustProxy, type TrustProxy } from './net/client-address.ts'
import { tileTemplateProblem } from './domain/map-tiles.ts'
import type { Retention } from './storage/prune.ts'
import { providersConfig, type ProvidersConfig } from './providers/config.ts'
import { clusterConfig, type ClusterConfig } from './cluster/config.ts'

/** A switch: one of these words, any case; anything else (`maybe`) is refused at start, not read as off. */
const TRUE = ['1', 'true', 'yes', 'on']
const FALSE = ['0', 'false', 'no', 'off']
const bool = (fallback: boolean) => v.pipe(
  v.optional(v.string(), fallback ? '1' : '0'),
  v.check((s) => [...TRUE, ...FALSE].includes(s.trim().toLowerCase()), (i) => `must be one of 1/0, true/false, yes/no, on/off, got "${String(i.input)}"`),
  v.transform((s) => TRUE.includes(s.trim().toLowerCase())),
)
const flag = bool(false)
const int = (fallback: number, min = 0) =>
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.check((s) => /^\s*\d+\s*$/.test(s), (i) => `must be a whole number, got "${String(i.input)}"`),
    v.transform(Number), v.integer(), v.minValue(min, (i) => `must be at least ${min}, got ${String(i.input)}`),
  )
/** An upper bound with a message that says it (valibot's default reads "Invalid value: Expected <=…"). */
const max = (n: number) => v.maxValue<number, number, (i: v.MaxValueIssue<number, number>) => string>(n, (i) => `must be at most ${n}, got ${String(i.input)}`)
/** SITE_URL: an absolute http(s) address without query or fragment (links, OAuth redirects, CORS origin). */
const siteUrl = v.optional(v.pipe(v.string(), v.check((s) => {
  try {
    const u = new URL(s)
    return (u.protocol === 'http:' || u.protocol === 'https:') && !u.search && !u.hash && !u.username
  } catch { return false }
}, (i) => `must be an absolute http:// or https:// URL without query or fragment, got "${String(i.input)}"`)))

const EnvSchema = v.object({
  PORT: v.pipe(int(8080, 1), max(65_535)),
  HOST: v.pipe(v.optional(v.string(), '0.0.0.0'), v.check((s) => /^[\w.:-]+$/.test(s), (i) => `must be an address or host name, got "${String(i.input)}"`)),
  DB_PATH: v.pipe(v.optional(v.string(), './data/dispatch.db'), v.nonEmpty('must not be empty')),
  SITE_URL: siteUrl,
  LOG_LEVEL: v.optional(v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
  WEBHOOK_ALLOW_LOOPBACK: flag,
  WEBHOOK_RETRY_SCHEDULE: v.optional(v.string()),
  WEBHOOK_TIMEOUT_MS: v.pipe(int(10_000, 1), max(60_000)),
  WEBHOOK_CONCURRENCY: v.pipe(int(8, 1), max(256)),
  WEBHOOK_ACCOUNT_CONCURRENCY: v.pipe(int(64, 1), max(4096)),
  WEBHOOK_GLOBAL_CONCURRENCY: v.pipe(int(256, 1), max(65_536)),
  WEBHOOK_MAX_ENDPOINTS: v.pipe(int(20, 1), max(10_000)),
  WEBHOOK_CIRCUIT_FAILURES: v.pipe(int(5, 1), max(1000)),
  WEBHOOK_CIRCUIT_COOLDOWN_MS: v.pipe(int(60_000, 1), max(86_400_000)),
  WEBHOOK_DISABLE_AFTER_MS: int(3 * 86_400_000, 1),
  GROUP_COMMIT: bool(true),
  RATE_LIMIT_PER_MINUTE: int(120, 1),
  BODY_LIMIT_BYTES: int(1024 * 1024, 1024),
  /** Largest menu item photo accepted (docs/menu-photos.md); its upload route's body limit follows it. */
  PHOTO_MAX_BYTES: v.pipe(int(8 * 1024 * 1024, 1024), max(64 * 1024 * 1024)),
  /** Limits under abuse (docs/limits.md): the whole body must arrive within this many ms, else 408. */
  BODY_TIMEOUT_MS: v.pipe(int(30_000, 100), max(600_000)),
  /** Request target (path + query) and total header bytes; above them 414 / 431 (docs/limits.md). */
  MAX_URL_BYTES: v.pipe(int(8192, 256), max(1_000_000)),
  MAX_HEADER_BYTES: v.pipe(int(16_384, 1024), max(1_000_000)),
  /** Open WebSockets per credential and per client address (0 = no limit); above them 429 (docs/limits.md). */
  WS_MAX_PER_TOKEN: int(20),
  WS_MAX_PER_ADDRESS: int(200),
  /** Messages per second one socket may send on average (0 = no limit), and at once; a flood is closed with 4029. */
  WS_MESSAGE_RATE: int(50),
  WS_MESSAGE_BURST: int(1000, 1),
  /** Calls per minute per client address on the public MCP servers (catalog, dev; docs/mcp.md). */
  MCP_PUBLIC_RATE_PER_MINUTE: int(600, 1),
  /** Browser origins (comma-separated, or `*`) allowed to call the MCP servers besides the site's own (docs/mcp.md). */
  MCP_ALLOWED_ORIGINS: v.optional(v.string(), ''),
  /** Reverse proxies whose Forwarded / X-Forwarded-For are believed: addresses, CIDRs, or a hop count (src/net/client-address.ts). */
  TRUST_PROXY: v.optional(v.string(), ''),
  /** Map tiles of the tracking page (docs/tracking-page.md): unset = no map tiles, nothing external is contacted. */
  MAP_TILE_URL: v.optional(v.pipe(v.string(), v.trim(), v.check((s) => s === '' || tileTemplateProblem(s) === null,
    (i) => `must be an http(s) tile URL template with {z}, {x} and {y}: ${tileTemplateProblem(String(i.input).trim()) ?? ''}, got "${String(i.input)}"`))),
  /** The tile provider's required credit, shown on the map as plain text. */
  MAP_TILE_ATTRIBUTION: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(300, 'must be at most 300 characters')), ''),
  /** `/metrics` on the public port (docs/metrics.md): the bearer token Prometheus sends; unset: not served there. */
  METRICS_TOKEN: v.optional(v.pipe(v.string(), v.check((s) => s === '' || /^[\x21-\x7e]{16,256}$/.test(s), 'must be 16 to 256 printable characters without spaces (e.g. `openssl rand -hex 32`)'))),
  /** A separate metrics listener (docs/metrics.md): port and address; no token there. */
  METRICS_PORT: v.optional(v.pipe(int(0, 1), max(65_535))),
  METRICS_HOST: v.optional(v.pipe(v.string(), v.check((s) => /^[\w.:-]+$/.test(s), (i) => `must be an address or host name, got "${String(i.input)}"`))),
  DEMO_SEED: bool(true),
  /** Guest reports in a worker thread (docs/operations.md "Guests and segments"); `0` runs them on the event loop. */
  GUESTS_WORKER: bool(true),
  /** Threads that parse and render themes that are not built in (src/themes/pool.ts, docs/themes.md "Budgets: the theme pool"). */
  THEME_WORKERS: v.pipe(int(1, 1), max(16)),
  /** The mobile-shell app group (api-v1 §4.9, docs/app-shell.md); `0` removes its routes. */
  APP_GROUP: bool(true),
  /** Shutdown (docs/running.md "Stopping"): /readyz answers 503 this long before the listener closes. */
  SHUTDOWN_GRACE_MS: v.pipe(int(0), max(60_000)),
  /** Shutdown: the bound on draining requests, mailboxes and sockets before the process exits anyway. */
  SHUTDOWN_TIMEOUT_MS: v.pipe(int(10_000, 100), max(300_000)),
  BILLING_CRON: v.optional(v.string(), '* * * * *'),
  BILLING_RETRY_DAYS: v.optional(v.string(), '1,3,5'),
  BILLING_GRACE_DAYS: v.pipe(int(7, 1), max(365)),
  BILLING_TRIAL_REMINDER_DAYS: v.pipe(int(3), max(365)),
  BILLING_EXPIRING_DAYS: v.pipe(int(7), max(365)),
  BILLING_CLOCK: v.optional(v.string()),
  /** Retention (docs/running.md "Backups and retention"): node-cron expression of the prune, or `off`. */
  PRUNE_CRON: v.optional(v.string(), '23 * * * *'),
  /** Test-only clock of the prune, like BILLING_CLOCK (ISO time or `+30d`); NODE_ENV=test only. */
  PRUNE_CLOCK: v.optional(v.string()),
  RETENTION_WEBHOOK_ATTEMPTS_DAYS: v.pipe(int(30, 1), max(3650)),
  RETENTION_DRIVER_POSITIONS_DAYS: v.pipe(int(7, 1), max(3650)),
  RETENTION_IDEMPOTENCY_HOURS: v.pipe(int(168, 24), max(87_600)),
  RETENTION_SESSIONS_DAYS: v.pipe(int(30, 1), max(3650)),
  RETENTION_OTP_HOURS: v.pipe(int(24, 1), max(8760)),
  RETENTION_EVENTS_DAYS: v.pipe(int(30, 1), max(3650)),
  NODE_ENV: v.optional(v.string()),
  /** Online payments (docs/providers.md "Payments"): `dev` takes no money; a real provider adds its name here. */
  PAYMENT_PROVIDER: v.optional(v.picklist(['none', 'dev'], 'must be none or dev'), 'none'),
  /** The dev provider's webhook signing secret; unset: random per start (only this process can sign). */
  /** How often online refunds left pending are asked for again (src/maintenance/refund-retry.ts), or `off`. */
  REFUND_RETRY_CRON: v.optional(v.string(), '*/5 * * * *'),
  PAYMENT_WEBHOOK_SECRET: v.optional(v.pipe(v.string(), v.check((s) => /^[\x21-\x7e]{16,256}$/.test(s), 'must be 16 to 256 printable characters without spaces'))),
})

export type Config = Readonly<{
  port: number
  host: string
  dbPath: string
  siteUrl: string
  baseUrl: string
  logLevel: string
  webhookAllowLoopback: boolean
  /** Seconds to wait before attempts 2..n (api-v1 §6: about 1 min, 5 min, 15 min, 1 h). */
  webhookRetrySchedule: readonly number[]
  /** Time limit of one webhook attempt, ms (api-v1 §6 rule 2, §8: 10 s). */
  webhookTimeoutMs: number
  /** Concurrent webhook requests per endpoint. */
  webhookConcurrency: number
  /** Concurrent webhook requests per account, across its endpoints (docs/webhooks.md "Fairness"). */
  webhookAccountConcurrency: number
  /** Concurrent webhook requests of the whole server. */
  webhookGlobalConcurrency: number
  /** Webhook endpoints an account may register. */
  webhookMaxEndpoints: number
  /** Consecutive failed attempts that open an endpoint's circuit. */
  webhookCircuitFailures: number
  /** First wait before an open circuit lets one probe through (doubles per failed probe, up to 16×). */
  webhookCircuitCooldownMs: number
  /** Continuous failure (ms since the first failure after the last success) that disables an endpoint. */
  webhookDisableAfterMs: number
  groupCommit: boolean
  rateLimitPerMinute: number
  bodyLimitBytes: number
  /** Largest menu item photo, in bytes as uploaded (before it is resized). */
  photoMaxBytes: number
  /** Limits under abuse (docs/limits.md): body deadline, request head sizes, sockets per credential/address, messages per socket. */
  bodyTimeoutMs: number
  maxUrlBytes: number
  maxHeaderBytes: number
  wsMaxPerToken: number
  wsMaxPerAddress: number
  wsMessageRate: number
  wsMessageBurst: number
  /** Public MCP servers: calls per minute per address (authenticated ones share the token's API budget). */
  mcpPublicRatePerMinute: number
  /** Origins allowed on the MCP addresses besides the site's own (`*` = any); requests without `Origin` always pass. */
  mcpAllowedOrigins: readonly string[]
  /** Whose forwarding headers name the client (rate limits, logs, sessions, sockets); off by default. */
  trustProxy: TrustProxy
  /** Tracking page tiles: a Leaflet URL template, or null for the offline drawing (docs/tracking-page.md). */
  mapTileUrl: string | null
  mapTileAttribution: string
  /** `/metrics` bearer token on the public port; null: /metrics is not served there (docs/metrics.md). */
  metricsToken: string | null
  /** The separate metrics listener, or null: serves only GET /metrics, without a token (docs/metrics.md). */
  metricsListen: Readonly<{ host: string; port: number }> | null
  demoSeed: boolean
  /** Guest reads in their worker thread (src/storage/guests-reader.ts); false: inline. */
  guestsWorker: boolean
  themeWorkers: number
  /** Cluster mode on NATS JetStream (docs/cluster.md); null: the single process (the default). */
  cluster: ClusterConfig | null
  /** Serve the app group (api-v1 §4.9); off: its routes answer 404 and leave discovery and OpenAPI. */
  appGroup: boolean
  /** node-cron expression of the billing run (docs/billing.md "The billing run"); `off` disables the schedule. */
  billingCron: string
  /** Billing timing in days (src/domain/subscription.ts BillingPolicy). */
  billingRetryDays: readonly number[]
  billingGraceDays: number
  billingTrialReminderDays: number
  billingExpiringDays: number
  /** Test-only clock of the billing run and subscription actions: ISO time or offset (`+30d`); src/billing/clock.ts. */
  billingClock: string | null
  /** Readiness answers 503 this long before the listener closes, so a load balancer stops sending first. */
  shutdownGraceMs: number
  /** Upper bound of the drain on SIGTERM/SIGINT (docs/running.md "Stopping"). */
  shutdownTimeoutMs: number
  /** Retention: node-cron expression of the prune (`off`: never), its test clock, and the periods (src/maintenance/prune.ts). */
  pruneCron: string
  pruneClock: string | null
  retention: Readonly<Retention>
  /** SMS, email and push providers (SMS_PROVIDER, EMAIL_PROVIDER, PUSH_PROVIDER, …; src/providers/config.ts, docs/providers.md). */
  providers: ProvidersConfig
  /** The online payment provider (PAYMENT_PROVIDER; src/providers/payments.ts) and the dev provider's webhook secret. */
  paymentProvider: 'none' | 'dev'
  paymentWebhookSecret: string
  /** node-cron expression of the retry of pending online refunds, or `off` (src/maintenance/refund-retry.ts). */
  refundRetryCron: string
}>

export const DEFAULT_RETRY_SCHEDULE = [60, 300, 900, 3600] as const

function parseSchedule(raw: string | undefined): number[] {
  if (!raw) return [...DEFAULT_RETRY_SCHEDULE]
  const texts = raw.split(',').map((s) => s.trim())
  const parts = texts.map(Number)
  // At most 4 waits: api-v1 §6 allows 5 attempts in total; a shorter list repeats its last wait.
  if (parts.length > 4 || texts.some((t) => t === '') || parts.some((n) => !Number.isFinite(n) || n < 0 || n > 86_400)) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE must be 1 to 4 comma-separated seconds (0..86400) between attempts, got "${raw}"`)
  }
  return parts
}

/**
 * A schedule's `<NAME>_CRON` (a node-cron expression, or `off`) and its test-only `<NAME>_CLOCK`:
 * time travel is for tests only, a production server must run on the real clock.
 */
function scheduleConfig(name: 'BILLING' | 'PRUNE' | 'REFUND_RETRY', rawCron: string, rawClock: string | undefined, nodeEnv: string | undefined) {
  const cron = rawCron.trim()
  if (cron !== 'off' && !validateCron(cron)) throw new Error(`invalid configuration: ${name}_CRON is not a cron expression: "${cron}"`)
  const clock = rawClock?.trim() || null
  if (clock !== null && nodeEnv !== 'test') throw new Error(`invalid configuration: ${name}_CLOCK is honoured only with NODE_ENV=test`)
  if (clock !== null && !isClockSpec(clock)) throw new Error(`invalid configuration: ${name}_CLOCK must be an ISO time or an offset like +30d, -2h, got "${clock}"`)
  return { cron, clock }
}

/** PRUNE_* and RETENTION_* (docs/running.md "Backups and retention"). */
function pruneConfig(e: v.InferOutput<typeof EnvSchema>) {
  const { cron, clock } = scheduleConfig('PRUNE', e.PRUNE_CRON, e.PRUNE_CLOCK, e.NODE_ENV)
  const day = 86_400_000
  return {
    pruneCron: cron, pruneClock: clock,
    retention: Object.freeze({
      webhookAttemptsMs: e.RETENTION_WEBHOOK_ATTEMPTS_DAYS * day,
      driverPositionsMs: e.RETENTION_DRIVER_POSITIONS_DAYS * day,
      idempotencyMs: e.RETENTION_IDEMPOTENCY_HOURS * 3600_000,
      sessionsMs: e.RETENTION_SESSIONS_DAYS * day,
      otpMs: e.RETENTION_OTP_HOURS * 3600_000,
      eventsMs: e.RETENTION_EVENTS_DAYS * day,
    }),
  }
}

/** The BILLING_* variables, checked (docs/billing.md "The billing run"). */
function billingConfig(e: v.InferOutput<typeof EnvSchema>) {
  const retry = e.BILLING_RETRY_DAYS.split(',').map((x) => x.trim()).filter(Boolean).map(Number)
  if (retry.some((n) => !Number.isInteger(n) || n < 1 || n > 365) || retry.some((n, i) => i > 0 && n <= retry[i - 1]!)) {
    throw new Error(`invalid configuration: BILLING_RETRY_DAYS must be increasing whole days (1..365), comma-separated, got "${e.BILLING_RETRY_DAYS}"`)
  }
  const { cron, clock } = scheduleConfig('BILLING', e.BILLING_CRON, e.BILLING_CLOCK, e.NODE_ENV)
  return {
    billingCron: cron, billingRetryDays: retry, billingGraceDays: e.BILLING_GRACE_DAYS,
    billingTrialReminderDays: e.BILLING_TRIAL_REMINDER_DAYS, billingExpiringDays: e.BILLING_EXPIRING_DAYS, billingClock: clock,
  }
}

/** METRICS_* (docs/metrics.md "Protection"): a token for the public port, a separate listener, or both. */
function metricsConfig(e: v.InferOutput<typeof EnvSchema>, port: number) {
  if (e.METRICS_HOST !== undefined && e.METRICS_PORT === undefined) throw new Error('invalid configuration: METRICS_HOST needs METRICS_PORT (the separate metrics listener)')
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT === port) throw new Error(`invalid configuration: METRICS_PORT must differ from PORT (${port}); unset it to serve /metrics on PORT with METRICS_TOKEN`)
  return {
    metricsToken: e.METRICS_TOKEN || null,
    metricsListen: e.METRICS_PORT === undefined ? null : Object.freeze({ host: e.METRICS_HOST ?? '127.0.0.1', port: e.METRICS_PORT }),
  }
}

/** Parse `env` (defaults to process.env); `overrides` win, which is how tests configure a server. */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const parsed = v.safeParse(EnvSchema, env)
  if (!parsed.success) {
    const msg = parsed.issues.map((i) => `${v.getDotPath(i)}: ${i.message}`).join('; ')
    throw new Error(`invalid configuration: ${msg}`)
  }
  const e = parsed.output
  const port = overrides.port ?? e.PORT
  const siteUrl = (overrides.siteUrl ?? e.SITE_URL ?? `http://localhost:${port}`).replace(/\/+$/, '')
  return Object.freeze({
    port,
    host: e.HOST,
    dbPath: e.DB_PATH,
    logLevel: e.LOG_LEVEL,
    webhookAllowLoopback: e.WEBHOOK_ALLOW_LOOPBACK,
    webhookRetrySchedule: parseSchedule(e.WEBHOOK_RETRY_SCHEDULE),
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookConcurrency: e.WEBHOOK_CONCURRENCY,
    webhookAccountConcurrency: e.WEBHOOK_ACCOUNT_CONCURRENCY,
    webhookGlobalConcurrency: e.WEBHOOK_GLOBAL_CONCURRENCY,
    webhookMaxEndpoints: e.WEBHOOK_MAX_ENDPOINTS,
    webhookCircuitFailures: e.WEBHOOK_CIRCUIT_FAILURES,
    webhookCircuitCooldownMs: e.WEBHOOK_CIRCUIT_COOLDOWN_MS,
    webhookDisableAfterMs: e.WEBHOOK_DISABLE_AFTER_MS,
    groupCommit: e.GROUP_COMMIT,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    photoMaxBytes: e.PHOTO_MAX_BYTES,
    bodyTimeoutMs: e.BODY_TIMEOUT_MS,
    maxUrlBytes: e.MAX_URL_BYTES,
    maxHeaderBytes: e.MAX_HEADER_BYTES,
    wsMaxPerToken: e.WS_MAX_PER_TOKEN,
    wsMaxPerAddress: e.WS_MAX_PER_ADDRESS,
    wsMessageRate: e.WS_MESSAGE_RATE,
    wsMessageBurst: e.WS_MESSAGE_BURST,
    mcpPublicRatePerMinute: e.MCP_PUBLIC_RATE_PER_MINUTE,
    mcpAllowedOrigins: e.MCP_ALLOWED_ORIGINS.split(',').map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean),
    mapTileUrl: e.MAP_TILE_URL || null,
    mapTileAttribution: e.MAP_TILE_ATTRIBUTION,
    ...metricsConfig(e, port),
    demoSeed: e.DEMO_SEED,
    guestsWorker: e.GUESTS_WORKER,
    themeWorkers: e.THEME_WORKERS,
    cluster: clusterConfig(env, { dbPath: overrides.dbPath ?? e.DB_PATH, groupCommit: overrides.groupCommit ?? e.GROUP_COMMIT, host: e.HOST, port }),
    appGroup: e.APP_GROUP,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    ...billingConfig(e),
    ...pruneConfig(e),
    providers: providersConfig(env),
    paymentProvider: e.PAYMENT_PROVIDER,
    paymentWebhookSecret: e.PAYMENT_WEBHOOK_SECRET ?? randomBytes(32).toString('hex'),
    refundRetryCron: scheduleConfig('REFUND_RETRY', e.REFUND_RETRY_CRON, undefined, e.NODE_ENV).cron,
    ...overrides,
    siteUrl,
    baseUrl: `${siteUrl}/api/v1`,
  })
}
