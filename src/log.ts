/** Structured logging through pino, and the one rule for keeping capabilities out of log lines. */
import { pino, type Logger } from 'pino'
import { TOKEN_PREFIX } from './auth/tokens.ts'

export type { Logger }

/**
 * The server's logger: JSON lines to stdout, or to `destination` (a file path or stream; tests
 * capture the log this way). Secrets never reach a line (issue 21 item 8, docs/running.md
 * "Secrets in logs"): request paths are logged through `redactPath`, bodies never are, and as a
 * last line of defence every written line is passed through `scrubSecrets`, and fields named like a
 * secret are censored wherever they are nested.
 */
export function createLogger(level: string, destination?: string | NodeJS.WritableStream): Logger {
  const dest = typeof destination === 'string' ? pino.destination({ dest: destination, sync: true }) : destination
  const opts = {
    level,
    base: { svc: 'dispatch' },
    redact: { paths: SECRET_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`]), censor: REDACTED },
    hooks: { streamWrite: scrubSecrets },
  }
  return dest ? pino(opts, dest as pino.DestinationStream) : pino(opts)
}

/** Field names whose value is a secret whatever logs it (an error's context, a header bag). */
const SECRET_FIELDS = ['authorization', 'cookie', '"set-cookie"', 'password', 'pin', 'otp', 'token', 'api_token', 'secret', 'totp_code', 'refresh_token', 'access_token', 'client_secret', 'device_key']

/** Our tokens by their family prefix (api-v1 §5), webhook secrets and PIN-device keys, anywhere in a line. */
const TOKEN_ANYWHERE = new RegExp(`\\b(?:${[...Object.values(TOKEN_PREFIX), 'whsec_', 'dsk_'].map((p) => p.slice(0, -1)).join('|')})_[A-Za-z0-9_+/=-]{8,}`, 'g')
/** Credentials in a query string, wherever a URL ends up in a line (an error message, a webhook URL). */
const QUERY_SECRET = /([?&](?:api_token|token|access_token|refresh_token|code|key|secret|password)=)[^&\s"#]*/gi

/** A serialized log line with every token-shaped string and query credential replaced. */
export function scrubSecrets(line: string): string {
  return line.replace(TOKEN_ANYWHERE, REDACTED).replace(QUERY_SECRET, `$1${REDACTED}`)
}

/**
 * Path segments that follow one of these hold a capability token: the track token of
 * `{base_url}/track/{token}`, `{base_url}/ws/track/{token}` and `{site_url}/t/{token}`
 * (docs/realtime.md). Whoever reads the log must not be able to follow the order. Likewise the
 * one-time nonce of `{base_url}/app/handoff/{nonce}` (docs/app-shell.md), which opens a web session,
 * and the emailed links `{site_url}/verify-email/{token}` and `{site_url}/reset-password/{token}`
 * (docs/dashboard.md; the second sets a password). test/log-redaction.test.ts checks every route
 * whose path carries a `{token}` or `{nonce}` is listed here.
 */
const CAPABILITY_PARENTS = new Set(['track', 't', 'handoff', 'verify-email', 'reset-password'])
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
