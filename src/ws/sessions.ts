/**
 * Revocation reaches open sockets (docs/realtime.md "Close codes"). HTTP looks a token up on every
 * request, so a revoked token answers 401 at once; a socket authenticates once, at its upgrade.
 * This registry remembers the credential of every authenticated socket and re-resolves it through
 * the same authenticator as HTTP (`svc.auth`) whenever credentials may have changed:
 *
 * - after an in-process change (staff admin, staff logout, …): `revalidate(subject)` re-checks
 *   only the credentials of sockets naming that subject (a staff member, a token, a driver, a store);
 * - after another process wrote the database (the CLI's `dispatch token revoke`): SQLite's
 *   `PRAGMA data_version` changes only when *another* connection commits (sqlite.org/pragma.html
 *   #pragma_data_version), so polling it costs one pragma per tick and fires exactly for those
 *   writes; then every distinct open credential is re-resolved once;
 * - when a credential's own expiry passes (owner tokens with `expires_at`).
 *
 * A socket that fails its check is closed with a code from `CLOSE`. Nothing here runs per frame or
 * per published position: the cost is one indexed lookup per distinct credential per re-check.
 */
import type { WebSocket } from 'uWebSockets.js'
import type { Db } from '../storage/db.ts'
import type { Logger } from '../log.ts'
import type { Services } from '../services.ts'
import type { Principal } from '../auth/principals.ts'
import { sha256Hex } from '../auth/tokens.ts'
import { CLOSE, refusedByAccount, type CloseVerdict } from './frames.ts'
import { ApiError } from '../errors.ts'
import type { LiveSocket, SessionFamily, SessionSpec } from './socket.ts'
import type { SocketBehavior } from './guard.ts'

type Ws = WebSocket<LiveSocket>

/** How often the database is asked whether another process wrote it (and expiries are due). */
export const WATCH_INTERVAL_MS = 500

/**
 * Credentials re-resolved per event-loop turn in a full re-check: one costs about 8 µs here, so
 * 10,000 open driver sockets would stall the loop ~80 ms at once; in slices of 256 no turn takes
 * more than ~2 ms.
 */
const SWEEP_SLICE = 256

/** Subject names shared by the sockets that register them and the callers that name them. */
export const subject = {
  staff: (id: number) => `staff:${id}`,
  staffToken: (id: number) => `staff-token:${id}`,
  driver: (id: number) => `driver:${id}`,
  owner: (id: number) => `owner:${id}`,
  store: (id: number) => `store:${id}`,
}

/** Build a socket's session (call in the upgrade, from what authenticated it). */
export function session(
  family: SessionFamily, bearer: string, subjects: readonly string[], check: SessionSpec['check'], expiresAt: string | null = null,
): SessionSpec {
  const at = expiresAt === null ? null : Date.parse(expiresAt)
  return { family, bearer, subjects, check, expiresAt: at === null || Number.isNaN(at) ? null : at }
}

/** One distinct credential (family + token) and the sockets opened with it. */
interface Credential { family: SessionFamily; bearer: string; expiresAt: number | null; sockets: Set<Ws> }

export interface SessionDeps { auth: Services['auth']; db: Db; log: Logger }

export class SocketSessions {
  private readonly creds = new Map<string, Credential>()
  private readonly keyOf = new WeakMap<LiveSocket, string>()
  private deps: SessionDeps | null = null
  private dataVersion: number | null = null
  private nextExpiry = Infinity
  /** Credential keys still to re-check in the running full re-check, if one runs. */
  private sweep: string[] | null = null
  private stopped = false
  /** Re-checks run, credentials re-resolved, sockets closed (tests and docs read these). */
  readonly stats = { rechecks: 0, resolved: 0, closed: 0 }

  /** Start watching the database for other processes' writes; returns the stop function. */
  start(deps: SessionDeps, intervalMs = WATCH_INTERVAL_MS): () => void {
    // Started again after a stop (a replica's sockets re-checked on a new view of its file): live again.
    this.stopped = false
    this.deps = deps
    this.dataVersion = this.readDataVersion()
    const timer = setInterval(() => this.tick(), intervalMs)
    timer.unref()
    return () => {
      this.stopped = true
      clearInterval(timer)
    }
  }

  /** Wrap a socket behavior so every socket opened with a session is registered until it closes. */
  track<T extends LiveSocket>(b: SocketBehavior<T>): SocketBehavior<T> {
    const { open, close } = b
    return {
      ...b,
      open: (ws) => {
        this.add(ws as unknown as Ws)
        return open?.(ws)
      },
      close: (ws, code, message) => {
        this.remove(ws as unknown as Ws)
        close?.(ws, code, message)
      },
    }
  }

  /** Open sockets with a registered credential. */
  get size(): number {
    let n = 0
    for (const c of this.creds.values()) n += c.sockets.size
    return n
  }

