/**
 * Frames and close codes every socket kind shares (docs/realtime.md "Errors", "Close codes"): a
 * bad frame is answered with an error frame and the socket stays open; it never crashes the
 * server or the connection.
 */
import { ApiError } from '../errors.ts'
import type { FieldErrors } from '../errors.ts'

/** `bad_frame` (not JSON/MessagePack, or not an object), `unknown_type`, `validation_failed`, `internal_error`. */
export type FrameErrorCode = 'bad_frame' | 'unknown_type' | 'validation_failed' | 'internal_error'

/** A frame the socket itself refuses: these codes name no finer cause, so `reason` is the code (docs/realtime.md "Errors"). */
export function errorFrame(code: FrameErrorCode, message: string, errors?: FieldErrors, seq?: number | null) {
  return { type: 'error' as const, code, reason: code, message, ...(errors ? { errors } : {}), ...(seq != null ? { seq } : {}) }
}

/** A frame an operation refused: the HTTP answer's §7 envelope (`code`, `reason`, `errors`, …) and the frame's `seq`. */
export const refusalFrame = (e: ApiError, seq: number | null) => ({ type: 'error' as const, ...e.toJSON(), seq })

/**
 * Close codes the server sends (docs/realtime.md "Close codes"). 1009 and 1011 are RFC 6455
 * §7.4.1's; the 4xxx codes (the private range, RFC 6455 §7.4.2) mirror the HTTP status a new
 * upgrade with the same credential would get: 4001 ~ 401, 4003 ~ 403, 4004 ~ 404.
 */
export const CLOSE = {
  /** A message larger than the socket's documented limit. */
  tooBig: { code: 1009, reason: 'message_too_big' },
  /** The server failed while handling this socket; reconnect. */
  internal: { code: 1011, reason: 'internal_error' },
  /** The credential stopped being valid: revoked, expired, signed out, rotated, or its member/driver deleted. */
  revoked: { code: 4001, reason: 'token_revoked' },
  /** The credential is valid but no longer carries the permission or capability this socket needs. */
  forbidden: { code: 4003, reason: 'permission_removed' },
  /** What the socket watches is gone, or no longer the credential's (a store). */
  gone: { code: 4004, reason: 'not_found' },
  /** More messages than WS_MESSAGE_BURST at once / WS_MESSAGE_RATE per second (docs/limits.md); 4029 ~ HTTP 429. */
  flood: { code: 4029, reason: 'rate_limited' },
  /** A frame nesting arrays/maps deeper than MAX_NESTING (docs/limits.md): RFC 6455 §7.4.1 policy violation. */
  tooDeep: { code: 1008, reason: 'nesting_too_deep' },
  /** A frame past the other limits of JSON_SHAPE: members of a map, elements of an array, values in all (docs/limits.md). */
  tooComplex: { code: 1008, reason: 'frame_too_complex' },
} as const

export interface CloseVerdict { readonly code: number; readonly reason: string }

/**
 * The credential's account no longer admits it (src/auth/account-gate.ts: the account was suspended,
 * or an app token's account lost the `apps` feature): 4003 with the refusal's code as the reason
 * (`account_suspended`, `feature_not_in_plan`); reconnecting answers that 403 until it is undone.
 */
export const refusedByAccount = (err: ApiError): CloseVerdict => ({ code: 4003, reason: err.code })

/**
 * The policy's answer for an open socket (src/auth/policy.ts), as a close code: null while the
 * principal may still do what the socket does, else the code matching the refusal an upgrade would
 * get now (401 → 4001, 403 → 4003, 404 → 4004).
 */
export function policyVerdict(check: () => void): CloseVerdict | null {
  try {
    check()
    return null
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    return err.status === 403 ? CLOSE.forbidden : err.status === 404 ? CLOSE.gone : CLOSE.revoked
  }
}
