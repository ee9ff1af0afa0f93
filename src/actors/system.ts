/**
 * A thin facade over nact: supervised spawns, typed asks with the reply address inside the
 * message, and a registry of virtual actors (found or spawned on demand, passivated when idle).
 */
import * as nact from 'nact'
import type { Logger } from '../log.ts'
import { ApiError } from '../errors.ts'

export type Ref<M> = nact.Ref<M>
export type ActorSystem = nact.Ref<never>

/** Every reply an actor sends: a value, or a typed API error for the front door to render. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: ApiError }
export const ok = <T>(value: T): Result<T> => ({ ok: true, value })
export const fail = (error: ApiError): Result<never> => ({ ok: false, error })

export function startSystem(): ActorSystem {
  return nact.start()
}

export function stopSystem(system: ActorSystem): void {
  nact.stop(system)
}

/** `onCrash` for every spawn: log and reset (state reloads from SQLite on the next message). */
function supervise(log: Logger, kind: string) {
  return (msg: unknown, err: Error | undefined, ctx: nact.SupervisionContext<unknown, any>) => {
    log.error({ err, kind, msg: (msg as { type?: string } | undefined)?.type }, 'actor crashed; resetting')
    const replyTo = (msg as { replyTo?: Ref<Result<unknown>> } | undefined)?.replyTo
    if (replyTo) nact.dispatch(replyTo, fail(new ApiError('internal_error')))
    return ctx.reset
  }
}

export type Handler<S, M> = ((state: S, msg: M) => S | Promise<S>) & {
  /**
   * Optional synchronous path (`Registry.tellNow`): handle `msg` at once on the state of an idle
   * actor and return true, or return false to have it sent as a message. It may update `state` in
   * place: the actor is idle, so nothing else is using it.
   */
  now?: (state: S, msg: M) => boolean
}

/**
 * Messages sent to registry actors that no handler has started yet, across all registries. The
 * group committer keeps its batch open while this is above zero (storage/commit.ts).
 */
export class MailboxGauge {
  queued = 0
}

/**
 * Virtual actors keyed by id. The registry counts, per actor, the messages not yet handled, the
 * handler running and the asks awaiting their reply, so an actor is stopped only when nothing is
 * in flight: nact drops a stopped actor's mailbox silently, and an ask left in it would wait for
 * the query timeout and surface as a 500 (issue 10 #5). Idle actors are stopped by a sweep and
 * respawned (reloading from SQLite) on next use, so memory is bounded by live work, not history.
 */
export class Registry<Id extends string | number, S, M extends { replyTo?: Ref<any> }> {
  private readonly live = new Map<Id, Entry<M, S>>()
  private readonly timer: NodeJS.Timeout
  private closed = false

  constructor(
    private readonly system: ActorSystem,
    private readonly kind: string,
    private readonly init: (id: Id) => S,
    private readonly handle: (id: Id) => Handler<S, M>,
    private readonly log: Logger,
    private readonly idleMs = 60_000,
    private readonly gauge: MailboxGauge = new MailboxGauge(),
  ) {
    this.timer = setInterval(() => this.passivateIdle(), Math.max(1000, Math.min(idleMs, 30_000)))
    this.timer.unref()
  }

  get size(): number {
    return this.live.size
  }

  /** Messages not yet picked up by this registry's actors, in all and in the deepest mailbox (read on scrape, src/metrics). */
  mailboxes(): { queued: number; deepest: number } {
    let queued = 0
    let deepest = 0
    for (const e of this.live.values()) {
      queued += e.mailbox
      if (e.mailbox > deepest) deepest = e.mailbox
    }
    return { queued, deepest }
  }

  private entry(id: Id): Entry<M, S> {
    if (this.closed) throw new ApiError('unavailable', 'The server is shutting down.')
    let e = this.live.get(id)
    if (!e) {
      const handle = this.handle(id)
      const gauge = this.gauge
      const created: Entry<M, S> = { ref: null as unknown as Ref<M>, mailbox: 0, running: false, inFlight: 0, lastUsed: Date.now(), retiring: false, waiters: new Set(), now: handle.now, state: undefined }
      created.ref = nact.spawn(this.system, async (state: S, msg: M) => {
        created.mailbox--
        gauge.queued--
        created.running = true
        try {
          const next = await handle(state, msg)
          created.state = next
          return next
        } catch (err) {
          created.state = undefined // nact resets the actor (supervise): its state is unknown until its next message
          throw err
        } finally {
          created.running = false
          // Safe before nact stores the returned state: a stopped actor takes no further message.
          if (created.retiring) this.stopIfIdle(id, created)
        }
      }, `${this.kind}-${id}`, {
        initialStateFunc: () => this.init(id),
        onCrash: supervise(this.log, this.kind) as any,
      }) as Ref<M>
      e = created
      this.live.set(id, e)
    }
    e.lastUsed = Date.now()
    return e
  }

