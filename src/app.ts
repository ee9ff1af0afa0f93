/**
 * buildApp(config): storage → actor system → front doors. Never listens by itself; `listen()`
 * binds (port 0 in tests) and `close()` drains and shuts down in order.
 */
import uWS from 'uWebSockets.js'
import type { Config } from './config.ts'
import { createLogger, type Logger } from './log.ts'
import { openDb, type Db } from './storage/db.ts'
import { syncPlatformPlans } from './storage/plans.ts'
import { isSuspended } from './storage/accounts.ts'
import { createResellerQueries } from './storage/reseller.ts'
import { createCommitter } from './storage/commit.ts'
import { createStoreQueries } from './storage/stores.ts'
import { withStoreCache } from './storage/store-cache.ts'
import { createOrderQueries } from './storage/orders.ts'
import { idempotencyReads } from './actors/store-idempotency.ts'
import { couponReads } from './storage/coupons.ts'
import { EventRouter } from './actors/event-router.ts'
import { MailboxGauge, Registry, startSystem, stopSystem } from './actors/system.ts'
import { storeHandler, type StoreDeps, type StoreMsg, type StoreState } from './actors/store.ts'
import { bookingReads } from './actors/store-fulfillment.ts'
import { orderHandler, type OrderMsg, type OrderState } from './actors/order.ts'
import { mountHttp } from './http/server.ts'
import { developerApp } from './storage/apps.ts'
import { mcpEndpoints } from './mcp/endpoints.ts'
import { touchSession } from './storage/owner-auth.ts'
import { authFamilies } from './auth/families.ts'
import { noKds } from './domain/kds.ts'
import { mountKdsSocket } from './ws/kds.ts'
import { staffPushAlerts } from './reactions/staff-push.ts'
import { Dispatcher, noDispatch } from './actors/dispatcher.ts'
import type { OutboxEvent } from './storage/outbox.ts'
import { allRoutes } from './http/routes/index.ts'
import type { Services } from './services.ts'
import { Hub } from './ws/hub.ts'
import { createProviders } from './providers/factory.ts'
import { createPaymentProvider } from './providers/payments.ts'
import { forgetPushToken } from './storage/push-devices.ts'
import { createDriverQueries } from './storage/drivers.ts'
import { driverHandler, LocationWriter, type DriverMsg, type DriverState } from './actors/driver.ts'
import { Realtime } from './ws/realtime.ts'
import { mountDeliverySockets } from './ws/sockets.ts'
import { createWebhooks } from './webhooks/service.ts'
import { startBillingScheduler, type BillingScheduler } from './billing/scheduler.ts'
import { startPruneScheduler, type PruneScheduler } from './maintenance/prune.ts'
import { startRefundRetry, type RefundRetryScheduler } from './maintenance/refund-retry.ts'
import { track } from './net/drain.ts'
import { databaseReadiness } from './storage/health.ts'
import { webhookQueueDepth } from './storage/metrics.ts'
import { createMetrics } from './metrics/registry.ts'
import { countSockets } from './metrics/sockets.ts'
import { mountMetricsEndpoint } from './metrics/endpoint.ts'
import { metricsListener } from './metrics/listener.ts'
import { createGuestReader } from './storage/guests-reader.ts'
import { createThemePool } from './themes/pool.ts'
import { holdsStock } from './storage/stock.ts'
import type { Replication } from './cluster/replicator.ts'
import type { ClusterStatus } from './cluster/node.ts'
import { pumpStrayChanges } from './cluster/pump.ts'

