/**
 * The attempt loop shared by the real providers (docs/providers.md "Retries"): try, log a failure
 * with the recipient masked (never the text: it may hold a sign-in code), wait as retry.ts says,
 * try again. Waits are cancelled by `close()` (shutdown), and their timers never hold the process.
 */
import { createHash } from 'node:crypto'
import type { Logger } from '../log.ts'
import { ApiError } from '../errors.ts'
import { BACKGROUND, INTERACTIVE, nextDelay, type Attempt, type RetryPolicy } from './retry.ts'

/** Who a delivery is for, as it may appear in a log line. */
export interface Target { channel: 'sms' | 'email' | 'push'; provider: string; to: string }

/** Enough of a phone number to tell two apart in a log, not enough to text it: `+1555•••67`. */
export const maskPhone = (phone: string): string => (phone.length > 6 ? `${phone.slice(0, 5)}•••${phone.slice(-2)}` : '•••')
/** `o•••@example.test`: the domain helps tell a provider problem from a typo; the mailbox stays out. */
export const maskEmail = (email: string): string => {
  const at = email.lastIndexOf('@')
  return at > 0 ? `${email[0]}•••${email.slice(at)}` : '•••'
}
/** A push token is a credential for its device: a short digest identifies it in logs. */
export const maskToken = (token: string): string => `sha256:${createHash('sha256').update(token).digest('hex').slice(0, 12)}`

const WHAT: Record<Target['channel'], string> = { sms: 'The text message', email: 'The email', push: 'The push notification' }

export class Deliverer {
  private closed = false
  private readonly waits = new Set<() => void>()

  constructor(
    private readonly log: Logger,
    /** Time limit of one attempt (PROVIDER_TIMEOUT_MS), cut shorter near the policy's deadline. */
    private readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  /** Attempts under `policy`; the last attempt's result (success, or why it failed). */
  async run(target: Target, policy: RetryPolicy, attempt: (timeoutMs: number) => Promise<Attempt>): Promise<Attempt> {
    const started = this.now()
    for (let n = 1; ; n++) {
      if (this.closed) return { ok: false, transient: true, reason: 'shutting down' }
      const left = policy.deadlineMs - (this.now() - started)
      const r = await attempt(Math.max(1, Math.min(this.timeoutMs, left)))
      if (r.ok) {
        if (n > 1) this.log.info({ ...target, attempt: n }, `${target.channel} delivered after a retry`)
        return r
      }
      const wait = r.transient ? nextDelay(policy, n, this.now() - started, r.retryAfterMs, this.random) : null
      const fields = { ...target, attempt: n, status: r.status, reason: r.reason, dead: r.dead || undefined }
      if (wait === null) {
        this.log.error(fields, `${target.channel} delivery failed${r.transient ? ', giving up' : ' (not retried)'}`)
        return r
      }
      this.log.warn({ ...fields, retry_in_ms: wait }, `${target.channel} delivery failed, retrying`)
      if (!(await this.sleep(wait))) return r
    }
  }

  /**
   * Someone waits for this message (a sign-in code, a verification link): the INTERACTIVE policy,
   * and a failure becomes 503 `delivery_failed` for the caller, with Retry-After when a later try
   * may work.
   */
  async interactive(target: Target, attempt: (timeoutMs: number) => Promise<Attempt>): Promise<void> {
    const r = await this.run(target, INTERACTIVE, attempt)
    if (r.ok) return
    const later = r.transient ? ' Try again in a minute.' : ''
    throw new ApiError('delivery_failed', `${WHAT[target.channel]} could not be sent.${later}`, undefined, r.transient ? { 'Retry-After': '60' } : undefined)
  }

  /** Nobody waits (pushes): the BACKGROUND policy; the result says whether it arrived. */
  background(target: Target, attempt: (timeoutMs: number) => Promise<Attempt>): Promise<Attempt> {
    return this.run(target, BACKGROUND, attempt)
  }

  /** Resolves true after `ms`, or false at once when closed. */
  private sleep(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const wake = (ok: boolean) => { clearTimeout(timer); this.waits.delete(cancel); resolve(ok) }
      const cancel = () => wake(false)
      const timer = setTimeout(() => wake(true), ms)
      timer.unref()
      this.waits.add(cancel)
    })
  }

  /** Shutdown: pending retries give up now (they are in memory only; docs/providers.md). */
  close(): void {
    this.closed = true
    for (const cancel of [...this.waits]) cancel()
  }
}
