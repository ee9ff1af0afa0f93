/**
 * Outbox → deliveries (docs/webhooks.md "Durability"). A committer hook runs at the end of every
 * transaction: it reads the outbox after the durable cursor, writes one delivery row per matching
 * endpoint and advances the cursor — in the same transaction as the changes whose events it reads,
 * so an order and its deliveries commit together, for no extra fsync. After the commit the new
 * rows go to the endpoint actors. Whatever a transaction could not finish (a backlog larger than
 * one batch, outbox rows written by another process, a failed hook) stays after the cursor and is
 * picked up by the next transaction; `kick` starts one when nothing else would. A transaction writes
 * at most MAX_ROWS_PER_TX delivery rows; a larger backlog continues in the next ones.
 */
import type { Committer } from '../storage/commit.ts'
import type { Pending, WebhookStore } from '../storage/webhooks.ts'

/** Outbox rows per transaction: bounds one batch's work while a backlog drains. */
const BATCH = 500
/**
 * Delivery rows per transaction. A row costs about 10–25 µs (three indexes and a foreign key), and
 * everyone else's writes in the same transaction wait for the hook: one account's 300 orders × 60
 * endpoints in one go would hold every tenant's commits for a third of a second. In slices of this
 * size the backlog costs each transaction a few milliseconds, and other requests are served between
 * them (issue 10 item 6; docs/webhooks.md "Fairness").
 */
export const MAX_ROWS_PER_TX = 100
/** How often to look for outbox rows written outside this process. */
const POLL_MS = 2000

export class Fanout {
  private closed = false
  /** The cursor as of the last durable fan-out: events at or below it need no kick. */
  private fannedOutTo = 0
  private readonly poll: NodeJS.Timeout

  constructor(
    private readonly store: WebhookStore,
    private readonly committer: Committer,
    private readonly deliver: (endpointId: number, deliveries: Pending[]) => void,
  ) {
    committer.addHook<ReturnType<WebhookStore['fanout']> | null>({
      inTx: () => (this.closed ? null : this.store.fanout(BATCH, MAX_ROWS_PER_TX)),
      committed: (r) => {
        if (!r || this.closed) return
        this.fannedOutTo = Math.max(this.fannedOutTo, r.cursor)
        for (const [id, list] of r.byEndpoint) this.deliver(id, list)
        if (r.more) this.kick()
      },
    })
    this.poll = setInterval(() => this.kickIfBehind(), POLL_MS)
    this.poll.unref()
  }

  /** Start a transaction; the hook does the work. (Kicks in one event-loop turn share one transaction.) */
  kick(): void {
    if (this.closed) return
    this.committer.write(() => null).catch(() => {})
  }

  /**
   * Kick when outbox rows wait after the cursor (start-up, another process, a failed hook).
   * Given the id of a just-published event, answers from memory when the fan-out already covered it
   * (the usual case: the hook ran in that event's own transaction).
   */
  kickIfBehind(eventId?: number): void {
    if (eventId !== undefined && eventId <= this.fannedOutTo) return
    if (this.store.maxOutboxId() > this.store.cursor()) this.kick()
  }

  close(): void {
    this.closed = true
    clearInterval(this.poll)
  }
}
