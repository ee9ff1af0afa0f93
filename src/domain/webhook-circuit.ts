/**
 * The circuit breaker of one webhook endpoint (docs/webhooks.md "Circuit breaker"; the pattern of
 * Nygard's "Release It!"). Closed: deliveries go out. After `failures` failed attempts in a row it
 * opens: nothing is attempted (deliveries stay pending) until `openUntil`, then one delivery goes
 * out as a probe (half-open). A success closes it; a failed probe opens it again for twice as long,
 * up to MAX_COOLDOWN_FACTOR × the first cool-down. An endpoint whose circuit is open and that has
 * failed continuously (no success since `failingSince`) for `disableAfterMs` is disabled until its
 * owner resumes it. Pure: the caller passes the time.
 */

export interface CircuitPolicy {
  /** Consecutive failed attempts that open the circuit. */
  failures: number
  /** Wait before the first probe, ms; doubles after each failed probe. */
  cooldownMs: number
  /** Continuous failure that disables the endpoint, ms. */
  disableAfterMs: number
}

/** The cool-down stops doubling at this multiple of the first one. */
export const MAX_COOLDOWN_FACTOR = 16

export interface Circuit {
  /** Failed attempts in a row since the last success. */
  failures: number
  /** The first failure after the last success (ms since the epoch), or null. */
  failingSince: number | null
  /** Open: no attempt before this time (ms), then one probe. Null: closed. */
  openUntil: number | null
  /** Failed probes since the circuit opened. */
  probesFailed: number
  /** Disabled: nothing is sent until the owner resumes the endpoint. */
  disabled: boolean
}

export const closedCircuit = (): Circuit => ({ failures: 0, failingSince: null, openUntil: null, probesFailed: 0, disabled: false })

/** Milliseconds an open circuit waits after `probesFailed` failed probes. */
export function cooldown(probesFailed: number, p: CircuitPolicy): number {
  return p.cooldownMs * Math.min(MAX_COOLDOWN_FACTOR, 2 ** probesFailed)
}

/**
 * The circuit after an attempt finished at `now`. `probe`: it was the half-open probe. A failure
 * that arrives while the circuit is already open (an attempt started before it opened) only counts.
 */
export function afterAttempt(c: Circuit, ok: boolean, probe: boolean, now: number, p: CircuitPolicy): Circuit {
  // A success closes the circuit; a disabled endpoint stays disabled until its owner resumes it.
  if (ok) return { ...closedCircuit(), disabled: c.disabled }
  const next: Circuit = { ...c, failures: c.failures + 1, failingSince: c.failingSince ?? now }
  if (c.openUntil !== null && probe) {
    next.probesFailed = c.probesFailed + 1
    next.openUntil = now + cooldown(next.probesFailed, p)
  } else if (c.openUntil === null && next.failures >= p.failures) {
    next.probesFailed = 0
    next.openUntil = now + cooldown(0, p)
  }
  if (next.openUntil !== null && now - next.failingSince! >= p.disableAfterMs) next.disabled = true
  return next
}

/** How many attempts may start now: unlimited when closed, one probe when open and due, else none. */
export function attemptsAllowed(c: Circuit, probeInFlight: boolean, now: number): number {
  if (c.disabled) return 0
  if (c.openUntil === null) return Number.POSITIVE_INFINITY
  return !probeInFlight && now >= c.openUntil ? 1 : 0
}

/** The endpoint's state as the API shows it (api-v1 §2.7 extension, docs/webhooks.md). */
export type EndpointStateName = 'active' | 'paused' | 'circuit_open' | 'disabled'

export function stateName(e: { disabled: boolean; paused: boolean; open: boolean }): EndpointStateName {
  if (e.disabled) return 'disabled'
  if (e.paused) return 'paused'
  return e.open ? 'circuit_open' : 'active'
}
