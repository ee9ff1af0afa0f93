/**
 * Push notifications behind a provider interface (driver offers, staff alerts). The development
 * provider records what would be sent so tests can read it.
 */
export interface PushMessage { device_token: string; platform: string; title: string; body: string; data: Record<string, unknown>; sent_at: string }

/** A device that registered for pushes (the mobile shell, api-v1 §4.9 `POST /app/devices`). */
export interface PushDevice { device_token: string; platform: string; owner_id: number }

export interface PushProvider {
  send(msg: Omit<PushMessage, 'sent_at'>): Promise<void>
  /**
   * Tell the provider about a device (services such as SNS or a notification hub keep their own
   * registry); optional because APNs and FCM need none: sending to the token is enough.
   */
  register?(device: PushDevice): Promise<void>
  unregister?(device: Omit<PushDevice, 'owner_id'>): Promise<void>
}

export class RecordingPushProvider implements PushProvider {
  readonly sent: PushMessage[] = []
  /** Devices registered now, by token (the development provider's registry). */
  readonly registered = new Map<string, PushDevice>()
  constructor(private readonly keep = 1000) {}
  async send(msg: Omit<PushMessage, 'sent_at'>): Promise<void> {
    this.sent.push({ ...msg, sent_at: new Date().toISOString() })
    if (this.sent.length > this.keep) this.sent.splice(0, this.sent.length - this.keep)
  }
  async register(device: PushDevice): Promise<void> {
    this.registered.set(device.device_token, device)
  }
  async unregister(device: Omit<PushDevice, 'owner_id'>): Promise<void> {
    this.registered.delete(device.device_token)
  }
}
