/**
 * Push notifications behind a provider interface (driver offers, staff alerts). The development
 * provider records what would be sent so tests can read it.
 */
export interface PushMessage { device_token: string; platform: string; title: string; body: string; data: Record<string, unknown>; sent_at: string }

export interface PushProvider {
  send(msg: Omit<PushMessage, 'sent_at'>): Promise<void>
}

export class RecordingPushProvider implements PushProvider {
  readonly sent: PushMessage[] = []
  constructor(private readonly keep = 1000) {}
  async send(msg: Omit<PushMessage, 'sent_at'>): Promise<void> {
    this.sent.push({ ...msg, sent_at: new Date().toISOString() })
    if (this.sent.length > this.keep) this.sent.splice(0, this.sent.length - this.keep)
  }
}
