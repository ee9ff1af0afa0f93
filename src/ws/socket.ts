/** What every WebSocket's user data carries, whatever its kind (src/ws/upgrade.ts fills it in). */
import type { Principal } from '../auth/principals.ts'
import type { SocketData } from './hub.ts'
import type { CloseVerdict } from './frames.ts'
import type { SocketLease } from '../net/connection-limits.ts'

export interface LiveSocket extends SocketData {
  /** Set first thing in `close`: uWS throws on any use of a closed socket. */
  closed: boolean
  /** The upgrade request's id (X-Request-Id): names the socket in logs. */
  id: string
  /** The client's address at the upgrade (TRUST_PROXY applied, src/net/client-address.ts). */
  ip?: string
  /** The credential the socket was opened with, re-checked when credentials change (src/ws/sessions.ts). */
  session?: SessionSpec
  /** Its place in the per-credential and per-address counts and its message bucket (src/net/connection-limits.ts). */
  lease?: SocketLease
}

/** Families that open sockets with a bearer token. */
export type SessionFamily = 'owner' | 'driver' | 'staff'

export interface SessionSpec {
  family: SessionFamily
  /** Kept in memory only, for re-resolving through the same authenticator as the upgrade. */
  bearer: string
  /** Names a targeted re-check may use: `staff:<id>`, `staff-token:<id>`, `driver:<id>`, `owner:<id>`, `store:<id>`. */
  subjects: readonly string[]
  /** When the credential expires by itself (ms since the epoch), if it does. */
  expiresAt: number | null
  /** Whether the re-resolved principal still allows this socket: null, or how to close it. */
  check(p: Principal): CloseVerdict | null
}
