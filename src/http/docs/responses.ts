/**
 * The reusable responses and headers of the OpenAPI document (issue 20 item 7): one response per
 * error status with the codes the catalog (src/errors.ts) answers under it, and which of them a
 * route can answer, derived from what the route declares (auth, capability, path ids, body, …).
 * `4XX` stays on every operation as the catch-all api-v1 §4.1 promises (405, 402, …).
 */
import { ERROR_CATALOG, errorEnvelope, tableCode, WHOLE_REQUEST, type ErrorCode } from '../../errors.ts'
import { isIdParam, pathParams, type Route } from '../route.ts'
import { fullPath } from '../server.ts'
import { isLocalRead } from '../replica-read-paths.ts'

/** Response headers (names exactly as src/http/server.ts and op-pipeline.ts send them). */
export const HEADERS: Record<string, { description: string; schema: Record<string, unknown> }> = {
  'X-Request-Id': { description: 'Correlates this response with the server logs: the caller\'s own `X-Request-Id` (1-64 of `[A-Za-z0-9_.-]`) or a generated UUID.', schema: { type: 'string' } },
  'X-RateLimit-Limit': { description: 'Requests allowed per minute for this token (or client address) (api-v1 §8).', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } },
  'Idempotent-Replayed': { description: '`true` when this answer is the stored answer of an earlier request with the same `Idempotency-Key` (nothing was created again).', schema: { type: 'string', enum: ['true'] } },
  Location: { description: 'Where the browser goes next.', schema: { type: 'string' } },
  'X-Dispatch-Served-By': { description: 'Cluster mode only (docs/cluster.md "Public reads on replicas"): this answer came from the database of this replica (its `NODE_ID`), not from the primary; absent on answers of the primary, also when a replica passed the request on.', schema: { type: 'string' } },
  'X-Dispatch-Lag-Ms': { description: 'With `X-Dispatch-Served-By`: how far behind the primary that replica was when it answered, in ms (at most `CLUSTER_READ_LAG_MS`; 0 when caught up).', schema: { type: 'integer' } },
}
const header = (name: keyof typeof HEADERS & string) => ({ $ref: `#/components/headers/${name}` })

/** Headers on every answer of a matched route: the request id and the rate-limit budget (api-v1 §8). */
export const commonHeaders = () => ({ 'X-Request-Id': header('X-Request-Id'), 'X-RateLimit-Limit': header('X-RateLimit-Limit'), 'X-RateLimit-Remaining': header('X-RateLimit-Remaining') })

/** Component name and meaning of each documented error status. */
const STATUSES: Record<string, { name: string; when: string }> = {
  400: { name: 'BadRequest', when: 'The request is malformed (bad JSON, broken framing).' },
  401: { name: 'Unauthorized', when: 'No valid credential, or the sign-in failed.' },
  402: { name: 'PaymentRequired', when: 'The wallet cannot pay for this.' },
  403: { name: 'Forbidden', when: 'The credential is valid but may not do this (capability, permission, scope, plan, suspended account).' },
  404: { name: 'NotFound', when: 'The resource does not exist or belongs to someone else (api-v1 §1: never 403 for others\' data).' },
  409: { name: 'Conflict', when: 'The state changed meanwhile, or a request with this idempotency key is still running.' },
  413: { name: 'PayloadTooLarge', when: 'The body is larger than `BODY_LIMIT_BYTES`.' },
  415: { name: 'UnsupportedMediaType', when: 'The body is not `application/json` (or another type the operation lists).' },
  422: { name: 'ValidationFailed', when: 'The input is invalid or a business rule refused it; `errors` maps fields to messages.' },
  429: { name: 'TooManyRequests', when: 'A rate limit was hit; wait `Retry-After` seconds.' },
}

