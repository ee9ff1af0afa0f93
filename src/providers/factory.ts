/**
 * The providers a server uses, chosen by configuration (docs/providers.md): the development ones
 * record what would be sent; `twilio`, `smtp` and `live` send.
 */
import type { Logger } from '../log.ts'
import type { ProvidersConfig } from './config.ts'
import { RecordingSmsProvider, type SmsProvider } from './sms.ts'
import { devMailText, RecordingEmailProvider, type EmailProvider } from './email.ts'
import { RecordingPushProvider, type PushProvider } from './push.ts'
import { Deliverer } from './delivery.ts'
import { TwilioSmsProvider } from './sms-twilio.ts'
import { SmtpEmailProvider } from './email-smtp.ts'
import { WebPushSender } from './push-webpush.ts'
import { FcmSender } from './push-fcm.ts'
import { LivePushProvider } from './push-live.ts'
import { createRouter, type Router } from './router.ts'
import { createGeocoder, type Geocoder } from './geocoder.ts'

export interface Providers {
  sms: SmsProvider
  email: EmailProvider
  push: PushProvider
  /** Travel times (ROUTER; docs/dispatch.md "Router"). */
  router: Router
  /** Address search (GEOCODER; docs/providers.md "Geocoder"). */
  geocoder: Geocoder
  /** Shutdown: pending retries give up, connections close. */
  close(): Promise<void>
}

export interface ProviderDeps {
  log: Logger
  /** Forget a push token the push service says is gone, in every device table. */
  forgetPushToken(deviceToken: string): Promise<unknown>
}

export function createProviders(cfg: ProvidersConfig, deps: ProviderDeps): Providers {
  const deliver = new Deliverer(deps.log, cfg.timeoutMs)
  const closers: Array<() => unknown> = [() => deliver.close()]
  const sms = cfg.sms.kind === 'twilio' ? new TwilioSmsProvider(cfg.sms, deliver) : new RecordingSmsProvider()
  // No mail service configured (development): each mail is printed instead of sent, when the log
  // level is info or finer. Printed as the first start's banner is, not as a log line: its links are
  // credentials (a confirmation, a password reset), and log lines never carry those (src/log.ts).
  let email: EmailProvider = new RecordingEmailProvider(1000, (m) => {
    if (deps.log.isLevelEnabled('info')) process.stdout.write(devMailText(m))
  })
  if (cfg.email.kind === 'smtp') {
    const smtp = new SmtpEmailProvider(cfg.email, deliver, cfg.timeoutMs)
    closers.push(() => smtp.close())
    email = smtp
  }
  let push: PushProvider = new RecordingPushProvider()
  if (cfg.push.kind === 'live') {
    const web = cfg.push.vapid ? new WebPushSender(cfg.push.vapid, cfg.push.allowLoopback, cfg.timeoutMs) : null
    if (web) closers.push(() => web.close())
    const fcm = cfg.push.fcm ? new FcmSender(cfg.push.fcm) : null
    push = new LivePushProvider({ web, fcm, deliver, log: deps.log, onDead: deps.forgetPushToken })
  }
  const router = createRouter(cfg.router)
  closers.push(() => router.close())
  const geocoder = createGeocoder(cfg.geocoder)
  closers.push(() => geocoder.close())
  return {
    sms, email, push, router, geocoder,
    async close() {
      for (const c of closers) await c()
    },
  }
}
