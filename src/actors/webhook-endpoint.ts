/**
 * The webhook-endpoint actor (ARCHITECTURE 1, "Webhooks"): one per endpoint. It owns the endpoint's
 * url, secret, paused flag, circuit breaker and its queue of pending deliveries; it sends with at
 * most `maxInFlight` requests at a time (and no more than its account's budget allows) and
 * schedules its own retries. Retry times live in SQLite (`next_attempt_at`) and are re-armed
 * whenever the actor is activated, so a restart or a passivation loses none. Every change to the
 * endpoint — ping, re-queue, pause, resume, delete — is a message to it, so they never race: after
 * a delete it answers 404 to whatever was queued behind it. `reduceEndpoint` is the transition
 * without I/O; the shell applies its effects (send, record, persist health, arm a timer, refill).
 */
import * as nact from 'nact'
import type { Ref, Result } from './system.ts'
import { fail, ok } from './system.ts'
import { ApiError } from '../errors.ts'
import { nowIso } from '../storage/db.ts'
import { DeliveryQueue, type Pending } from './webhook-queue.ts'
import { verdict } from '../domain/webhook-retry.ts'
import { afterAttempt, attemptsAllowed, closedCircuit, type Circuit, type CircuitPolicy } from '../domain/webhook-circuit.ts'
import type { Outcome, WebhookClient } from '../webhooks/client.ts'
import { signedHeaders, signingKey } from '../webhooks/signing.ts'
import { pendingOf, type AttemptRecord, type DeliveryRow, type DeliveryStatus, type EndpointHealth, type EndpointRow, type WebhookStore } from '../storage/webhooks.ts'
import type { Committer } from '../storage/commit.ts'
import type { Logger } from '../log.ts'

export interface Policy {
  /** Concurrent requests per endpoint. */
  maxInFlight: number
  /** Deliveries due now held in memory (and, separately, retries waiting): the rest wait in SQLite. */
  window: number
  /** Seconds between attempts (WEBHOOK_RETRY_SCHEDULE). */
  schedule: readonly number[]
  /** The circuit breaker's numbers; without them the circuit never opens. */
  circuit?: CircuitPolicy
}

/**
 * Retries due later than this stay in SQLite only and are read back shortly before they are due,
 * so an endpoint that has been failing for an hour holds its near-term work in memory, not its backlog.
 */
export const HORIZON_MS = 30_000

/**
 * A failed attempt keeps its account's permit this much longer. A receiver that refuses at once
 * would otherwise be retried as fast as the CPU allows until the circuits open (a refused attempt
 * costs ~0.3 ms of CPU): with the default 64 permits an account makes at most 160 failed attempts
 * a second (docs/webhooks.md "Fairness"). Successful attempts release at once.
 */
export const FAILED_HOLD_MS = 400

export interface EndpointState {
  id: number
  ownerId: number
  url: URL | null
  secret: string
  key: Buffer
  paused: boolean
  circuit: Circuit
  disabledAt: number | null
  disabledReason: string | null
  /** The delivery in flight as the half-open probe, or null. */
  probe: number | null
  queue: DeliveryQueue
  inFlight: Map<number, Pending>
  /** Ids in the queue or in flight. */
  known: Set<number>
  /** Earliest due time of pending deliveries that are only in SQLite (null: none as far as we know). */
  dbDueAt: number | null
  refilling: boolean
  /** While a refill reads: the earliest due time of deliveries that left memory meanwhile. */
  dbDueDuringRefill: number | null
  /** While a refill reads: deliveries that settled or left memory meanwhile (the read may show them stale). */
  leftDuringRefill: Set<number>
}

export type EndpointMsg =
  /** New deliveries (fan-out, ping, re-queue), already durable. */
  | { type: 'enqueue'; deliveries: Pending[]; replyTo?: undefined }
  /**
   * A refill read from SQLite: pending rows due by the time asked for, earliest first; `complete`
   * when it returned all of them; `nextDue` is when the first row after that time is due.
   */
  | { type: 'loaded'; rows: Pending[]; complete: boolean; nextDue: number | null; replyTo?: undefined }
  /** A retry timer fired. */
  | { type: 'wake'; replyTo?: undefined }
  /**
   * Attempts finished. One message carries every result that arrived before the actor got to it:
   * an actor handles one message per event-loop turn, so one message per result would cap an
   * endpoint at one delivery per turn.
   */
  | { type: 'sent'; results: Completion[]; replyTo?: undefined }
  | EndpointCommand

