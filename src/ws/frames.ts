/**
 * Frames every socket kind shares (docs/realtime.md "Errors"): a bad frame is answered with an
 * error frame and the socket stays open; it never crashes the server or the connection.
 */
import type { FieldErrors } from '../errors.ts'

/** `bad_frame` (not JSON/MessagePack, or not an object), `unknown_type`, `validation_failed`, `internal_error`. */
export type FrameErrorCode = 'bad_frame' | 'unknown_type' | 'validation_failed' | 'internal_error'

export function errorFrame(code: FrameErrorCode, message: string, errors?: FieldErrors, seq?: number | null) {
  return { type: 'error', code, message, ...(errors ? { errors } : {}), ...(seq != null ? { seq } : {}) }
}
