/**
 * Webhook retry policy (api-v1 §6 rules 2–3, §8): at most 5 attempts; the waits between them follow
 * a schedule (default about 1 min, 5 min, 15 min, 1 h) with ±20 % jitter so that endpoints that
 * failed together do not retry in lockstep. Pure: the caller passes the random number.
 */

/** api-v1 §8 "Webhook attempts: 5 per delivery". */
export const MAX_ATTEMPTS = 5

/** Jitter spreads each wait uniformly over [1 - JITTER, 1 + JITTER] of the scheduled value. */
export const JITTER = 0.2

/**
 * Milliseconds to wait after failed attempt number `attempt` (1-based) before the next one, or
 * null when no attempt is left. `schedule` holds seconds for the waits before attempts 2, 3, …;
 * a shorter schedule repeats its last entry. `rand` is uniform in [0, 1).
 */
export function retryDelayMs(attempt: number, schedule: readonly number[], rand: number, maxAttempts = MAX_ATTEMPTS): number | null {
  if (attempt >= maxAttempts || schedule.length === 0) return null
  const base = schedule[Math.min(attempt - 1, schedule.length - 1)]! * 1000
  return Math.round(base * (1 - JITTER + 2 * JITTER * rand))
}

/** What happens to a delivery after an attempt (api-v1 §6 rule 2: any 2xx is success). */
export type AttemptVerdict = { status: 'succeeded' } | { status: 'failed' } | { status: 'pending'; retryInMs: number }

export function verdict(ok: boolean, attempt: number, schedule: readonly number[], rand: number): AttemptVerdict {
  if (ok) return { status: 'succeeded' }
  const wait = retryDelayMs(attempt, schedule, rand)
  return wait === null ? { status: 'failed' } : { status: 'pending', retryInMs: wait }
}
