/** Everything a front door needs, built once per server (app.ts) and handed to routes. */
import type { AppRow } from './storage/apps.ts'
import type { Config } from './config.ts'
import type { Db } from './storage/db.ts'
import type { Committer } from './storage/commit.ts'
import type { Logger } from './log.ts'
import type { EventRouter } from './actors/event-router.ts'
import type { StoreQueries } from './storage/stores.ts'
import type { OrderQueries } from './storage/orders.ts'
import type { Registry } from './actors/system.ts'
import type { StoreMsg, StoreState } from './actors/store.ts'
import type { OrderMsg, OrderState } from './actors/order.ts'
import type { AuthFamily, Authenticator } from './auth/principals.ts'
import type { Hub } from './ws/hub.ts'
import type { SmsProvider } from './providers/sms.ts'
import type { PushProvider } from './providers/push.ts'
import type { Router } from './providers/router.ts'
import type { Geocoder } from './providers/geocoder.ts'
import type { DispatchSink } from './actors/dispatcher.ts'
import type { EmailProvider } from './providers/email.ts'
import type { PaymentProvider } from './providers/payments.ts'
import type { KdsSink } from './domain/kds.ts'
import type { DriverQueries } from './storage/drivers.ts'
import type { DriverMsg, DriverState } from './actors/driver.ts'
import type { RealtimeSink } from './actors/realtime.ts'
import type { Webhooks } from './webhooks/service.ts'
import type { EndpointRow } from './storage/webhooks.ts'
import type { ResellerQueries } from './storage/reseller.ts'
import type { Metrics } from './metrics/registry.ts'
import type { GuestReader } from './storage/guests-reader.ts'
import type { RequestCounter } from './net/respond.ts'
import type { ThemePool } from './themes/pool.ts'
import type { ClusterStatus } from './cluster/node.ts'

export interface Services {
  config: Config
  db: Db
  committer: Committer
  log: Logger
  events: EventRouter
  stores: StoreQueries
  orders: OrderQueries
  drivers: DriverQueries
  /** Owners' webhook endpoints, for tenancy (src/auth/policy.ts); everything else goes through `webhooks`. */
  endpoints: { ownedBy(id: number, ownerId: number): EndpointRow | undefined }
  /** Real-time pub/sub (uWS topics). */
  hub: Hub
  /** What actors tell live sockets (tracking, driver, dispatch); src/ws/realtime.ts. */
  realtime: RealtimeSink
  /** Kitchen screens: bumps and recalls once durable (src/ws/kds.ts). */
  kds: KdsSink
  /** Outside services, development providers by default (they record what would be sent). */
  sms: SmsProvider
  push: PushProvider
  /** The dispatcher's ears (src/actors/dispatcher.ts): positions and shifts for its index, offers answered. */
  dispatch: DispatchSink
  /** Travel times for quotes, estimates and dispatch (ROUTER; src/providers/router.ts, docs/dispatch.md "Router"). */
  router: Router
  /** Address search for saved addresses (GEOCODER; src/providers/geocoder.ts, docs/providers.md "Geocoder"). */
  geocoder: Geocoder
  /** Owner email verification (docs/dashboard.md "Signing in"). */
  email: EmailProvider
  /** Online payments (PAYMENT_PROVIDER; src/providers/payments.ts, docs/providers.md "Payments"). */
  payments: PaymentProvider
  /** Webhook endpoints, their actors and deliveries (src/webhooks/service.ts, docs/webhooks.md). */
  webhooks: Webhooks
  /** Authenticators by family, shared by every front door. */
  auth: { [A in AuthFamily]: Authenticator<A> }
  /** Account state the policy reads: a suspended account's stores are unavailable to the public (docs/billing.md). */
  accounts: { suspended(ownerId: number): boolean }
  /** The MCP servers on this port (api-v1 §4.11), for the discovery index; filled in by app.ts. */
  mcpServers: ReadonlyArray<{ path: string; name: string; title: string; auth: string; tools: number }>
  /** The reseller role and the accounts each reseller manages, for the policy (src/storage/reseller.ts). */
  resellers: ResellerQueries
  /** Developers' apps, for tenancy (src/auth/policy.ts; docs/apps.md). */
  apps: { ownedBy(id: number, developerId: number): AppRow | undefined }
  /** Readiness for `GET /readyz` (src/http/routes/readyz.ts, docs/running.md); wired by app.ts. */
  /** `requests`: the HTTP door counts its requests here for the shutdown drain (src/net/drain.ts). */
  lifecycle: { draining(): boolean; database(): { database: boolean; migrations: boolean }; requests: RequestCounter; cluster?: () => ClusterStatus }
  /** This server's Prometheus metrics (src/metrics/registry.ts, docs/metrics.md); no-ops unless served. */
  metrics: Metrics
  /** Guest reports, off the event loop (src/storage/guests-reader.ts; docs/operations.md "Guests and segments"). */
  guests: GuestReader
  /** Threads that parse and render themes that are not built in (src/themes/pool.ts; docs/themes.md "Budgets: the theme pool"). */
  themes: ThemePool
  actors: {
    stores: Registry<number, StoreState | null, StoreMsg>
    orders: Registry<number, OrderState | null, OrderMsg>
    drivers: Registry<number, DriverState | null, DriverMsg>
  }
}
