/**
 * The event router (ARCHITECTURE "Events"): after a change and its outbox rows are durable, the
 * committed events go to every subscriber — webhook endpoint actors and the real-time publisher.
 * Subscribers must not throw into the writer; failures are logged.
 */
import type { Logger } from '../log.ts'
import type { OutboxEvent } from '../storage/outbox.ts'

export type EventListener = (e: OutboxEvent) => void

export class EventRouter {
  private readonly listeners: EventListener[] = []
  constructor(private readonly log: Logger) {}

  subscribe(fn: EventListener): () => void {
    this.listeners.push(fn)
    return () => {
      const i = this.listeners.indexOf(fn)
      if (i >= 0) this.listeners.splice(i, 1)
    }
  }

  /** Deliver committed events, in order. */
  publish(events: readonly OutboxEvent[]): void {
    for (const e of events) {
      for (const fn of this.listeners) {
        try { fn(e) } catch (err) { this.log.error({ err, event: e.event }, 'event listener failed') }
      }
    }
  }
}