  /**
   * Re-resolve the credentials of open sockets and close those that no longer pass. With `subj`,
   * only credentials with a socket naming it, at once (a handful); without, every open credential,
   * a slice per event-loop turn (see SWEEP_SLICE).
   */
  revalidate(subj?: string): void {
    if (!this.deps || this.stopped) return
    this.stats.rechecks++
    if (subj === undefined) return this.sweepAll()
    for (const c of [...this.creds.values()]) {
      if ([...c.sockets].some((ws) => ws.getUserData().session?.subjects.includes(subj))) this.recheck(c)
    }
  }

  /** Re-check every open credential; a later call restarts the list so all see the newest state. */
  private sweepAll(): void {
    const running = this.sweep !== null
    this.sweep = [...this.creds.keys()]
    if (running) return
    const slice = () => {
      if (this.stopped || !this.sweep) return void (this.sweep = null)
      for (const key of this.sweep.splice(0, SWEEP_SLICE)) {
        const c = this.creds.get(key)
        if (c) this.recheck(c)
      }
      if (this.sweep.length > 0) setImmediate(slice)
      else {
        this.sweep = null
        this.recomputeExpiry()
      }
    }
    slice()
  }

  private add(ws: Ws): void {
    const d = ws.getUserData()
    const s = d.session
    if (!s) return
    const key = `${s.family}:${sha256Hex(s.bearer)}`
    let c = this.creds.get(key)
    if (!c) this.creds.set(key, (c = { family: s.family, bearer: s.bearer, expiresAt: s.expiresAt, sockets: new Set() }))
    c.sockets.add(ws)
    this.keyOf.set(d, key)
    if (s.expiresAt !== null) this.nextExpiry = Math.min(this.nextExpiry, s.expiresAt)
  }

  private remove(ws: Ws): void {
    const d = ws.getUserData()
    const key = this.keyOf.get(d)
    if (key === undefined) return
    this.keyOf.delete(d)
    const c = this.creds.get(key)
    if (!c) return
    c.sockets.delete(ws)
    if (c.sockets.size === 0) this.creds.delete(key)
  }

  /** Resolve one credential once; check each of its sockets against the principal. */
  private recheck(c: Credential): void {
    const { auth, log } = this.deps!
    let p: Principal | null
    try {
      this.stats.resolved++
      p = (auth[c.family] as (input: { headers: Record<string, string>; query: Record<string, string>; bearer: string }) => Principal | null)(
        { headers: {}, query: {}, bearer: c.bearer },
      )
    } catch (err) {
      // The account no longer admits the credential (src/auth/account-gate.ts): close its sockets.
      if (err instanceof ApiError && err.status === 403) return this.closeAll(c, refusedByAccount(err))
      // A failed lookup proves nothing about the credential: keep the sockets, try again next time.
      log.error({ err, family: c.family }, 'socket credential re-check failed')
      return
    }
    // Resolved after its expiry passed: the token's lifetime is not what we thought; stop sweeping it.
    if (p && c.expiresAt !== null && c.expiresAt <= Date.now()) c.expiresAt = null
    for (const ws of [...c.sockets]) {
      const d = ws.getUserData()
      if (d.closed) continue
      let verdict: CloseVerdict | null
      try {
        verdict = p ? d.session!.check(p) : CLOSE.revoked
      } catch (err) {
        log.error({ err, socket: d.id }, 'socket permission re-check failed')
        continue
      }
      if (!verdict) continue
      log.info({ socket: d.id, family: c.family, code: verdict.code, reason: verdict.reason }, 'socket closed: credential no longer allows it')
      this.stats.closed++
      try { ws.end(verdict.code, verdict.reason) } catch { /* closed meanwhile */ }
    }
  }

  private closeAll(c: Credential, verdict: CloseVerdict): void {
    for (const ws of [...c.sockets]) {
      if (ws.getUserData().closed) continue
      this.deps!.log.info({ socket: ws.getUserData().id, family: c.family, code: verdict.code, reason: verdict.reason }, 'socket closed: credential no longer allows it')
      this.stats.closed++
      try { ws.end(verdict.code, verdict.reason) } catch { /* closed meanwhile */ }
    }
  }

  private tick(): void {
    const v = this.readDataVersion()
    if (v !== null && v !== this.dataVersion) {
      this.dataVersion = v
      return this.revalidate() // also re-checks whatever has expired
    }
    const now = Date.now()
    if (this.nextExpiry > now) return
    this.stats.rechecks++
    for (const c of [...this.creds.values()]) if (c.expiresAt !== null && c.expiresAt <= now) this.recheck(c)
    this.recomputeExpiry()
  }

  private recomputeExpiry(): void {
    this.nextExpiry = Infinity
    for (const c of this.creds.values()) if (c.expiresAt !== null) this.nextExpiry = Math.min(this.nextExpiry, c.expiresAt)
  }

  private readDataVersion(): number | null {
    try {
      return this.deps!.db.pragma('data_version', { simple: true }) as number
    } catch {
      return null // closing: the database is gone
    }
  }
}