  /**
   * Send `make(replyTo)` to actor `id` and await its Result; an error Result throws its ApiError.
   * If the actor is stopped before it answers (shutdown), the ask is answered 503 `unavailable` at
   * once rather than at the timeout.
   */
  async ask<T>(id: Id, make: (replyTo: Ref<Result<T>>) => M, timeoutMs = 10_000): Promise<T> {
    const e = this.entry(id)
    let replyTo: Ref<Result<unknown>> | undefined
    // nact.query calls the factory and dispatches synchronously, so the mailbox count is exact.
    e.mailbox++
    this.gauge.queued++
    let answer: Promise<unknown>
    try {
      answer = nact.query(e.ref, (to: Ref<Result<T>>) => { replyTo = to as Ref<Result<unknown>>; return make(to) }, timeoutMs)
    } catch (err) {
      e.mailbox--
      this.gauge.queued--
      throw err
    }
    if (!replyTo) {
      // nact no longer knows the actor (stopped outside the registry): nothing was sent. Forget it,
      // so the next message spawns a fresh one.
      e.mailbox--
      this.gauge.queued--
      if (this.live.get(id) === e) this.live.delete(id)
      return answer.then(() => { throw new ApiError('internal_error') }) as Promise<T>
    }
    e.inFlight++
    e.waiters.add(replyTo)
    try {
      const r = (await answer) as Result<T>
      if (!r.ok) throw r.error
      return r.value
    } finally {
      e.waiters.delete(replyTo)
      e.inFlight--
      e.lastUsed = Date.now()
      if (e.retiring) this.stopIfIdle(id, e)
    }
  }

  /** Fire-and-forget message (no reply); dropped once the registry is closed (shutdown). */
  tell(id: Id, msg: M): void {
    if (this.closed) return
    const e = this.entry(id)
    e.mailbox++
    this.gauge.queued++
    try {
      nact.dispatch(e.ref, msg)
    } catch (err) {
      e.mailbox--
      this.gauge.queued--
      throw err
    }
  }

  /**
   * `tell`, handled at once when actor `id` is loaded, has nothing queued or running and its handler
   * has a synchronous path for `msg` (`Handler.now`): the same order as a `tell` (an idle actor takes
   * this message next) without a mailbox hop, a timer turn and the promises of a handled message.
   */
  tellNow(id: Id, msg: M): void {
    const e = this.closed ? undefined : this.live.get(id)
    if (e?.now && e.state !== undefined && e.mailbox === 0 && !e.running && !e.retiring) {
      e.lastUsed = Date.now()
      let done = false
      try {
        done = e.now(e.state, msg)
      } catch (err) {
        // As for a crash of the handler: log, and let the next message reload the state.
        this.log.error({ err, kind: this.kind, msg: (msg as { type?: string }).type }, 'actor crashed; resetting')
        this.evict(id)
        return
      }
      if (done) return
    }
    this.tell(id, msg)
  }

  /**
   * Retire one actor (its entity was deleted, or changed behind its back): it is stopped as soon
   * as nothing is in flight — at once when idle — and the next use spawns a fresh one that reloads
   * from SQLite. Messages already sent, and any sent before it stops, are still handled by it, so
   * each gets its answer (a deleted entity's actor answers them 404 itself).
   */
  evict(id: Id): void {
    const e = this.live.get(id)
    if (!e) return
    e.retiring = true
    this.stopIfIdle(id, e)
  }

  private stopIfIdle(id: Id, e: Entry<M, S>): void {
    if (this.live.get(id) !== e || !idle(e)) return
    this.live.delete(id)
    nact.stop(e.ref)
  }

  passivateIdle(now = Date.now()): number {
    let n = 0
    for (const [id, e] of this.live) {
      if (idle(e) && now - e.lastUsed >= this.idleMs) {
        this.live.delete(id)
        nact.stop(e.ref)
        n++
      }
    }
    return n
  }

  /**
   * Stop every actor (shutdown). Asks still waiting are answered 503 `unavailable` now, and later
   * asks too, instead of each waiting for its timeout.
   */
  close(): void {
    this.closed = true
    clearInterval(this.timer)
    for (const e of this.live.values()) {
      this.gauge.queued -= e.mailbox
      e.mailbox = 0
      nact.stop(e.ref)
      // The first answer to a query's reply address wins (and clears nact's timer): this one.
      for (const to of e.waiters) nact.dispatch(to, fail(new ApiError('unavailable', 'The server is shutting down.')))
      e.waiters.clear()
    }
    this.live.clear()
  }
}

/** One live actor and what it still has to do. */
interface Entry<M, S = unknown> {
  ref: Ref<M>
  /** Messages sent and not yet picked up by the handler. */
  mailbox: number
  /** A handler is running (possibly awaiting a commit). */
  running: boolean
  /** Asks whose reply has not arrived. */
  inFlight: number
  lastUsed: number
  /** evict() was called: stop as soon as idle. */
  retiring: boolean
  /** Reply addresses of the asks in flight, so a stop answers them instead of leaving them to time out. */
  waiters: Set<Ref<Result<unknown>>>
  /** The handler's synchronous path (`tellNow`), if it has one. */
  now: ((state: S, msg: M) => boolean) | undefined
  /** The state the last handled message left (undefined before the first one, and after a crash). */
  state: S | undefined
}

const idle = (e: Pick<Entry<unknown>, 'mailbox' | 'running' | 'inFlight'>): boolean => e.mailbox === 0 && !e.running && e.inFlight === 0
