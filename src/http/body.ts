/** Reading a request body with a size limit and a deadline (uWS has neither of its own; docs/limits.md). */
import type { HttpResponse } from 'uWebSockets.js'
import { ApiError } from '../errors.ts'
import { jsonTooDeep, MAX_NESTING } from '../net/request-limits.ts'

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
 * A JSON body, refused with 400 `bad_request` before parsing when it nests arrays/objects deeper
 * than MAX_NESTING (a byte scan, strings skipped), with 400 `malformed_json` when it does not parse.
 */
export function parseJsonBody(buf: Buffer): unknown {
  checkNesting(buf)
  try { return JSON.parse(buf.toString('utf8')) as unknown } catch { throw new ApiError('malformed_json') }
}

/** 400 `bad_request` for JSON nested deeper than MAX_NESTING (also for the MCP addresses, which parse their own bodies). */
export function checkNesting(buf: Buffer): void {
  if (jsonTooDeep(buf, MAX_NESTING)) {
    throw new ApiError('bad_request', `The JSON body nests arrays and objects deeper than ${MAX_NESTING} levels.`, undefined, undefined, { max_depth: MAX_NESTING })
  }
}

/** Whether a failure must also close the connection: the rest of a late body may still arrive. */
export const closesConnection = (err: unknown): boolean => err instanceof ApiError && err.code === 'request_timeout'
