/**
 * Email over SMTP with nodemailer (docs/providers.md "Email"): one pooled transport to the relay
 * of SMTP_URL or SMTP_HOST/…; the relay queues and delivers, so an accepted message is done.
 */
import type { Transporter } from 'nodemailer'
import type { EmailProvider } from './email.ts'
import type { EmailConfig } from './config.ts'
import { maskEmail, type Deliverer } from './delivery.ts'
import type { Attempt } from './retry.ts'

type Smtp = Extract<EmailConfig, { kind: 'smtp' }>

/** Refusals that another try will meet again: credentials, TLS policy, a malformed message or envelope. */
const PERMANENT = new Set(['EAUTH', 'ETLS', 'EREQUIRETLS', 'EENVELOPE', 'EMESSAGE', 'EHLO'])

/** An SMTP failure (RFC 5321 §4.2.1): 4yz replies are transient, 5yz permanent; no reply: network. */
export function smtpFailure(err: unknown): Attempt {
  const e = err as { code?: string; responseCode?: number }
  if (typeof e.responseCode === 'number') {
    return { ok: false, transient: e.responseCode < 500, status: e.responseCode, reason: `smtp ${e.responseCode}${e.code ? ` ${e.code}` : ''}` }
  }
  const code = e.code ?? 'error'
  return { ok: false, transient: !PERMANENT.has(code), reason: `smtp ${code}` }
}

/** nodemailer (about 45 ms to load) is loaded by the first message, not at start. */
let nodemailerLoading: Promise<typeof import('nodemailer')> | null = null
const loadNodemailer = () => (nodemailerLoading ??= import('nodemailer'))

export class SmtpEmailProvider implements EmailProvider {
  private transport: Transporter | null = null
  private closed = false

  constructor(private readonly cfg: Smtp, private readonly deliver: Deliverer, private readonly timeoutMs: number) {}

  private async transporter(): Promise<Transporter> {
    const nodemailer = (await loadNodemailer()).default
    if (this.closed) throw Object.assign(new Error('smtp transport closed'), { code: 'ECONNECTION' })
    const t = this.timeoutMs
    // maxRequeues 0: the pool's own retries would multiply ours (delivery.ts owns the policy).
    const limits = { pool: true, maxConnections: 2, maxRequeues: 0, connectionTimeout: t, greetingTimeout: t, socketTimeout: t }
    const where = typeof this.cfg.transport === 'string' ? { url: this.cfg.transport } : this.cfg.transport
    return (this.transport ??= nodemailer.createTransport({ ...where, ...limits }, { from: this.cfg.from }))
  }

  /** Awaited by sign-up and sign-in: a failure is 503 `delivery_failed` for them (delivery.ts). */
  send(to: string, subject: string, text: string): Promise<void> {
    return this.deliver.interactive({ channel: 'email', provider: 'smtp', to: maskEmail(to) }, () => this.attempt(to, subject, text))
  }

  private async attempt(to: string, subject: string, text: string): Promise<Attempt> {
    try {
      await (await this.transporter()).sendMail({ to, subject, text })
      return { ok: true }
    } catch (err) {
      return smtpFailure(err)
    }
  }

  close(): void {
    this.closed = true
    this.transport?.close()
  }
}
