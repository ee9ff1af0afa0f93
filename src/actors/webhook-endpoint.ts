/**
 * The webhook-endpoint actor (ARCHITECTURE 1, "Webhooks"): one per endpoint. It owns the endpoint's
 * url, secret, paused flag and its queue of pending deliveries; it sends with at most
 * `maxInFlight` requests at a time and schedules its own retries. Retry times live in SQLite
 * (`next_attempt_at`) and are re-armed whenever the actor is activated, so a restart or a
 * passivation loses none. `reduceEndpoint` is the transition without I/O; the shell applies its
 * effects (send, record, arm a timer, refill from storage).
 */
import * as nact from 'nact'
import type { Ref, Result } from './system.ts'
import { fail, ok } from './system.ts'
import { ApiError } from '../errors.ts'
import { DeliveryQueue, type Pending } from './webhook-queue.ts'
import { verdict } from '../domain/webhook-retry.ts'
import type { Outcome, WebhookClient } from '../webhooks/client.ts'
import { signedHeaders, signingKey } from '../webhooks/signing.ts'
import type { AttemptRecord, DeliveryStatus, EndpointRow, WebhookStore } from '../storage/webhooks.ts'
import type { Committer } from '../storage/commit.ts'
import type { Logger } from '../log.ts'

export interface Policy {
  /** Concurrent requests per endpoint. */
  maxInFlight: number
  /** Deliveries due now held in memory (and, separately, retries waiting): the rest wait in SQLite. */
  window: number
  /** Seconds between attempts (WEBHOOK_RETRY_SCHEDULE). */
  schedule: readonly number[]
}

/**
 * Retries due later than this stay in SQLite only and are read back shortly before they are due,
 * so an endpoint that has been failing for an hour holds its near-term work in memory, not its backlog.
 */
export const HORIZON_MS = 30_000

export interface EndpointState {
  id: number
  url: URL | null
  secret: string
  key: Buffer
  paused: boolean
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
  | { type: 'set_paused'; paused: boolean; replyTo: Ref<Result<{ paused: boolean }>> }

export interface Completion { deliveryId: number; outcome: Outcome }

export type Effect =
  | { kind: 'send'; delivery: Pending }
  | { kind: 'record'; deliveryId: number; attempt: number; outcome: Outcome; status: DeliveryStatus; nextAttemptAt: number | null }
  | { kind: 'arm'; at: number | null }
  /** Read up to `limit` pending deliveries due by `dueBy`, earliest first, and answer with `loaded`. */
  | { kind: 'refill'; limit: number; dueBy: number }

export function initialState(row: EndpointRow): EndpointState {
  let url: URL | null = null
  try { url = new URL(row.url) } catch { url = null }
  return {
    id: row.id, url, secret: row.secret, key: signingKey(row.secret), paused: row.paused_at !== null,
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
  const fits = p.dueAt <= now
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

/** The transition: updates `s` in place (it is the actor's private state) and returns the effects. */
export function reduceEndpoint(s: EndpointState, msg: Exclude<EndpointMsg, { type: 'set_paused' }> | { type: 'set_paused'; paused: boolean }, now: number, rand: () => number, policy: Policy): Effect[] {
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
    case 'sent':
      for (const r of msg.results) {
        const p = s.inFlight.get(r.deliveryId)
        // Not ours: started before this activation; the row is still pending and will be sent again.
        if (!p) continue
        s.inFlight.delete(p.id)
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
      break
    case 'set_paused':
      s.paused = msg.paused
      break
    default: {
      const never: never = msg
      return never
    }
  }
  if (s.paused) {
    effects.push({ kind: 'arm', at: null })
    return effects
  }
  // Send what is due, up to the concurrency bound (api-v1 §6: a slow endpoint only slows itself).
  s.queue.promote(now)
  while (s.inFlight.size < policy.maxInFlight) {
    const p = s.queue.shift()
    if (!p) break
    s.inFlight.set(p.id, p)
    effects.push({ kind: 'send', delivery: p })
  }
  // Read more from SQLite when something there is due (or due within the horizon, if retries have
  // room) and the queue has drained to half: reads come in large steps, never one row at a time.
  let refillAt: number | null = null
  if (s.dbDueAt !== null && !s.refilling && s.queue.readyCount + s.inFlight.size <= policy.window / 2) {
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
  const next = s.queue.nextDueAt
  effects.push({ kind: 'arm', at: next === null ? refillAt : refillAt === null ? next : Math.min(next, refillAt) })
  return effects
}

export interface EndpointDeps {
  store: WebhookStore
  committer: Committer
  /** Attempt records, batched (src/webhooks/attempt-log.ts). */
  attempts: { record(r: AttemptRecord): void; drain(): void }
  client: WebhookClient
  log: Logger
  policy: Policy
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
}

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

  function apply(s: EndpointState, effects: Effect[]): void {
    const draining = deps.draining()
    for (const fx of effects) {
      if (draining && fx.kind !== 'record') continue
      switch (fx.kind) {
        case 'send': {
          const p = fx.delivery
          const ts = Math.floor(Date.now() / 1000)
          const headers = { ...signedHeaders(s.key, s.secret, p.msgId, p.event, ts, p.body) }
          const sending = s.url
            ? deps.client.send(id, s.url, headers, p.body)
            : Promise.resolve<Outcome>({ ok: false, status: null, error: 'blocked: invalid URL', excerpt: '', durationMs: 0 })
          deps.track(sending.then((outcome) => deps.completed(id, { deliveryId: p.id, outcome })))
          break
        }
        case 'record': {
          deps.attempts.record({ deliveryId: fx.deliveryId, attempt: fx.attempt, httpStatus: fx.outcome.status, error: fx.outcome.error, excerpt: fx.outcome.excerpt, durationMs: fx.outcome.durationMs, status: fx.status, nextAttemptAt: fx.nextAttemptAt })
          if (fx.status === 'failed') log.warn({ endpoint: id, delivery: fx.deliveryId, attempts: fx.attempt, status: fx.outcome.status, error: fx.outcome.error }, 'webhook delivery failed for good')
          break
        }
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

  return async (state: EndpointState | null, msg: EndpointMsg): Promise<EndpointState | null> => {
    if (msg.type === 'sent') deps.resultsTaken(id, msg.results)
    if (deps.closing()) {
      if (msg.replyTo) nact.dispatch(msg.replyTo, fail(new ApiError('unavailable')))
      return state
    }
    state ??= load()
    if (!state) {
      // Deleted: nothing to deliver any more.
      deps.arm(id, null)
      if (msg.replyTo) nact.dispatch(msg.replyTo, fail(new ApiError('not_found', 'The webhook endpoint does not exist.')))
      return null
    }
    if (msg.type === 'set_paused') {
      const paused = msg.paused
      try {
        await deps.committer.write(() => store.setPaused(id, paused))
      } catch (err) {
        log.error({ err, endpoint: id }, 'webhook pause not saved')
        nact.dispatch(msg.replyTo, fail(new ApiError('internal_error')))
        return state
      }
      apply(state, reduceEndpoint(state, { type: 'set_paused', paused }, Date.now(), Math.random, policy))
      nact.dispatch(msg.replyTo, ok({ paused }))
      return state
    }
    apply(state, reduceEndpoint(state, msg, Date.now(), Math.random, policy))
    return state
  }
}
