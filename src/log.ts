/** Structured logging through pino, and the one rule for keeping capabilities out of log lines. */
import { pino, type Logger } from 'pino'
import { TOKEN_PREFIX } from './auth/tokens.ts'

export type { Logger }

export function createLogger(level: string): Logger {
  return pino({ level, base: { svc: 'dispatch' } })
}

/**
 * Path segments that follow one of these hold a capability token: the track token of
 * `{base_url}/track/{token}`, `{base_url}/ws/track/{token}` and `{site_url}/t/{token}`
 * (docs/realtime.md). Whoever reads the log must not be able to follow the order. Likewise the
 * one-time nonce of `{base_url}/app/handoff/{nonce}` (docs/app-shell.md), which opens a web session.
 */
const CAPABILITY_PARENTS = new Set(['track', 't', 'handoff', 'verify-email'])
/** Any segment that looks like one of our tokens (family prefix, api-v1 §5), wherever it was put. */
const TOKEN_LIKE = new RegExp(`^(${Object.values(TOKEN_PREFIX).map((p) => p.slice(0, -1)).join('|')})(_|%5f)`, 'i')

export const REDACTED = '[redacted]'

/**
 * A request path fit for a log line: capability segments replaced by `[redacted]`, and the query
 * dropped (it may carry `?token=` or `api_token=`). Every place that logs a path uses this.
 */
export function redactPath(path: string): string {
  const q = path.search(/[?#]/)
  const bare = q === -1 ? path : path.slice(0, q)
  let parent = ''
  return bare.split('/').map((seg) => {
    if (seg === '') return seg
    const secret = CAPABILITY_PARENTS.has(parent.toLowerCase()) || TOKEN_LIKE.test(seg)
    parent = seg
    return secret ? REDACTED : seg
  }).join('/')
}