export interface App {
  svc: Services
  /** Automatic dispatch (docs/dispatch.md): its spatial index and decisions, for tests and the bench. */
  dispatcher: Dispatcher
  /** The billing schedule: `billing.started` settles after the catch-up run at start. */
  billing: BillingScheduler
  /** The retention schedule (docs/running.md "Backups and retention"). */
  prune: PruneScheduler
  refundRetry: RefundRetryScheduler
  /** The real-time hub: in cluster mode the primary's tracking frames also go to NATS (src/cluster/frame-link.ts). */
  realtime: Realtime
  listen(): Promise<number>
  /**
   * Drain and shut down (docs/running.md "Stopping"); resolves false when SHUTDOWN_TIMEOUT_MS
   * ran out first (what was still in flight was cut, what was committed stays committed).
   */
  close(): Promise<boolean>
}

export interface BuildOptions {
  log?: Logger
  db?: Db
  /** Cluster mode, on the primary (docs/cluster.md): every commit goes to the stream before it is answered. */
  replication?: Replication
  /** Cluster mode: this node's role and lag, for `/readyz`. */
  cluster?: () => ClusterStatus
}

export function buildApp(config: Config, opts: BuildOptions = {}): App {
  const log = opts.log ?? createLogger(config.logLevel)
  if (process.versions.modules !== '115') {
    log.warn({ modules: process.versions.modules }, 'uWebSockets.js has native builds for Node 16/18/20 only; this Node may run a slow fallback')
  }
  const db = opts.db ?? openDb(config.dbPath)
  // Platform plans follow src/domain/plans.ts before anything creates an account (docs/billing.md).
  syncPlatformPlans(db)
  const mailboxes = new MailboxGauge()
  // Metrics exist only where something serves them: METRICS_TOKEN or METRICS_PORT (docs/metrics.md).
  const metrics = createMetrics(config.metricsToken !== null || config.metricsListen !== null)
  const committer = createCommitter(db, config.groupCommit, { pending: () => mailboxes.queued, observe: metrics.enabled ? metrics.commit : undefined, ...(opts.replication ? { replication: opts.replication } : {}) })
  const system = startSystem()
  const app = uWS.App()
  // Before anything is mounted: every request and socket is counted for the drain on close().
  const drain = track(app)
  const sockets = countSockets(app)
  if (config.metricsToken) mountMetricsEndpoint(app, metrics, config.metricsToken, log, drain.requests)
  const metricsServer = config.metricsListen ? metricsListener(metrics, config.metricsListen.host, config.metricsListen.port, log) : null
  const realtime = new Realtime(new Hub(app))
  const locations = new LocationWriter(db, opts.replication ?? null)
  locations.onAnswerError = (err) => log.error({ err }, 'answering a stored position failed')
  const events = new EventRouter(log)
  // SMS, email and push as configured (docs/providers.md); a push token the service calls dead is forgotten.
  const providers = createProviders(config.providers, { log, forgetPushToken: (token) => committer.write((w) => forgetPushToken(w, token)) })
  const webhooks = createWebhooks({ config, db, committer, log, system, metrics: metrics.enabled ? metrics.webhooks : undefined })
  const svc: Services = {
    config, db, committer, log,
    events,
    webhooks,
    stores: withStoreCache(db, createStoreQueries(db)),
    orders: createOrderQueries(db, config.siteUrl),
    drivers: createDriverQueries(db),
    endpoints: { ownedBy: (id, ownerId) => webhooks.store.ownedEndpoint(id, ownerId) },
    realtime,
    // One hub for every publisher: in cluster mode it knows which topics replicas watch (src/ws/hub.ts `remote`).
    hub: realtime.hub,
    sms: providers.sms,
    push: providers.push,
    router: providers.router, geocoder: providers.geocoder,
    dispatch: noDispatch,
    email: providers.email,
    payments: createPaymentProvider(config),
    kds: noKds,
    // One authenticator per family (api-v1 §5), shared by the HTTP, WebSocket and MCP front doors
    // (src/auth/families.ts); the web session's last use is written off the request path.
    auth: authFamilies(db, config, (id, at) => { committer.write((w) => touchSession(w, id, at)).catch(() => {}) }),
    accounts: { suspended: (ownerId) => isSuspended(db, ownerId) },
    lifecycle: { draining: () => drain.draining, database: () => databaseReadiness(db), requests: drain.requests, ...(opts.cluster ? { cluster: opts.cluster } : {}) },
    metrics,
    guests: createGuestReader(db, { log, worker: config.guestsWorker }),
    themes: createThemePool({ workers: config.themeWorkers, log }),
    mcpServers: [],
    resellers: createResellerQueries(db),
    apps: { ownedBy: (id, developerId) => developerApp(db, developerId, id) ?? undefined },
    // Handlers close over `svc`; they run only once messages arrive, after it is complete.
    actors: {
      stores: new Registry<number, StoreState | null, StoreMsg>(system, 'store', () => null, (id) => storeHandler(storeDeps, id), log, 10 * 60_000, mailboxes),
      orders: new Registry<number, OrderState | null, OrderMsg>(system, 'order', () => null, (id) => orderHandler(svc, id), log, 60_000, mailboxes),
      drivers: new Registry<number, DriverState | null, DriverMsg>(system, 'driver', () => null, (id) => driverHandler(svc, id, locations), log, 10 * 60_000, mailboxes),
    },
  }
  // What the store actor uses, not the whole bag (ARCHITECTURE 4).
  const storeDeps: StoreDeps = {
    committer, log, events, siteUrl: config.siteUrl, stores: svc.stores, orders: svc.orders,
    idempotency: idempotencyReads(db), coupons: couponReads(db),
    bookings: bookingReads(db), stock: { holds: (orderId) => holdsStock(db, orderId) },
  }

  // Read on scrape only (src/metrics/registry.ts).
  metrics.watch({
    actors: { store: svc.actors.stores, order: svc.actors.orders, driver: svc.actors.drivers, webhook: webhooks.registry },
    sockets,
    webhooks: { queue: () => webhookQueueDepth(db, Date.now()), inFlight: webhooks.inFlight },
  })

  /** Features started below register their shutdown here; they run first-in, last-out on close. */
  const closers: Array<() => void | Promise<void>> = []
  // Cluster mode: rows written outside a replicated transaction (the CLI, start-up upkeep) are
  // captured too; an empty batch sends them to the stream (docs/cluster.md "Change capture").
  if (opts.replication) closers.push(pumpStrayChanges(db, committer))
  // Registered first, so it runs last: pending provider retries give up, connections close.
  closers.push(() => providers.close())

  // WebSocket routes are registered before the catch-all HTTP handler.
  closers.push(mountDeliverySockets(app, svc, realtime).close)
  const kds = mountKdsSocket(app, svc, realtime)
  svc.kds = kds.sink
  // The MCP servers (api-v1 §4.11) are addresses of the same port, served through the HTTP door.
  const mcp = mcpEndpoints(svc)
  svc.mcpServers = mcp.map((e) => ({ path: e.path, name: e.server.def.name, title: e.server.def.title, auth: e.auth, tools: e.server.toolCount }))
  mountHttp(app, svc, allRoutes({ appGroup: config.appGroup }), svc.auth, mcp)

  // One home for reactions to committed events (ARCHITECTURE "The shape" 8), one road each. Changes
  // an actor makes after an order exists reach live views through the sinks on `svc` instead
  // (realtime.orderChanged, kds.itemsChanged and kds.statusChanged), never also through here.
  const reactions: Array<(e: OutboxEvent) => void> = [
    (e) => webhooks.react(e), // safety net of the in-transaction fan-out (docs/webhooks.md)
    realtime.react, // a new order appears on the dispatch feed
    kds.react, // kitchen screens: a new order's ticket
    staffPushAlerts(svc), // push to the devices of members who work orders or the kitchen
  ]
  // Automatic dispatch (docs/dispatch.md): its index is fed by the driver actors through svc.dispatch.
  const dispatcher = new Dispatcher(svc)
  svc.dispatch = dispatcher
  reactions.push(dispatcher.react)
  for (const react of reactions) closers.push(events.subscribe(react))
  dispatcher.start()
  closers.push(() => dispatcher.close())
  // Resume pending webhook deliveries (after a restart) and fan out new events (docs/webhooks.md).
  webhooks.start()
  closers.push(() => webhooks.close())
  // Renewals, retries, expiries and reminders: at start (catch-up), then on node-cron (docs/billing.md).
  const billing = startBillingScheduler({ config, db, log, write: (fn) => committer.write(fn), publish: (e) => events.publish(e) })
  closers.push(() => billing.close())
  const prune = startPruneScheduler({ config, log, write: (fn) => committer.write(fn) })
  closers.push(() => prune.close())
  const refundRetry = startRefundRetry({ svc, config, log })
  closers.push(() => refundRetry.close())
  // After the drain: guest reads still answering were answered; the worker thread ends here.
  closers.push(() => svc.guests.close())
  closers.push(() => svc.themes.close())

  let listenSocket: uWS.us_listen_socket | null = null
  return {
    svc,
    dispatcher,
    billing,
    prune,
    refundRetry,
    realtime,
    listen: () =>
      new Promise<number>((resolve, reject) => {
        // Exclusive: without it uWS sets SO_REUSEPORT and a second server on the same port starts
        // silently and the kernel splits connections between the two (issue 20).
        // (The option and this overload exist at runtime; this build's typings lack them.)
        const exclusive = (uWS as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT: number }).LIBUS_LISTEN_EXCLUSIVE_PORT
        ;(app as unknown as { listen(h: string, p: number, o: number, cb: (s: uWS.us_listen_socket | false) => void): void }).listen(config.host, config.port, exclusive, (sock) => {
          if (!sock) return reject(new Error(`cannot listen on ${config.host}:${config.port}: the port is taken by another process, or the address is not this machine's`))
          listenSocket = sock
          resolve(uWS.us_socket_local_port(sock))
        })
      }).then(async (port) => {
        // The separate metrics listener (METRICS_PORT), bound after the main port; a taken address stops the start.
        if (metricsServer) await metricsServer.listen()
        return port
      }),
    async close() {
      // The order is the contract of docs/running.md "Stopping": not ready → stop accepting →
      // answer what arrived → close sockets with 1001 → empty mailboxes → commit → close.
      const deadline = Date.now() + config.shutdownTimeoutMs
      const left = () => Math.max(0, deadline - Date.now())
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
      drain.startDraining()
      if (listenSocket && config.shutdownGraceMs > 0) await sleep(Math.min(config.shutdownGraceMs, left()))
      if (listenSocket) uWS.us_listen_socket_close(listenSocket)
      listenSocket = null
      await metricsServer?.close()
      const [answered, socketsClosed] = await Promise.all([drain.idle(left()), drain.closeSockets(left())])
      // What is left (idle keep-alive connections; anything past the deadline) is dropped
      // (present at runtime, missing from this build's typings).
      ;(app as unknown as { close(): void }).close()
      // Webhooks stop starting attempts here: unfinished ones stay pending for the next start.
      for (const c of closers.reverse()) await c()
      // Messages already in actor mailboxes are handled before the registries stop them.
      while (mailboxes.queued > 0 && left() > 0) await sleep(5)
      const mailboxesEmpty = mailboxes.queued <= 0
      // Let queued writes commit before the database closes.
      await new Promise((r) => setImmediate(r))
      locations.flush()
      committer.close()
      svc.actors.stores.close()
      svc.actors.orders.close()
      svc.actors.drivers.close()
      stopSystem(system)
      if (!opts.db) db.close()
      const complete = answered && socketsClosed && mailboxesEmpty
      if (!complete) log.warn({ inFlight: drain.inFlight, sockets: drain.sockets, mailboxes: mailboxes.queued }, 'shutdown timeout: the rest was cut')
      return complete
    },
  }
}
