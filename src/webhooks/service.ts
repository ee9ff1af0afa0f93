/**
 * The webhook feature, assembled: endpoint actors in a registry, their retry timers, the accounts'
 * attempt budget, the fan-out from the outbox, the delivery client, and the operations the HTTP
 * routes call (create with SSRF checks and the per-account cap; delete, ping, pause/resume and
 * re-queue as messages to the endpoint's actor). `start()` resumes every pending delivery after a
 * restart; `close()` stops new attempts, lets those in flight finish (briefly) and records them.
 */
import type { Config } from '../config.ts'
import type { Committer } from '../storage/commit.ts'
import type { Db } from '../storage/db.ts'
import type { Logger } from '../log.ts'
import type { OutboxEvent } from '../storage/outbox.ts'
import { Registry, type ActorSystem } from '../actors/system.ts'
import { endpointHandler, type Completion, type EndpointDeps, type EndpointMsg, type EndpointState, type Policy } from '../actors/webhook-endpoint.ts'
import { ApiError, type FieldErrors } from '../errors.ts'
import { isEventPattern } from '../domain/webhook-events.ts'
import { WebhookStore, type DeliveryRow, type DeliveryStatus, type EndpointRow } from '../storage/webhooks.ts'
import { requireQuota } from '../storage/entitlements.ts'
import { WebhookClient } from './client.ts'
import { Fanout } from './fanout.ts'
import { AttemptLog } from './attempt-log.ts'
import { DeliveryBudget } from './budget.ts'
import { newSecret } from './signing.ts'
import { checkUrl, resolvesPublic, systemResolver, type Resolver } from './ssrf.ts'

/** Endpoint actors idle this long are passivated; their retry timers re-activate them. */
const IDLE_MS = 5 * 60_000
/** Deliveries an endpoint actor keeps in memory: due now, and (separately) retries waiting. */
const WINDOW = 1000
/** How long shutdown waits for attempts in flight. */
const DRAIN_MS = 3000

export const PING_MESSAGE = 'Test event from the dispatch server.'

export interface WebhookDeps {
  config: Config
  db: Db
  committer: Committer
  log: Logger
  system: ActorSystem
  resolver?: Resolver
  /** Attempt outcomes and circuit changes for /metrics (src/metrics/registry.ts). */
  metrics?: NonNullable<EndpointDeps['metrics']> & { attempt(status: DeliveryStatus): void }
}

export type Webhooks = ReturnType<typeof createWebhooks>

