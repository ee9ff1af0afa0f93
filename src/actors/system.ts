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

export type Handler<S, M> = (state: S, msg: M) => S | Promise<S>

/**
 * Messages sent to registry actors that no handler has started yet, across all registries. The
 * group committer keeps its batch open while this is above zero (storage/commit.ts).
 */
export class MailboxGauge {
  queued = 0
}

/**
 * Virtual actors keyed by id. `ask` counts in-flight messages per actor so passivation never stops
 * an actor that still has work; idle actors are stopped by a sweep and respawned (reloading from
 * SQLite) on next use, so memory is bounded by live work, not by history.
 */
export class Registry<Id extends string | number, S, M extends { replyTo?: Ref<any> }> {
  private readonly live = new Map<Id, { ref: Ref<M>; inFlight: number; lastUsed: number }>()
  private readonly timer: NodeJS.Timeout

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

  private entry(id: Id) {
    let e = this.live.get(id)
    if (!e) {
      const handle = this.handle(id)
      const gauge = this.gauge
      const ref = nact.spawn(this.system, (state: S, msg: M) => {
        gauge.queued--
        return handle(state, msg)
      }, `${this.kind}-${id}`, {
        initialStateFunc: () => this.init(id),
        onCrash: supervise(this.log, this.kind) as any,
      }) as Ref<M>
      e = { ref, inFlight: 0, lastUsed: Date.now() }
      this.live.set(id, e)
    }
    e.lastUsed = Date.now()
    return e
  }

  /** Send `make(replyTo)` to actor `id` and await its Result; an error Result throws its ApiError. */
  async ask<T>(id: Id, make: (replyTo: Ref<Result<T>>) => M, timeoutMs = 10_000): Promise<T> {
    const e = this.entry(id)
    e.inFlight++
    this.gauge.queued++
    try {
      const r = (await nact.query(e.ref, make as any, timeoutMs)) as Result<T>
      if (!r.ok) throw r.error
      return r.value
    } finally {
      e.inFlight--
      e.lastUsed = Date.now()
    }
  }

  /** Fire-and-forget message (no reply). */
  tell(id: Id, msg: M): void {
    this.gauge.queued++
    nact.dispatch(this.entry(id).ref, msg)
  }

  /** Stop one actor now (e.g. its entity was deleted); the next use reloads it. */
  evict(id: Id): void {
    const e = this.live.get(id)
    if (!e) return
    this.live.delete(id)
    nact.stop(e.ref)
  }

  passivateIdle(now = Date.now()): number {
    let n = 0
    for (const [id, e] of this.live) {
      if (e.inFlight === 0 && now - e.lastUsed >= this.idleMs) {
        this.live.delete(id)
        nact.stop(e.ref)
        n++
      }
    }
    return n
  }

  close(): void {
    clearInterval(this.timer)
    for (const e of this.live.values()) nact.stop(e.ref)
    this.live.clear()
  }
}