const codesOf = (status: number): ErrorCode[] => (Object.keys(ERROR_CATALOG) as ErrorCode[]).filter((c) => ERROR_CATALOG[c].status === status)
const codeList = (codes: ErrorCode[]) => codes.map((c) => `- \`${c}\`: ${ERROR_CATALOG[c].message}`).join('\n')
/** What the `code` and `reason` of a status are (api-v1 §7's table, docs/errors.md). */
const codesText = (status: number, codes: ErrorCode[]) => {
  const code = tableCode(status)
  return code ? `\`code\` is always \`${code}\`; \`reason\` is one of:\n${codeList(codes)}` : `Codes (\`code\` and \`reason\` alike):\n${codeList(codes)}`
}
const errorContent = (reason: ErrorCode, errors?: Record<string, string[]>) => ({
  'application/json': { schema: { $ref: '#/components/schemas/Error' }, example: errorEnvelope(reason, ERROR_CATALOG[reason].message, errors) },
})

const CLOSED = 'The store is closed now. It opens next at 2026-11-23T11:00:00+01:00 (Europe/Rome).'
/** The 422 example shows both kinds of `errors` keys: a field path, and a rule about the request as a whole. */
const UNPROCESSABLE = {
  'application/json': {
    schema: { $ref: '#/components/schemas/Error' },
    examples: {
      validation_failed: { summary: 'A field is invalid', value: errorEnvelope('validation_failed', ERROR_CATALOG.validation_failed.message, { 'items.0.quantity': ['Invalid value: Expected >=1 but received 0'] }) },
      store_closed: { summary: 'A business rule refused the request as a whole', value: errorEnvelope('store_closed', CLOSED, { [WHOLE_REQUEST]: [CLOSED] }, { reason: 'hours', opens_at: '2026-11-23T11:00:00+01:00' }) },
    },
  },
}

