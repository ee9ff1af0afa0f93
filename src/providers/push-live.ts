/**
 * The real push provider (PUSH_PROVIDER=live; docs/providers.md "Push"): platform `web` goes
 * through Web Push, `android` and `ios` through FCM. Pushes are fire-and-forget for their callers
 * (new-order alerts, delivery offers), so failures are retried in the background; a token the
 * service calls dead is forgotten through `onDead` (every device table; src/storage/push-devices.ts).
 */
import type { Logger } from '../log.ts'
import type { PushMessage, PushProvider } from './push.ts'
import type { Deliverer } from './delivery.ts'
import { maskToken } from './delivery.ts'
import type { WebPushSender } from './push-webpush.ts'
import type { FcmSender } from './push-fcm.ts'
import { parseWebSubscription } from './web-subscription.ts'
import type { Attempt } from './retry.ts'

export interface LivePushDeps {
  web: WebPushSender | null
  fcm: FcmSender | null
  deliver: Deliverer
  log: Logger
  /** Forget a device token everywhere it is registered (called once the service says it is gone). */
  onDead(deviceToken: string): Promise<unknown>
}

export class LivePushProvider implements PushProvider {
  private readonly warned = new Set<string>()

  constructor(private readonly deps: LivePushDeps) {}

  async send(msg: Omit<PushMessage, 'sent_at'>): Promise<void> {
    const attempt = this.attemptFor(msg)
    if (!attempt) return
    const target = { channel: 'push' as const, provider: msg.platform === 'web' ? 'webpush' : 'fcm', to: maskToken(msg.device_token) }
    const r = await this.deps.deliver.background(target, attempt)
    if (r.ok) return
    if (r.dead) {
      await this.deps.onDead(msg.device_token).catch((err: unknown) => this.deps.log.warn({ err, to: target.to }, 'could not forget a dead push token'))
      return
    }
    throw new Error(`push not delivered (${r.reason})`)
  }

  /** The attempt for this device, or null when no configured service serves its platform (logged once per platform). */
  private attemptFor(msg: Omit<PushMessage, 'sent_at'>): ((ms: number) => Promise<Attempt>) | null {
    const { web, fcm } = this.deps
    if (msg.platform === 'web' && web) {
      const sub = parseWebSubscription(msg.device_token)
      // Registered before the register routes checked the shape: it can never be delivered.
      if (!sub) return async () => ({ ok: false, transient: false, dead: true, reason: 'not a PushSubscription' })
      const payload = JSON.stringify({ title: msg.title, body: msg.body, data: msg.data })
      return (ms) => web.attempt(sub, payload, ms)
    }
    if ((msg.platform === 'android' || msg.platform === 'ios') && fcm) {
      return (ms) => fcm.attempt({ token: msg.device_token, title: msg.title, body: msg.body, data: msg.data }, ms)
    }
    if (!this.warned.has(msg.platform)) {
      this.warned.add(msg.platform)
      this.deps.log.warn({ platform: msg.platform }, 'push skipped: no push service is configured for this platform (docs/providers.md)')
    }
    return null
  }
}
