/**
 * The metrics of one server instance (issue 20 item 3; every name in docs/metrics.md). One
 * prom-client `Registry` per `buildApp`, never the global default one: tests run many servers in
 * one process, and each must count only its own work.
 *
 * What the hot paths pay: HTTP requests a few additions (./http.ts), sockets one increment at open
 * and close (./sockets.ts), the group committer one histogram observation per batch (not per
 * write) and one per fsync, webhooks one counter increment per attempt. Everything else — actors
 * live and mailbox depth, open sockets, the webhook queue — is read by `collect()` callbacks only
 * when Prometheus scrapes.
 *
 * Metrics are built only when something can read them (METRICS_TOKEN or METRICS_PORT set, see
 * src/http/routes/metrics.ts and ./listener.ts): otherwise `createMetrics` returns recorders that
 * do nothing, and no event-loop monitor or GC observer runs for nothing — and prom-client is not
 * even loaded (about 45 ms of every start and test process; it is CommonJS, so a server that does
 * serve metrics loads it synchronously here).
 */
import { createRequire } from 'node:module'
import type { Metric, Registry } from 'prom-client'
import { HttpTimings, requestCounter, requestHistogram } from './http.ts'
import type { SocketCounts } from './sockets.ts'

/** What the group committer reports (src/storage/commit.ts `GroupCommitOptions.observe`). */
export interface CommitObserver {
  /** One committed transaction: how many writes it held and how long it took on the event loop. */
  batch(writes: number, seconds: number): void
  /** One fdatasync of the WAL on the thread pool (group commit only). */
  fsync(seconds: number): void
}

/** What the webhook endpoint actors report (src/actors/webhook-endpoint.ts `EndpointDeps.metrics`). */
export interface WebhookObserver {
  /** One attempt's outcome: `succeeded` (2xx), `pending` (failed, retry scheduled), `failed` (no attempt left). */
  attempt(status: 'succeeded' | 'pending' | 'failed'): void
  /** An endpoint's circuit opened or closed, or the endpoint was disabled (docs/webhooks.md). */
  circuit(change: 'opened' | 'closed' | 'disabled'): void
}

/** What `/metrics` reads on scrape; wired by src/app.ts once the services exist. */
export interface ScrapeSources {
  /** Actor registries by kind (`store`, `order`, `driver`, `webhook`). */
  actors: Record<string, { readonly size: number; mailboxes(): { queued: number; deepest: number } }>
  sockets: SocketCounts
  webhooks: { queue(): { due: number; scheduled: number }; inFlight(): number }
}

export interface Metrics {
  /** False when nothing serves `/metrics` (no METRICS_TOKEN, no METRICS_PORT): every recorder is a no-op. */
  readonly enabled: boolean
  /** Null when not enabled. */
  readonly registry: Registry | null
  readonly http: HttpTimings
  readonly commit: CommitObserver
  readonly webhooks: WebhookObserver
  /** Register the scrape-time gauges (called once by app.ts). */
  watch(sources: ScrapeSources): void
  /** The Prometheus text exposition of everything above. */
  text(): Promise<string>
  readonly contentType: string
}

/** Batch sizes: one write (an idle server) up to the committer's cap of 512. */
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
/** Seconds: fdatasync on a fast SSD is ~0.1–2 ms, on a cloud volume several ms, on a failing disk much more. */
const DISK_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]

/** prom-client defaults whose names break Prometheus's naming rules: gauges ending in `_total`. */
const UNLINTED_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']

/** The Prometheus text format's content type (what prom-client's Registry says), for the no-op metrics. */
const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