export function createWebhooks(d: WebhookDeps) {
  const { config, committer, log } = d
  const store = new WebhookStore(d.db)
  const client = new WebhookClient({ timeoutMs: config.webhookTimeoutMs, allowLoopback: config.webhookAllowLoopback, connections: config.webhookConcurrency })
  const policy: Policy = {
    maxInFlight: config.webhookConcurrency, window: WINDOW, schedule: config.webhookRetrySchedule,
    circuit: { failures: config.webhookCircuitFailures, cooldownMs: config.webhookCircuitCooldownMs, disableAfterMs: config.webhookDisableAfterMs },
  }
  let phase: 'open' | 'draining' | 'closed' = 'open'
  const inFlight = new Set<Promise<unknown>>()
  /** Results not yet taken by their actor, per endpoint: each list travels in one `sent` message. */
  const completions = new Map<number, Completion[]>()
  const timers = new Map<number, { at: number; timer: NodeJS.Timeout }>()

  /** Never throws: it is called from timers and promise callbacks. */
  const tell = (id: number, msg: EndpointMsg): void => {
    if (phase === 'closed') return
    try {
      registry.tell(id, msg)
    } catch (err) {
      log.error({ err, endpoint: id, msg: msg.type }, 'webhook endpoint actor unreachable')
    }
  }

  const attempts = new AttemptLog(store, committer, log, (status) => d.metrics?.attempt(status))
  // A permit handed to a waiting endpoint wakes it (docs/webhooks.md "Fairness").
  const budget = new DeliveryBudget(config.webhookAccountConcurrency, config.webhookGlobalConcurrency, (id) => tell(id, { type: 'wake' }))
  const deps: EndpointDeps = {
    store, committer, client, log, policy, attempts, metrics: d.metrics,
    budget: {
      available: (id, owner) => budget.available(id, owner),
      take: (id, owner, n) => budget.take(id, owner, n),
      wait: (id, owner) => budget.wait(id, owner),
      forget: (id) => budget.forget(id),
      release(owner, holdMs) {
        if (holdMs <= 0 || phase !== 'open') return budget.release(owner)
        setTimeout(() => budget.release(owner), holdMs).unref()
      },
    },
    dropPool(id) {
      client.close(id).catch((err: unknown) => log.error({ err, endpoint: id }, 'webhook connection pool not closed'))
    },
    arm(id, at) {
      const cur = timers.get(id)
      if (cur && cur.at === at && phase === 'open') return
      if (cur) {
        clearTimeout(cur.timer)
        timers.delete(id)
      }
      if (at === null || phase !== 'open') return
      const timer = setTimeout(() => { timers.delete(id); tell(id, { type: 'wake' }) }, Math.min(Math.max(0, at - Date.now()), 2 ** 31 - 1))
      timer.unref()
      timers.set(id, { at, timer })
    },
    tell,
    track(p) {
      const settled: Promise<unknown> = p.catch((err: unknown) => log.error({ err }, 'webhook attempt failed unexpectedly')).finally(() => inFlight.delete(settled))
      inFlight.add(settled)
    },
    closing: () => phase === 'closed',
    draining: () => phase !== 'open',
    completed(id, c) {
      if (phase === 'closed') return
      const list = completions.get(id)
      if (list) return void list.push(c)
      const fresh = [c]
      completions.set(id, fresh)
      tell(id, { type: 'sent', results: fresh })
    },
    resultsTaken(id, results) {
      if (completions.get(id) === results) completions.delete(id)
    },
  }
  const registry = new Registry<number, EndpointState | null, EndpointMsg>(d.system, 'webhook', () => null, (id) => endpointHandler(deps, id), log, IDLE_MS)
  const fanout = new Fanout(store, committer, (id, deliveries) => tell(id, { type: 'enqueue', deliveries }))

  /** 422 with `errors` unless `url` and `events` are acceptable (api-v1 §6 registration rules). */
  async function validate(url: string, events: string[]): Promise<{ href: string; events: string[] }> {
    const errors: FieldErrors = {}
    const unique = [...new Set(events)]
    const bad = unique.filter((e) => !isEventPattern(e))
    if (bad.length) errors.events = bad.map((e) => `Unknown event "${e}": use an event name from the catalog, "*", or a family wildcard such as "order.*".`)
    const u = checkUrl(url, config.webhookAllowLoopback)
    if (!u.ok) errors.url = [u.reason]
    else {
      const r = await resolvesPublic(u.url!.hostname, config.webhookAllowLoopback, d.resolver ?? systemResolver)
      if (!r.ok) errors.url = [r.reason]
    }
    if (Object.keys(errors).length) throw new ApiError('validation_failed', undefined, errors)
    return { href: u.url!.href, events: unique }
  }

  return {
    store,
    registry,
    client,
    budget,
    /** Attempts sent and not yet settled (read on scrape by /metrics). */
    inFlight: () => inFlight.size,

    /**
     * Register an endpoint; the secret is returned here and never again. At most
     * WEBHOOK_MAX_ENDPOINTS per account, counted in the inserting transaction so concurrent
     * creates cannot pass it together.
     */
    async create(ownerId: number, url: string, events: string[]): Promise<{ row: EndpointRow; secret: string }> {
      const max = config.webhookMaxEndpoints
      const full = () => new ApiError('quota_exceeded', `This account has the most webhook endpoints it may have (${max}); delete one before adding another.`)
      if (store.endpointCount(ownerId) >= max) throw full()
      // The plan's webhook_endpoints quota (docs/billing.md), checked early (no URL resolution for a
      // refused call) and again in the inserting transaction. The webhooks feature is the operation's
      // (src/ops/apps/webhooks.ts `feature`), decided by its wrapper before this runs.
      requireQuota(d.db, ownerId, 'webhook_endpoints')
      const ok = await validate(url, events)
      const secret = newSecret()
      const id = await committer.write(() => {
        if (store.endpointCount(ownerId) >= max) throw full()
        requireQuota(d.db, ownerId, 'webhook_endpoints')
        return store.insertEndpoint(ownerId, ok.href, ok.events, secret)
      })
      return { row: store.endpoint(id)!, secret }
    },

    // The owner's changes go through the endpoint's actor, in order with everything else it does
    // (ARCHITECTURE 3): a change queued behind a delete answers 404, never a half-done 500.

    /** Delete an endpoint with its deliveries; its timer, permits and connections go too. */
    async remove(ownerId: number, endpointId: number): Promise<void> {
      await registry.ask<null>(endpointId, (replyTo) => ({ type: 'delete', ownerId, replyTo }))
    },

    /** The dashboard's test action: a `ping` to this endpoint only. */
    ping(ownerId: number, endpointId: number): Promise<DeliveryRow> {
      const data = JSON.stringify({ endpoint_id: endpointId, message: PING_MESSAGE })
      return registry.ask<DeliveryRow>(endpointId, (replyTo) => ({ type: 'ping', ownerId, data, replyTo }))
    },

    /** Pause (deliveries queue up, nothing is sent; the secret is kept) or resume (which also re-enables). */
    setPaused(ownerId: number, endpointId: number, paused: boolean): Promise<EndpointRow> {
      return registry.ask<EndpointRow>(endpointId, (replyTo) => ({ type: 'set_paused', ownerId, paused, replyTo }))
    },

    /** Send a logged delivery again as a new delivery: same event and data, a fresh `webhook-id`. */
    requeue(ownerId: number, endpointId: number, deliveryId: number): Promise<DeliveryRow> {
      return registry.ask<DeliveryRow>(endpointId, (replyTo) => ({ type: 'requeue', ownerId, deliveryId, replyTo }))
    },

    /**
     * The reaction to committed events (wired in src/app.ts with the others). The fan-out runs
     * inside each transaction that writes events; this is its safety net for rows it left behind.
     */
    react(e: OutboxEvent): void {
      if (phase === 'open') fanout.kickIfBehind(e.id)
    },

    /** Catch up on the outbox and wake every endpoint with pending work. */
    start(): void {
      fanout.kick()
      for (const id of store.pendingEndpointIds()) tell(id, { type: 'wake' })
    },

    async close(): Promise<void> {
      if (phase !== 'open') return
      phase = 'draining'
      fanout.close()
      for (const t of timers.values()) clearTimeout(t.timer)
      timers.clear()
      // Attempts in flight may finish (and be recorded) for a little while; the rest stay pending.
      const deadline = Date.now() + Math.min(DRAIN_MS, config.webhookTimeoutMs)
      while ((inFlight.size > 0 || completions.size > 0) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 5))
      }
      phase = 'closed'
      // Into the committer's queue, which the app flushes before closing the database.
      attempts.flush()
      registry.close()
      await client.closeAll()
    },
  }
}
