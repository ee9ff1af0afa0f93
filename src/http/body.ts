/** Reading a request body with a size limit (uWS has none of its own). */
import type { HttpResponse } from 'uWebSockets.js'
import { ApiError } from '../errors.ts'

/**
 * Resolve the whole body as one Buffer, or reject with 413 as soon as it exceeds `limit`. The
 * `onData` callback never throws (a throw would reach uWS): any failure rejects instead.
 */
export function readBody(res: HttpResponse, limit: number, declaredLength: number | null): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (declaredLength !== null && declaredLength > limit) {
      reject(new ApiError('payload_too_large', `The request body must be at most ${limit} bytes.`))
      return
    }
    const chunks: Buffer[] = []
    let size = 0
    let failed = false
    res.onData((chunk, isLast) => {
      if (failed) return
      try {
        size += chunk.byteLength
        if (size > limit) {
          failed = true
          reject(new ApiError('payload_too_large', `The request body must be at most ${limit} bytes.`))
          return
        }
        // uWS neuters the chunk after this callback returns: copy it.
        chunks.push(Buffer.from(chunk.slice(0)))
        if (isLast) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size))
      } catch (err) {
        failed = true
        reject(err)
      }
    })
  })
}
