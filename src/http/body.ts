/** Reading a request body with a size limit and a deadline (uWS has neither of its own; docs/limits.md). */
import type { HttpResponse } from 'uWebSockets.js'
import { ApiError } from '../errors.ts'
import { jsonShapeProblem, type ShapeLimit } from '../net/request-limits.ts'

/** BODY_TIMEOUT_MS's default: the whole body within 30 s of the handler starting to read it. */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000

/**
 * Resolve the whole body as one Buffer, or reject with 413 as soon as it exceeds `limit`, or with
 * 408 `request_timeout` when it is not complete `timeoutMs` after reading began. The deadline is
 * one total, never reset by arriving bytes: a client trickling a byte at a time (slowloris) keeps
 * neither the connection nor the buffered chunks longer than that. The `onData` callback never
 * throws (a throw would reach uWS): any failure rejects instead. Callers answer a 408 with
 * `close: true` — the rest of the body may still be on its way.
 */
export function readBody(res: HttpResponse, limit: number, declaredLength: number | null, timeoutMs = DEFAULT_BODY_TIMEOUT_MS): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (declaredLength !== null && declaredLength > limit) {
      reject(new ApiError('payload_too_large', `The request body must be at most ${limit} bytes.`))
      return
    }
    let chunks: Buffer[] = []
    let size = 0
    let failed = false
    const fail = (err: unknown) => {
      failed = true
      chunks = [] // what arrived so far is not kept while the client is answered
      clearTimeout(timer)
      reject(err)
    }
    // unref: a client that never finishes its body must not hold the process open at shutdown.
    const timer = setTimeout(() => {
      if (!failed) fail(new ApiError('request_timeout', `The request body must arrive within ${timeoutMs} ms.`))
    }, timeoutMs)
    timer.unref()
    res.onData((chunk, isLast) => {
      if (failed) return
      try {
        size += chunk.byteLength
        if (size > limit) return fail(new ApiError('payload_too_large', `The request body must be at most ${limit} bytes.`))
        // uWS neuters the chunk after this callback returns: copy it.
        chunks.push(Buffer.from(chunk.slice(0)))
        if (isLast) {
          failed = true // settled: a late timer must not reject
          clearTimeout(timer)
          resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size))
        }
      } catch (err) {
        fail(err)
      }
    })
  })
}

/**
 * A JSON body, refused with 400 `bad_request` before parsing when its shape goes past JSON_SHAPE
 * (a byte scan, strings skipped), with 400 `malformed_json` when it does not parse.
 */
export function parseJsonBody(buf: Buffer): unknown {
  checkShape(buf)
  try { return JSON.parse(buf.toString('utf8')) as unknown } catch { throw new ApiError('malformed_json') }
}

const SHAPE_MESSAGES: Record<ShapeLimit, (max: number) => string> = {
  depth: (max) => `The JSON body nests arrays and objects deeper than ${max} levels.`,
  members: (max) => `An object of the JSON body has more than ${max} members.`,
  elements: (max) => `An array of the JSON body has more than ${max} elements.`,
  nodes: (max) => `The JSON body holds more than ${max} values.`,
}

/**
 * 400 `bad_request` for a JSON body past JSON_SHAPE (docs/limits.md "Body shape"), before anything
 * parses or validates it (also for the MCP addresses, which parse their own bodies). `details` names
 * the limit: `max_depth`, `max_members`, `max_elements` or `max_nodes`.
 */
export function checkShape(buf: Buffer): void {
  const p = jsonShapeProblem(buf)
  if (p) throw new ApiError('bad_request', SHAPE_MESSAGES[p.limit](p.max), undefined, undefined, { [`max_${p.limit}`]: p.max })
}

/** Fields of one urlencoded form body (docs/limits.md "Body shape"); no page has more than a few dozen. */
export const MAX_FORM_FIELDS = 1_000

/** An `application/x-www-form-urlencoded` body, refused with 400 `bad_request` past MAX_FORM_FIELDS before it is parsed. */
export function parseFormBody(buf: Buffer): URLSearchParams {
  let fields = buf.length > 0 ? 1 : 0
  for (let i = buf.indexOf(0x26); i !== -1; i = buf.indexOf(0x26, i + 1)) {
    if (++fields > MAX_FORM_FIELDS) throw new ApiError('bad_request', `A form has at most ${MAX_FORM_FIELDS} fields.`, undefined, undefined, { max_fields: MAX_FORM_FIELDS })
  }
  return new URLSearchParams(buf.toString('utf8'))
}

/** Whether a failure must also close the connection: the rest of a late body may still arrive. */
export const closesConnection = (err: unknown): boolean => err instanceof ApiError && err.code === 'request_timeout'
