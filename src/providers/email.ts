/**
 * Email behind a small provider interface (owner email verification; docs/dashboard.md "Signing
 * in"), shaped like src/providers/sms.ts: the development provider records what would be sent, so
 * tests and operators can read it; a real mail service implements the same interface.
 */
export interface EmailMessage { to: string; subject: string; text: string; sent_at: string }

export interface EmailProvider {
  send(to: string, subject: string, text: string): Promise<void>
}

/**
 * The development provider (no SMTP_HOST): keeps the last messages in memory (bounded) instead of
 * sending them, and hands each to `shown` — the factory prints it to the server's output, so the
 * person running a development server can open a sign-up's confirmation link (docs/dashboard.md
 * "Signing in"). A real mail service never prints anything.
 */
export class RecordingEmailProvider implements EmailProvider {
  readonly sent: EmailMessage[] = []
  constructor(private readonly keep = 1000, private readonly shown: ((m: EmailMessage) => void) | null = null) {}
  async send(to: string, subject: string, text: string): Promise<void> {
    const m = { to, subject, text, sent_at: new Date().toISOString() }
    this.sent.push(m)
    if (this.sent.length > this.keep) this.sent.splice(0, this.sent.length - this.keep)
    this.shown?.(m)
  }
  /** The newest message to an address (case-insensitive), if any. */
  lastTo(to: string): EmailMessage | undefined {
    for (let i = this.sent.length - 1; i >= 0; i--) if (this.sent[i]!.to.toLowerCase() === to.toLowerCase()) return this.sent[i]
    return undefined
  }
}

/** The addresses a mail's text links to, in order (what a person needs from a development mail). */
export const linksIn = (text: string): string[] => text.match(/https?:\/\/\S+/g) ?? []

/** A development mail as the server prints it: recipient, subject and links, between two rules. */
export const devMailText = (m: EmailMessage): string =>
  ['', `--- mail not sent (no SMTP_HOST) ${'-'.repeat(40)}`, `To:      ${m.to}`, `Subject: ${m.subject}`,
    ...linksIn(m.text).map((l) => `Link:    ${l}`), '-'.repeat(75), ''].join('\n') + '\n'