/**
 * The owner's changes (docs/webhooks.md "Endpoint API"), each answered once it is durable. They name
 * the account that asked: an endpoint of another account (or none: deleted) answers 404.
 */
export type EndpointCommand =
  /** Pause, or resume (which also closes the circuit and re-enables a disabled endpoint); answers the endpoint. */
  | { type: 'set_paused'; ownerId: number; paused: boolean; replyTo: Ref<Result<EndpointRow>> }
  /** Queue a `ping` to this endpoint; answers the delivery. */
  | { type: 'ping'; ownerId: number; data: string; replyTo: Ref<Result<DeliveryRow>> }
  /** Queue a logged delivery again as a new one; answers the new delivery. */
  | { type: 'requeue'; ownerId: number; deliveryId: number; replyTo: Ref<Result<DeliveryRow>> }
  /** Delete the endpoint with its deliveries. */
  | { type: 'delete'; ownerId: number; replyTo: Ref<Result<null>> }

/** What the pure transition handles: the internal messages, and a pause/resume already made durable. */
export type ReduceMsg = Exclude<EndpointMsg, EndpointCommand> | { type: 'set_paused'; paused: boolean }

export interface Completion { deliveryId: number; outcome: Outcome }

export type Effect =
  | { kind: 'send'; delivery: Pending }
  | { kind: 'record'; deliveryId: number; attempt: number; outcome: Outcome; status: DeliveryStatus; nextAttemptAt: number | null }
  | { kind: 'arm'; at: number | null }
  /** Read up to `limit` pending deliveries due by `dueBy`, earliest first, and answer with `loaded`. */
  | { kind: 'refill'; limit: number; dueBy: number }
  /** The circuit changed: persist it (batched) so the API shows it and a restart keeps it. */
  | { kind: 'health'; health: EndpointHealth; change: 'opened' | 'closed' | 'disabled' | null }
  /** Deliveries are due but the account's budget has no permit: wake me when one frees. */
  | { kind: 'starved' }

export function initialState(row: EndpointRow): EndpointState {
  let url: URL | null = null
  try { url = new URL(row.url) } catch { url = null }
  const circuit: Circuit = {
    failures: row.consecutive_failures ?? 0,
    failingSince: row.failing_since ? Date.parse(row.failing_since) : null,
    openUntil: row.circuit_open_until ?? null,
    probesFailed: 0,
    disabled: Boolean(row.disabled_at),
  }
  return {
    id: row.id, ownerId: row.owner_id, url, secret: row.secret, key: signingKey(row.secret), paused: row.paused_at !== null,
    circuit, disabledAt: row.disabled_at ? Date.parse(row.disabled_at) : null, disabledReason: row.disabled_reason ?? null, probe: null,
    queue: new DeliveryQueue(), inFlight: new Map(), known: new Set(), dbDueAt: null, refilling: false, dbDueDuringRefill: null, leftDuringRefill: new Set(),
  }
}

const earliest = (a: number | null, b: number): number => (a === null ? b : Math.min(a, b))

/** A pending delivery stays in SQLite only: remember when it is due. */
function leaveInStorage(s: EndpointState, p: Pending): void {
  s.dbDueAt = earliest(s.dbDueAt, p.dueAt)
  if (s.refilling) {
    s.dbDueDuringRefill = earliest(s.dbDueDuringRefill, p.dueAt)
    s.leftDuringRefill.add(p.id)
  }
}

/** Take a pending delivery into memory if there is room for it: due now within the window, waiting within the horizon. */
function admitOne(s: EndpointState, p: Pending, now: number, window: number): void {
  if (s.known.has(p.id)) return
  // Held by an open circuit (or disabled): nothing is near-term but the next probe, so one delivery
  // waits in memory and the rest in SQLite, read back when the circuit closes. A dead endpoint's
  // backlog then costs no heap (and no garbage collection) however long it grows.
  const held = s.circuit.openUntil !== null || s.circuit.disabled
  const fits = held
    ? s.known.size === 0 && p.dueAt <= now + HORIZON_MS
    : p.dueAt <= now
      ? s.queue.readyCount + s.inFlight.size < window
      : p.dueAt <= now + HORIZON_MS && s.queue.waitingCount < window
  if (!fits) return leaveInStorage(s, p)
  s.known.add(p.id)
  s.queue.push(p, now)
}

