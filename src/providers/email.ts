/**
 * Email behind a small provider interface (owner email verification; docs/dashboard.md "Signing
 * in"), shaped like src/providers/sms.ts: the development provider records what would be sent, so
 * tests and operators can read it; a real mail service implements the same interface.
 */
export interface EmailMessage { to: string; subject: string; text: string; sent_at: string }

export interface EmailProvider {
  send(to: string, subject: string, text: string): Promise<void>
}

/** Keeps the last messages in memory (bounded) instead of sending them. */
export class RecordingEmailProvider implements EmailProvider {
  readonly sent: EmailMessage[] = []
  constructor(private readonly keep = 1000) {}
  async send(to: string, subject: string, text: string): Promise<void> {
    this.sent.push({ to, subject, text, sent_at: new Date().toISOString() })
    if (this.sent.length > this.keep) this.sent.splice(0, this.sent.length - this.keep)
  }
  /** The newest message to an address (case-insensitive), if any. */
  lastTo(to: string): EmailMessage | undefined {
    for (let i = this.sent.length - 1; i >= 0; i--) if (this.sent[i]!.to.toLowerCase() === to.toLowerCase()) return this.sent[i]
    return undefined
  }
}