/** `components.responses` and `components.headers`, generated from the error catalog. */
export function responseComponents(): { responses: Record<string, unknown>; headers: Record<string, unknown> } {
  const responses: Record<string, unknown> = {}
  for (const [status, { name, when }] of Object.entries(STATUSES)) {
    const codes = codesOf(Number(status))
    responses[name] = {
      description: `${when} ${codesText(Number(status), codes)}`,
      headers: { ...commonHeaders(), ...(status === '429' ? { 'Retry-After': header('Retry-After') } : {}) },
      content: status === '422' ? UNPROCESSABLE : errorContent(codes[0]!),
    }
  }
  const server = (Object.keys(ERROR_CATALOG) as ErrorCode[]).filter((c) => ERROR_CATALOG[c].status >= 500)
  responses.ServerError = {
    description: `Server error (api-v1 §7 envelope; the details are logged with the request id). Codes (\`code\` and \`reason\` alike):\n${codeList(server)}`,
    headers: { 'X-Request-Id': header('X-Request-Id'), 'Retry-After': header('Retry-After') },
    content: errorContent('internal_error'),
  }
  responses.ClientError = {
    description: 'Any other client error, in the api-v1 §7 envelope (e.g. 405 `method_not_allowed`, 409 `conflict`). Clients branch on `code`, and on `reason` for the finer cause.',
    headers: commonHeaders(),
    content: errorContent('method_not_allowed'),
  }
  return { responses, headers: HEADERS }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const STATUS_OF_CODE = new Map(Object.entries(ERROR_CATALOG).map(([code, { status }]) => [code, status]))

/** A page: its handler answers in HTML, its own refusals included (`pageErrors`). */
export const isPage = (r: Route): boolean => Boolean(r.produces?.startsWith('text/html'))

/** What the HTTP door (src/http/server.ts) itself answers for `r` with the §7 envelope, before or around any handler. */
function doorStatuses(r: Route): Set<number> {
  const out = new Set<number>()
  if (r.body || r.form) [400, 413, 415].forEach((s) => out.add(s))
  if (r.body || r.query) out.add(422)
  // A missing or wrong credential; signed out of the web session, a page visit or a form post is sent to sign in (303) instead.
  if (r.auth !== 'none' && !(r.auth === 'session' && (r.method === 'GET' || r.form))) out.add(401)
  // A suspended account, a capability, permission or scope the credential lacks, a session write without its CSRF token.
  if (r.auth !== 'none') out.add(403)
  // An id that cannot exist (not a positive integer) is not found before anything runs.
  if (pathParams(r.path).some(isIdParam)) out.add(404)
  if (r.rateLimit !== false) out.add(429)
  return out
}

/** What an operation or a JSON handler may refuse with the envelope, derived from what `r` declares. A page answers its own as pages. */
function handlerStatuses(r: Route): Set<number> {
  const out = new Set<number>()
  if (isPage(r)) return out
  const write = WRITES.has(r.method)
  // Sign-in addresses (their own rate limit) answer 401 for wrong secrets.
  if (r.rateLimit) out.add(401)
  if (r.op?.feature) out.add(403)
  if (pathParams(r.path).length) out.add(404)
  if (write && r.op) [409, 422].forEach((s) => out.add(s))
  // Statuses an operation's own description names with a catalog code ("402 `insufficient_funds`").
  for (const m of `${r.description ?? ''}`.matchAll(/`([a-z_]+)`/g)) {
    const s = STATUS_OF_CODE.get(m[1]!)
    if (s && STATUSES[s]) out.add(s)
  }
  return out
}

/** A page's own error answer in `produces`, and the envelope as well where the door can answer the same status. */
function pageError(r: Route, status: number, meaning: string, envelopeToo: boolean): Record<string, unknown> {
  const door = STATUSES[status]
  return {
    description: envelopeToo && door ? `${meaning.replace(/\.?$/, '.')} Refused before the page runs: the api-v1 §7 envelope (${door.when})` : meaning,
    headers: { ...commonHeaders(), ...(status === 429 ? { 'Retry-After': header('Retry-After') } : {}) },
    content: {
      [r.produces ?? 'text/html; charset=utf-8']: { schema: { type: 'string' } },
      ...(envelopeToo ? { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } : {}),
    },
  }
}

/**
 * The error statuses `r` can answer: the envelope's as a `$ref` to its component, a page's own in
 * its `produces` (both media types where both can answer), plus `4XX` and `5XX`.
 */
export function errorResponses(r: Route): Record<string, unknown> {
  const envelope = new Set([...doorStatuses(r), ...handlerStatuses(r)])
  const own = r.pageErrors ?? {}
  const out: Record<string, unknown> = {}
  for (const s of [...new Set([...envelope, ...Object.keys(own).map(Number)])].sort()) {
    const meaning = own[s]
    out[String(s)] = meaning !== undefined ? pageError(r, s, meaning, envelope.has(s)) : { $ref: `#/components/responses/${STATUSES[s]!.name}` }
  }
  out['4XX'] = { $ref: '#/components/responses/ClientError' }
  out['5XX'] = { $ref: '#/components/responses/ServerError' }
  return out
}

/** Headers of the success answer: the common ones, `Idempotent-Replayed` where an `Idempotency-Key` is taken. */
export function successHeaders(r: Route): Record<string, unknown> {
  const idempotent = (r.headers ?? []).some((h) => h.name.toLowerCase() === 'idempotency-key')
  // A public read a cluster replica may answer from its own database says so (src/http/replica-read-paths.ts).
  const replica = r.method === 'GET' && isLocalRead(fullPath(r)) ? { 'X-Dispatch-Served-By': header('X-Dispatch-Served-By'), 'X-Dispatch-Lag-Ms': header('X-Dispatch-Lag-Ms') } : {}
  return { ...commonHeaders(), ...(idempotent ? { 'Idempotent-Replayed': header('Idempotent-Replayed') } : {}), ...replica }
}

/**
 * Browser redirects, 303 with `Location`: a signed-out visit or form post of a session page (to the
 * sign-in page), a form post (to the next page), and what the route declares (`redirect`, `status: 303`).
 */
export function redirectResponse(r: Route): Record<string, unknown> {
  const when: string[] = []
  if (r.redirect) when.push(r.redirect)
  if (r.auth === 'session' && (r.method === 'GET' || r.form)) when.push('Signed out: to the sign-in page, which comes back here.')
  if (r.form) when.push('After the form post: to the next page.')
  if (when.length === 0 && r.status !== 303) return {}
  return { 303: { description: `See \`Location\`. ${when.join(' ') || r.summary}`, headers: { Location: header('Location'), ...commonHeaders() } } }
}