/** Rows read from SQLite (activation or refill), earliest due first; see the `loaded` message. */
export function admitLoaded(s: EndpointState, rows: readonly Pending[], complete: boolean, nextDue: number | null, now: number, window: number): void {
  // Rows after the last one read are due no earlier than it.
  s.dbDueAt = complete || rows.length === 0 ? nextDue : rows[rows.length - 1]!.dueAt
  for (const p of rows) admitOne(s, p, now, window)
}

const healthOf = (s: EndpointState): EndpointHealth => ({
  consecutiveFailures: s.circuit.failures, failingSince: s.circuit.failingSince, openUntil: s.circuit.openUntil, disabledAt: s.disabledAt, disabledReason: s.disabledReason,
})

const describeOutcome = (o: Outcome): string => (o.status !== null ? `HTTP ${o.status}` : o.error ?? 'no answer')

function hours(ms: number): string {
  return ms >= 3_600_000 ? `${Math.round(ms / 360_000) / 10} h` : ms >= 60_000 ? `${Math.round(ms / 6_000) / 10} min` : `${Math.round(ms / 100) / 10} s`
}

/** Apply one attempt's outcome to the circuit; returns the change, if any. */
function trackCircuit(s: EndpointState, ok: boolean, probe: boolean, outcome: Outcome, now: number, p: CircuitPolicy): 'opened' | 'closed' | 'disabled' | null {
  const before = s.circuit
  const after = afterAttempt(before, ok, probe, now, p)
  s.circuit = after
  if (after.disabled && !before.disabled) {
    s.disabledAt = now
    s.disabledReason = `Every attempt failed for ${hours(now - after.failingSince!)} (${after.failures} in a row); the last: ${describeOutcome(outcome)}.`
    return 'disabled'
  }
  if (after.openUntil !== null && before.openUntil === null) return 'opened'
  if (after.openUntil === null && before.openUntil !== null) return 'closed'
  return null
}

/**
 * The transition: updates `s` in place (it is the actor's private state) and returns the effects.
 * `allowance` is how many attempts the account's budget lets this endpoint start now.
 */
