/**
 * Open WebSockets per credential and per client address, and messages per socket (docs/limits.md,
 * issue 21 item 5). A socket is admitted at its upgrade (the count is taken then, so a burst of
 * upgrades cannot overshoot), and released once when it closes, however it closes; a socket
 * admitted but never opened is released by `settle`. Memory: one entry per distinct open
 * credential and address, one small record per open socket.
 */
import { createHash } from 'node:crypto'
import { ApiError } from '../errors.ts'

/** The operator's settings (WS_MAX_PER_TOKEN, WS_MAX_PER_ADDRESS, WS_MESSAGE_RATE, WS_MESSAGE_BURST); 0 = no limit. */
export interface SocketLimitSettings {
  wsMaxPerToken: number
  wsMaxPerAddress: number
  /** Messages per second a socket may send on average, and how many at once (a token bucket). */
  wsMessageRate: number
  wsMessageBurst: number
}

export const NO_SOCKET_LIMITS: SocketLimitSettings = { wsMaxPerToken: 0, wsMaxPerAddress: 0, wsMessageRate: 0, wsMessageBurst: 0 }

export class ConnectionLimits {
  private readonly byToken = new Map<string, number>()
  private readonly byAddress = new Map<string, number>()

  constructor(readonly settings: SocketLimitSettings) {}

  /**
   * Count a socket about to open for `credential` (the bearer token, or for a socket without one
   * the capability in its address) from `address`: its lease, or the 429 to refuse it with.
   */
  admit(credential: string, address: string): SocketLease | ApiError {
    const { wsMaxPerToken: perToken, wsMaxPerAddress: perAddress } = this.settings
    // Hashed: the map holds no token, and its keys have one size whatever the client sent.
    const token = createHash('sha256').update(credential).digest('base64')
    const t = this.byToken.get(token) ?? 0
    const a = this.byAddress.get(address) ?? 0
    if (perToken > 0 && t >= perToken) return tooMany('token', perToken)
    if (perAddress > 0 && a >= perAddress) return tooMany('address', perAddress)
    this.byToken.set(token, t + 1)
    this.byAddress.set(address, a + 1)
    return new SocketLease(this, token, address)
  }

  /** Give back a lease's places (SocketLease.release). */
  free(token: string, address: string): void {
    decrement(this.byToken, token)
    decrement(this.byAddress, address)
  }

  /** Distinct credentials and addresses with open sockets (tests and docs read these). */
  get size(): { tokens: number; addresses: number } {
    return { tokens: this.byToken.size, addresses: this.byAddress.size }
  }
}

/**
 * One socket's place in the counts and its message bucket. It travels in the socket's user data
 * (uWS copies the user data's properties at the upgrade, so this object is shared, not copied).
 */
export class SocketLease {
  private opened = false
  private released = false
  private tokens: number
  private at = Date.now()

  constructor(private readonly limits: ConnectionLimits, private readonly token: string, private readonly address: string) {
    this.tokens = limits.settings.wsMessageBurst
  }

  /** The socket opened (uWS `open`). */
  open(): void { this.opened = true }

  /** After `res.upgrade`: a socket that did not open (the client left meanwhile) gives its place back. */
  settle(): void { if (!this.opened) this.release() }

  /** The socket closed (uWS `close`, normal or abnormal). Idempotent. */
  release(): void {
    if (this.released) return
    this.released = true
    this.limits.free(this.token, this.address)
  }

  /** Spend one message from the bucket; false when it is empty (the socket floods). */
  allowMessage(now = Date.now()): boolean {
    const { wsMessageRate: rate, wsMessageBurst: burst } = this.limits.settings
    if (rate <= 0 || burst <= 0) return true
    this.tokens = Math.min(burst, this.tokens + ((now - this.at) / 1000) * rate)
    this.at = now
    if (this.tokens < 1) return false
    this.tokens -= 1
    return true
  }
}

function decrement(m: Map<string, number>, key: string): void {
  const n = (m.get(key) ?? 0) - 1
  if (n > 0) m.set(key, n)
  else m.delete(key)
}

function tooMany(which: 'token' | 'address', max: number): ApiError {
  const what = which === 'token' ? 'this credential' : 'this client address'
  return new ApiError('too_many_connections', `At most ${max} sockets may be open for ${what}; close one first.`, undefined, undefined, { limit: which, max })
}

const shared = new WeakMap<object, ConnectionLimits>()

/**
 * The one ConnectionLimits of a server: keyed by the services object every socket kind is mounted
 * with, so per-address counts span all socket kinds. Without settings (a bare logger): no limits.
 */
export function connectionLimitsFor(env: object): ConnectionLimits {
  let l = shared.get(env)
  if (!l) {
    const config = (env as { config?: Partial<SocketLimitSettings> }).config
    l = new ConnectionLimits({ ...NO_SOCKET_LIMITS, ...pick(config) })
    shared.set(env, l)
  }
  return l
}

function pick(c: Partial<SocketLimitSettings> | undefined): Partial<SocketLimitSettings> {
  if (!c) return {}
  const out: Partial<SocketLimitSettings> = {}
  for (const k of ['wsMaxPerToken', 'wsMaxPerAddress', 'wsMessageRate', 'wsMessageBurst'] as const) if (typeof c[k] === 'number') out[k] = c[k]
  return out
}