export function createMetrics(enabled: boolean): Metrics {
  const http = new HttpTimings()
  if (!enabled) {
    return {
      enabled, registry: null, http,
      commit: { batch() {}, fsync() {} },
      webhooks: { attempt() {}, circuit() {} },
      watch() {},
      text: () => Promise.resolve(''),
      contentType: TEXT_CONTENT_TYPE,
    }
  }
  const { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } = createRequire(import.meta.url)('prom-client') as typeof import('prom-client')
  const registry = new Registry()
  // Process defaults: CPU, RSS, heap, GC, handles, and the event-loop delay (nodejs_eventloop_lag_*,
  // from perf_hooks.monitorEventLoopDelay).
  collectDefaultMetrics({ register: registry })
  // prom-client also names three gauges `…_total`, each the sum of the by-type gauge beside it;
  // Prometheus keeps that suffix for counters (`promtool check metrics` flags them), so they are
  // dropped: `sum(nodejs_active_handles)` is the same number (docs/metrics.md).
  for (const name of UNLINTED_DEFAULTS) registry.removeSingleMetric(name)
  registry.registerMetric(requestCounter(http) as unknown as Metric)
  registry.registerMetric(requestHistogram(http) as unknown as Metric)
  const registers = [registry]

  const batchSize = new Histogram({ name: 'dispatch_commit_batch_size', help: 'Writes per committed SQLite transaction (group commit: one per event-loop turn or more).', buckets: BATCH_BUCKETS, registers })
  const batchSeconds = new Histogram({ name: 'dispatch_commit_duration_seconds', help: 'Time a committed transaction held the event loop, BEGIN to COMMIT (at GROUP_COMMIT=0 it includes SQLite\'s own fsync).', buckets: DISK_BUCKETS, registers })
  const fsyncSeconds = new Histogram({ name: 'dispatch_commit_fsync_seconds', help: 'Duration of one fdatasync of the WAL on the thread pool (group commit); replies wait for it.', buckets: DISK_BUCKETS, registers })
  const attempts = new Counter({ name: 'dispatch_webhook_attempts_total', help: 'Webhook delivery attempts by outcome: delivered (2xx), retried (failed, another attempt scheduled), failed (failed, no attempt left).', labelNames: ['outcome'] as const, registers })
  const circuits = new Counter({ name: 'dispatch_webhook_circuit_changes_total', help: 'Webhook endpoint circuit changes: opened, closed, disabled (docs/webhooks.md).', labelNames: ['change'] as const, registers })
  // Pre-resolved children: the label set is fixed, so the increment does no label lookup.
  const outcome = { succeeded: attempts.labels('delivered'), pending: attempts.labels('retried'), failed: attempts.labels('failed') }
  const change = { opened: circuits.labels('opened'), closed: circuits.labels('closed'), disabled: circuits.labels('disabled') }
  for (const c of Object.values(outcome)) c.inc(0)
  for (const c of Object.values(change)) c.inc(0)

  return {
    enabled, registry, http,
    commit: {
      batch(writes, seconds) { batchSize.observe(writes); batchSeconds.observe(seconds) },
      fsync(seconds) { fsyncSeconds.observe(seconds) },
    },
    webhooks: {
      attempt(status) { outcome[status].inc() },
      circuit(c) { change[c].inc() },
    },
    watch(src) {
      new Gauge({
        name: 'dispatch_actors_live', help: 'Actors alive in memory, by kind (virtual actors: spawned on first message, passivated when idle).', labelNames: ['kind'] as const, registers,
        collect() { for (const [kind, r] of Object.entries(src.actors)) this.set({ kind }, r.size) },
      })
      new Gauge({
        name: 'dispatch_actor_mailbox_depth', help: 'Messages sent to actors and not yet picked up, by kind (sum over the kind\'s actors).', labelNames: ['kind'] as const, registers,
        collect() { for (const [kind, r] of Object.entries(src.actors)) this.set({ kind }, r.mailboxes().queued) },
      })
      new Gauge({
        name: 'dispatch_actor_mailbox_max', help: 'The deepest single mailbox, by kind: one hot store or order shows here before it shows in the sum.', labelNames: ['kind'] as const, registers,
        collect() { for (const [kind, r] of Object.entries(src.actors)) this.set({ kind }, r.mailboxes().deepest) },
      })
      new Gauge({
        name: 'dispatch_ws_open_sockets', help: 'Open WebSockets by kind (driver, track, dispatch, orders, kds).', labelNames: ['kind'] as const, registers,
        collect() { for (const [kind, c] of src.sockets) this.set({ kind }, c.open) },
      })
      new Gauge({
        name: 'dispatch_webhook_queue_depth', help: 'Pending webhook deliveries: due (due now, being sent or waiting for a permit) and scheduled (waiting for a retry time).', labelNames: ['state'] as const, registers,
        collect() { const q = src.webhooks.queue(); this.set({ state: 'due' }, q.due); this.set({ state: 'scheduled' }, q.scheduled) },
      })
      new Gauge({
        name: 'dispatch_webhook_attempts_in_flight', help: 'Webhook requests sent and not yet answered.', registers,
        collect() { this.set(src.webhooks.inFlight()) },
      })
    },
    text: () => registry.metrics(),
    contentType: registry.contentType,
  }
}