export function reduceEndpoint(s: EndpointState, msg: ReduceMsg, now: number, rand: () => number, policy: Policy, allowance = Number.POSITIVE_INFINITY): Effect[] {
  const effects: Effect[] = []
  switch (msg.type) {
    case 'enqueue':
      for (const p of msg.deliveries) admitOne(s, p, now, policy.window)
      break
    case 'loaded': {
      s.refilling = false
      const stale = s.leftDuringRefill
      const during = s.dbDueDuringRefill
      s.leftDuringRefill = new Set()
      s.dbDueDuringRefill = null
      admitLoaded(s, stale.size ? msg.rows.filter((p) => !stale.has(p.id)) : msg.rows, msg.complete, msg.nextDue, now, policy.window)
      if (during !== null) s.dbDueAt = earliest(s.dbDueAt, during)
      break
    }
    case 'wake':
      break
    case 'sent': {
      const before = healthOf(s)
      let change: 'opened' | 'closed' | 'disabled' | null = null
      for (const r of msg.results) {
        const p = s.inFlight.get(r.deliveryId)
        // Not ours: started before this activation; the row is still pending and will be sent again.
        if (!p) continue
        s.inFlight.delete(p.id)
        const probe = s.probe === p.id
        if (probe) s.probe = null
        if (policy.circuit) change = trackCircuit(s, r.outcome.ok, probe, r.outcome, now, policy.circuit) ?? change
        const attempt = p.attempts + 1
        p.attempts = attempt
        const v = verdict(r.outcome.ok, attempt, policy.schedule, rand())
        s.known.delete(p.id)
        if (v.status === 'pending') {
          p.dueAt = now + v.retryInMs
          admitOne(s, p, now, policy.window)
        } else if (s.refilling) {
          s.leftDuringRefill.add(p.id)
        }
        effects.push({ kind: 'record', deliveryId: p.id, attempt, outcome: r.outcome, status: v.status, nextAttemptAt: v.status === 'pending' ? p.dueAt : null })
      }
      // Opened (or disabled): what was queued waits in SQLite, all but the next probe.
      if (change === 'opened' || change === 'disabled') {
        for (const p of s.queue.takeReady(change === 'opened' ? 1 : 0)) {
          s.known.delete(p.id)
          leaveInStorage(s, p)
        }
      }
      const after = healthOf(s)
      if (after.consecutiveFailures !== before.consecutiveFailures || after.openUntil !== before.openUntil || after.disabledAt !== before.disabledAt) {
        effects.push({ kind: 'health', health: after, change })
      }
      break
    }
    case 'set_paused':
      s.paused = msg.paused
      // Resuming re-enables: the circuit closes and a disabled endpoint is active again (already durable).
      if (!msg.paused) {
        s.circuit = closedCircuit()
        s.disabledAt = null
        s.disabledReason = null
      }
      break
    default: {
      const never: never = msg
      return never
    }
  }
  if (s.paused || s.circuit.disabled) {
    effects.push({ kind: 'arm', at: null })
    return effects
  }
  // Send what is due, up to the concurrency bound (api-v1 §6: a slow endpoint only slows itself),
  // the account's budget, and what the circuit lets through (nothing while open, then one probe).
  s.queue.promote(now)
  const open = s.circuit.openUntil !== null
  const room = Math.min(policy.maxInFlight - s.inFlight.size, attemptsAllowed(s.circuit, s.probe !== null, now))
  let started = 0
  while (started < room && s.queue.readyCount > 0) {
    if (started >= allowance) {
      effects.push({ kind: 'starved' })
      break
    }
    const p = s.queue.shift()!
    s.inFlight.set(p.id, p)
    if (open) s.probe = p.id
    started++
    effects.push({ kind: 'send', delivery: p })
  }
  // Held by an open circuit: wake up when the probe may go.
  const holdUntil = open && s.probe === null && s.queue.readyCount > 0 && s.circuit.openUntil! > now ? s.circuit.openUntil : null
  // Read more from SQLite when something there is due (or due within the horizon, if retries have
  // room) and the queue has drained to half: reads come in large steps, never one row at a time.
  let refillAt: number | null = null
  if (open) {
    // Held: read only the next probe, one row, once the probe may go and nothing else is in memory.
    if (s.dbDueAt !== null && !s.refilling && s.known.size === 0) {
      const at = Math.max(s.circuit.openUntil!, s.dbDueAt)
      if (at <= now) {
        s.refilling = true
        effects.push({ kind: 'refill', limit: 1, dueBy: now })
      } else {
        refillAt = at
      }
    }
  } else if (s.dbDueAt !== null && !s.refilling && s.queue.readyCount + s.inFlight.size <= policy.window / 2) {
    const canWait = s.queue.waitingCount <= policy.window / 2
    const dueBy = canWait ? now + HORIZON_MS : now
    if (s.dbDueAt <= dueBy) {
      s.refilling = true
      // Enough rows to get past the ones already in memory.
      effects.push({ kind: 'refill', limit: policy.window + s.known.size, dueBy })
    } else {
      refillAt = canWait ? s.dbDueAt - HORIZON_MS : s.dbDueAt
    }
  }
  const times = [s.queue.nextDueAt, refillAt, holdUntil].filter((t): t is number => t !== null)
  effects.push({ kind: 'arm', at: times.length ? Math.min(...times) : null })
  return effects
}

export interface EndpointDeps {
  store: WebhookStore
  committer: Committer
  /** Metrics (src/metrics/registry.ts `WebhookObserver`): each circuit change (attempt outcomes are counted by the attempt log once durable). */
  metrics?: { circuit(change: 'opened' | 'closed' | 'disabled'): void }
  /** Attempt records and endpoint health, batched (src/webhooks/attempt-log.ts). */
  attempts: { record(r: AttemptRecord): void; health(id: number, h: EndpointHealth): void; drain(): void }
  client: WebhookClient
  log: Logger
  policy: Policy
  /** The accounts' attempt permits (src/webhooks/budget.ts). */
  budget: {
    available(id: number, ownerId: number): number
    take(id: number, ownerId: number, n: number): void
    wait(id: number, ownerId: number): void
    /** An attempt finished; a failed one keeps its permit `holdMs` longer (see FAILED_HOLD_MS). */
    release(ownerId: number, holdMs: number): void
    forget(id: number): void
  }
  /** One retry timer per endpoint; `null` cancels it. */
  arm(id: number, at: number | null): void
  /** Message an endpoint actor through the registry (re-activating it if it was passivated). */
  tell(id: number, msg: EndpointMsg): void
  /** Keep track of an attempt in flight, for a graceful shutdown. */
  track(p: Promise<unknown>): void
  /** Shutting down: no new attempts, timers or refills; results of attempts in flight are still recorded. */
  draining(): boolean
  /** Shut down: messages are ignored. */
  closing(): boolean
  /** An attempt finished: hand its result to the actor (batched into one `sent` message). */
  completed(id: number, c: Completion): void
  /** A `sent` message is being handled: results arriving from now on need a new message. */
  resultsTaken(id: number, results: Completion[]): void
  /** The endpoint was deleted: drop its connection pool (attempts in flight are cut off). */
  dropPool(id: number): void
}

