/**
 * SMS behind a small provider interface (driver login codes, customer OTP). The development
 * provider records what would be sent, so tests and operators can read it; a real gateway
 * implements the same interface.
 */
export interface SmsMessage { to: string; body: string; sent_at: string }

export interface SmsProvider {
  send(to: string, body: string): Promise<void>
}

/** Keeps the last messages in memory (bounded) instead of sending them. */
export class RecordingSmsProvider implements SmsProvider {
  readonly sent: SmsMessage[] = []
  constructor(private readonly keep = 1000) {}
  async send(to: string, body: string): Promise<void> {
    this.sent.push({ to, body, sent_at: new Date().toISOString() })
    if (this.sent.length > this.keep) this.sent.splice(0, this.sent.length - this.keep)
  }
  /** The newest message to a number, if any. */
  lastTo(to: string): SmsMessage | undefined {
    for (let i = this.sent.length - 1; i >= 0; i--) if (this.sent[i]!.to === to) return this.sent[i]
    return undefined
  }
}
