/**
 * When to try a provider again (docs/providers.md "Retries"; issue 20 item 4). Pure: the outcome of
 * one attempt, the classification of an HTTP status, the Retry-After header and the wait before
 * the next attempt. The loop that sleeps and logs is delivery.ts.
 */

/** One attempt's result. `dead`: the push token or subscription will never work again (drop the device). */
export type Attempt =
  | { ok: true }
  | { ok: false; transient: boolean; reason: string; status?: number; retryAfterMs?: number; dead?: boolean }

export interface RetryPolicy {
  /** Base wait before retry 1, 2, …; its length is the number of retries. */
  delaysMs: readonly number[]
  /** Nothing starts after this much time since the first attempt. */
  deadlineMs: number
  /** A provider asking for a longer pause (Retry-After) than this is not waited for: give up. */
  maxRetryAfterMs: number
  /** ± fraction of each wait, so many senders failing together do not retry together. */
  jitter: number
}

/**
 * Sign-in codes and verification mail: someone waits for the answer, so one quick retry inside the
 * request, then `delivery_failed` (they may ask again; nothing arrives behind their back later).
 */
export const INTERACTIVE: RetryPolicy = { delaysMs: [500], deadlineMs: 10_000, maxRetryAfterMs: 2_000, jitter: 0.2 }

/** Pushes: nobody waits, so retries continue in the background with exponential back-off. */
export const BACKGROUND: RetryPolicy = { delaysMs: [1_000, 4_000, 16_000], deadlineMs: 120_000, maxRetryAfterMs: 60_000, jitter: 0.2 }

/**
 * The wait before retry number `retry` (1-based), or null to give up: no retries left, the provider
 * asked for a pause longer than the policy accepts, or the wait would cross the deadline.
 */
export function nextDelay(policy: RetryPolicy, retry: number, elapsedMs: number, retryAfterMs?: number, random: () => number = Math.random): number | null {
  const base = policy.delaysMs[retry - 1]
  if (base === undefined) return null
  let wait = base * (1 - policy.jitter + 2 * policy.jitter * random())
  if (retryAfterMs !== undefined) {
    if (retryAfterMs > policy.maxRetryAfterMs) return null
    wait = Math.max(wait, retryAfterMs)
  }
  if (elapsedMs + wait >= policy.deadlineMs) return null
  return Math.round(wait)
}

/** Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined
  const v = value.trim()
  if (/^\d+$/.test(v)) return Number(v) * 1000
  const at = Date.parse(v)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** Timeouts, throttling and server errors pass; any other refusal will be refused again. */
export const isTransientStatus = (status: number): boolean => status === 408 || status === 425 || status === 429 || status >= 500

/** An attempt that got an HTTP answer other than success. */
export function httpFailure(status: number, reason: string, retryAfter?: string | null, dead = false): Attempt {
  return { ok: false, transient: !dead && isTransientStatus(status), reason, status, retryAfterMs: parseRetryAfter(retryAfter), dead }
}

/** An attempt that got no answer (connection refused or reset, DNS, timeout): worth another try. */
export function networkFailure(err: unknown): Attempt {
  const e = err as { name?: string; code?: string; cause?: { code?: string } }
  const reason = e.name === 'TimeoutError' || e.name === 'AbortError' ? 'timeout' : `connection: ${e.cause?.code ?? e.code ?? e.name ?? 'error'}`
  return { ok: false, transient: true, reason }
}