const notFound = () => new ApiError('not_found', 'The webhook endpoint does not exist.')

/** The nact handler for endpoint `id`: load on first message, then reduce and apply. */
export function endpointHandler(deps: EndpointDeps, id: number) {
  const { store, policy, log } = deps

  function load(): EndpointState | null {
    const row = store.endpoint(id)
    if (!row) return null
    const s = initialState(row)
    // Pending rows are never read here, directly: a batch may be committed but not yet fsynced
    // (storage/wal-sync.ts), and its deliveries must not leave before it is durable. "Something
    // may be due now" makes the first transition ask for a refill, which reads inside the write
    // queue and answers only once everything it saw is durable.
    s.dbDueAt = 0
    return s
  }

  /** Reduce within the account's budget, then apply the effects. */
  function step(s: EndpointState, msg: ReduceMsg): void {
    const effects = reduceEndpoint(s, msg, Date.now(), Math.random, policy, deps.budget.available(id, s.ownerId))
    let sends = 0
    for (const fx of effects) if (fx.kind === 'send') sends++
    // Exactly the permits the sends use; a reservation it could not use goes back to the others.
    deps.budget.take(id, s.ownerId, deps.draining() ? 0 : sends)
    apply(s, effects)
  }

  function apply(s: EndpointState, effects: Effect[]): void {
    const draining = deps.draining()
    for (const fx of effects) {
      if (draining && fx.kind !== 'record' && fx.kind !== 'health') continue
      switch (fx.kind) {
        case 'send': {
          const p = fx.delivery
          const owner = s.ownerId
          const ts = Math.floor(Date.now() / 1000)
          const headers = { ...signedHeaders(s.key, s.secret, p.msgId, p.event, ts, p.body) }
          const sending = s.url
            ? deps.client.send(id, s.url, headers, p.body)
            : Promise.resolve<Outcome>({ ok: false, status: null, error: 'blocked: invalid URL', excerpt: '', durationMs: 0 })
          deps.track(sending.then((outcome) => {
            deps.budget.release(owner, outcome.ok ? 0 : FAILED_HOLD_MS)
            deps.completed(id, { deliveryId: p.id, outcome })
          }))
          break
        }
        case 'record': {
          deps.attempts.record({ deliveryId: fx.deliveryId, attempt: fx.attempt, httpStatus: fx.outcome.status, error: fx.outcome.error, excerpt: fx.outcome.excerpt, durationMs: fx.outcome.durationMs, status: fx.status, nextAttemptAt: fx.nextAttemptAt })
          if (fx.status === 'failed') log.debug({ endpoint: id, delivery: fx.deliveryId, attempts: fx.attempt, status: fx.outcome.status, error: fx.outcome.error }, 'webhook delivery failed for good')
          break
        }
        case 'health':
          deps.attempts.health(id, fx.health)
          if (fx.change) deps.metrics?.circuit(fx.change)
          // One line per change of the circuit, not per attempt: a storm must not flood the log.
          if (fx.change === 'opened') log.warn({ endpoint: id, owner: s.ownerId, failures: fx.health.consecutiveFailures, until: fx.health.openUntil }, 'webhook endpoint circuit opened')
          else if (fx.change === 'closed') log.info({ endpoint: id, owner: s.ownerId }, 'webhook endpoint circuit closed')
          else if (fx.change === 'disabled') log.warn({ endpoint: id, owner: s.ownerId, reason: fx.health.disabledReason }, 'webhook endpoint disabled')
          break
        case 'starved':
          deps.budget.wait(id, s.ownerId)
          break
        case 'arm':
          deps.arm(id, fx.at)
          break
        case 'refill':
          // Inside the write queue, after the buffered attempt records: the read sees every outcome decided so far.
          deps.committer.write(() => {
            deps.attempts.drain()
            return { rows: store.pending(id, fx.limit, fx.dueBy), nextDue: store.nextDueAfter(id, fx.dueBy) }
          }).then(
            (r) => { if (!deps.closing()) deps.tell(id, { type: 'loaded', rows: r.rows, complete: r.rows.length < fx.limit, nextDue: r.nextDue }) },
            (err: unknown) => {
              log.error({ err, endpoint: id }, 'webhook refill failed; trying again in a second')
              setTimeout(() => { if (!deps.closing()) deps.tell(id, { type: 'loaded', rows: [], complete: false, nextDue: Date.now() }) }, 1000).unref()
            },
          )
          break
        default: {
          const never: never = fx
          return never
        }
      }
    }
  }

  /** A change asked for by the owner: durable first, then applied to the state, then answered. */
  async function command(s: EndpointState, msg: EndpointCommand): Promise<EndpointState | null> {
    switch (msg.type) {
      case 'delete': {
        await deps.committer.write(() => store.deleteEndpoint(id))
        // Its deliveries went with it (ON DELETE CASCADE): nothing to send or wake for any more.
        deps.arm(id, null)
        deps.budget.forget(id)
        deps.dropPool(id)
        nact.dispatch(msg.replyTo, ok(null))
        // Whatever is queued behind this message finds no endpoint and answers 404.
        return null
      }
      case 'ping': {
        const row = await deps.committer.write(() => {
          const p = store.insertDelivery(id, 'ping', nowIso(), msg.data)
          return store.delivery(id, p.id)!
        })
        step(s, { type: 'enqueue', deliveries: [pendingOf(row)] })
        nact.dispatch(msg.replyTo, ok(row))
        return s
      }
      case 'requeue': {
        const row = await deps.committer.write(() => {
          const original = store.delivery(id, msg.deliveryId)
          if (!original) throw new ApiError('not_found', 'The delivery does not exist.')
          const body = JSON.parse(original.body) as { created_at: string; data: unknown }
          const p = store.insertDelivery(id, original.event, body.created_at, JSON.stringify(body.data), { requeuedFrom: original.id })
          return store.delivery(id, p.id)!
        })
        step(s, { type: 'enqueue', deliveries: [pendingOf(row)] })
        nact.dispatch(msg.replyTo, ok(row))
        return s
      }
      case 'set_paused': {
        const paused = msg.paused
        const row = await deps.committer.write(() => {
          // Health snapshots still buffered are older than this resume: written first, then cleared.
          if (!paused) deps.attempts.drain()
          store.setPaused(id, paused)
          return store.endpoint(id)!
        })
        step(s, { type: 'set_paused', paused })
        nact.dispatch(msg.replyTo, ok(row))
        return s
      }
      default: {
        const never: never = msg
        return never
      }
    }
  }

  return async (state: EndpointState | null, msg: EndpointMsg): Promise<EndpointState | null> => {
    if (msg.type === 'sent') deps.resultsTaken(id, msg.results)
    if (deps.closing()) {
      if (msg.replyTo) nact.dispatch(msg.replyTo, fail(new ApiError('unavailable')))
      return state
    }
    state ??= load()
    if (!state) {
      // Deleted: nothing to deliver any more, no permit to hold, and 404 to the owner's changes.
      deps.arm(id, null)
      deps.budget.forget(id)
      if (msg.replyTo) nact.dispatch(msg.replyTo, fail(notFound()))
      return null
    }
    if (msg.replyTo) {
      // Another account's endpoint is as good as absent (api-v1 §1), whatever resolved it.
      if (msg.ownerId !== state.ownerId) {
        nact.dispatch(msg.replyTo, fail(notFound()))
        return state
      }
      try {
        return await command(state, msg)
      } catch (err) {
        if (err instanceof ApiError) nact.dispatch(msg.replyTo, fail(err))
        else {
          log.error({ err, endpoint: id, msg: msg.type }, 'webhook endpoint change failed')
          nact.dispatch(msg.replyTo, fail(new ApiError('internal_error')))
        }
        return state
      }
    }
    step(state, msg)
    return state
  }
}
