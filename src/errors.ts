/** The one error catalog (api-v1 §7): every failure leaves the server as this envelope. */

export const ERROR_CATALOG = {
  bad_request: { status: 400, message: 'The request is malformed.' },
  malformed_json: { status: 400, message: 'The request body is not valid JSON.' },
  unauthenticated: { status: 401, message: 'Authentication is missing, invalid or expired.' },
  forbidden: { status: 403, message: 'The token lacks the capability this action needs.' },
  not_found: { status: 404, message: 'The resource does not exist.' },
  route_not_found: { status: 404, message: 'No such route.' },
  method_not_allowed: { status: 405, message: 'The route does not accept this method.' },
  conflict: { status: 409, message: 'The request conflicts with the current state.' },
  idempotency_in_flight: { status: 409, message: 'A request with this idempotency key is still being processed.' },
  request_timeout: { status: 408, message: 'The request body did not arrive in time.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  uri_too_long: { status: 414, message: 'The request URL is too long.' },
  request_header_fields_too_large: { status: 431, message: 'The request headers are too large.' },
  unsupported_media_type: { status: 415, message: 'Send the body as application/json.' },
  validation_failed: { status: 422, message: 'The given data was invalid.' },
  idempotency_key_reused: { status: 422, message: 'This idempotency key was used with a different request body.' },
  category_not_empty: { status: 422, message: 'The category still has items; move or delete them first.' },
  invalid_transition: { status: 422, message: 'The requested state change is not allowed.' },
  quota_exceeded: { status: 422, message: 'The account has reached a limit on this kind of resource.' },
  store_closed: { status: 422, message: 'The store is closed or not taking orders now.' },
  // Fulfillment modes (docs/verticals.md): a pickup slot or appointment time at capacity.
  slot_full: { status: 409, message: 'That slot or time is fully booked; pick another.' },
  // Goods (docs/verticals.md): stock and fields that the store type does not use.
  out_of_stock: { status: 422, message: 'Not enough of an item is left in stock; nothing was ordered.' },
  not_for_store_type: { status: 422, message: 'This store type does not use that field or resource.' },
  // Delivery zones (docs/dispatch.md "Zones"): `errors.address` / `errors.items` name the field.
  outside_delivery_zone: { status: 422, message: 'This address is outside the store\'s delivery zones.' },
  below_minimum_order: { status: 422, message: 'The order is under the delivery zone\'s minimum.' },
  age_confirmation_required: { status: 422, message: 'The order holds age-restricted items: confirm the buyer\'s age with `age_confirmed: true`.' },
  theme_invalid: { status: 422, message: 'The theme has problems; nothing was stored.' },
  // Plans and accounts (docs/billing.md): `details` names the limit or feature.
  plan_limit_reached: { status: 403, message: 'The account\'s plan does not allow more of this kind of resource.' },
  feature_not_in_plan: { status: 403, message: 'The account\'s plan does not include this feature.' },
  account_suspended: { status: 403, message: 'This account is suspended.' },
  email_not_verified: { status: 403, message: 'Confirm your email address first: follow the link we sent.' },
  insufficient_funds: { status: 402, message: 'The wallet cannot pay for this; top it up first.' },
  // Deliveries (docs/drivers.md).
  already_claimed: { status: 409, message: 'Another driver has already taken this delivery.' },
  offer_expired: { status: 409, message: 'The offer has expired.' },
  offer_closed: { status: 409, message: 'The offer was already answered or withdrawn.' },
  driver_busy: { status: 409, message: 'The driver still has active deliveries; reassign or finish them first.' },
  off_shift: { status: 422, message: 'Start a shift before taking deliveries.' },
  pod_code_invalid: { status: 422, message: 'The delivery code is wrong.' },
  pod_code_locked: { status: 422, message: 'Too many wrong delivery codes; complete the delivery with a photo or ask the store.' },
  // Cash shifts and refunds (docs/operations.md "Cash shifts", "Refunds").
  shift_already_open: { status: 409, message: 'This register already has an open shift; close it first.' },
  shift_closed: { status: 409, message: 'This shift is already closed.' },
  refund_exceeds_paid: { status: 422, message: 'The refund is more than was paid and not yet refunded.' },
  refund_failed: { status: 502, message: 'The payment provider refused or failed the refund; nothing was refunded.' },
  // Reservations (docs/operations.md "Reservations").
  no_table_available: { status: 409, message: 'No table that seats this party is free at that time.' },
  table_has_bookings: { status: 409, message: 'The table has upcoming bookings; move or cancel them first.' },
  bookings_disabled: { status: 422, message: 'This store does not take bookings through the app.' },
  // Payments and split bills (docs/operations.md "Payments"): `errors` names the field where one fits.
  overpayment: { status: 422, message: 'The payment is more than the balance due.' },
  lines_already_paid: { status: 409, message: 'Some of these lines are already paid.' },
  online_payments_unavailable: { status: 422, message: 'Online payments are not available on this server.' },
  order_cancelled: { status: 409, message: 'The order is cancelled; it cannot be paid.' },
  order_already_paid: { status: 409, message: 'The order is already fully paid.' },
  payment_pending: { status: 409, message: 'An online checkout for this balance is still open; cancel it or wait for it.' },
  payment_signature_invalid: { status: 400, message: 'The payment provider webhook signature is missing, wrong or too old.' },
  // Staff and customer sign-in (docs/staff.md, docs/customers.md).
  two_factor_required: { status: 401, message: 'This account has two-factor sign-in on: send `totp_code` too.' },
  otp_invalid: { status: 422, message: 'The code is wrong.' },
  otp_expired: { status: 422, message: 'The code has expired or was already used; request a new one.' },
  device_not_enrolled: { status: 401, message: 'This device is not enrolled for PIN sign-in at this store; a manager enrolls it once.' },
  locked_out: { status: 429, message: 'Too many wrong PINs; this device is locked for a while.' },
  rate_limited: { status: 429, message: 'Too many requests.' },
  too_many_connections: { status: 429, message: 'Too many open connections for this credential or address.' },
  // The OAuth token address (docs/apps.md "OAuth"): RFC 6749 §5.2 codes, also sent as `error`.
  invalid_request: { status: 400, message: 'The token request is missing a parameter or repeats one.' },
  invalid_client: { status: 401, message: 'Unknown client or wrong client secret.' },
  invalid_grant: { status: 400, message: 'The code or refresh token is invalid, expired, used or issued to another client.' },
  unsupported_grant_type: { status: 400, message: 'Use grant_type authorization_code or refresh_token.' },
  invalid_scope: { status: 400, message: 'The scope asked for was not granted.' },
  invalid_target: { status: 400, message: 'The resource asked for is not one this server issues tokens for, or not the one of the grant.' },
  // Dynamic client registration (RFC 7591 §3.2.2; docs/mcp.md "Authorization").
  invalid_redirect_uri: { status: 400, message: 'A redirect URI of the client metadata is not acceptable.' },
  invalid_client_metadata: { status: 400, message: 'The client metadata is not acceptable.' },
  internal_error: { status: 500, message: 'Something went wrong on our side.' },
  not_implemented: { status: 501, message: 'The request needs something this server does not implement.' },
  unavailable: { status: 503, message: 'The server is not ready.' },
  delivery_failed: { status: 503, message: 'The message could not be sent; try again later.' },
} as const satisfies Record<string, { status: number; message: string }>

export type ErrorCode = keyof typeof ERROR_CATALOG
export type FieldErrors = Record<string, string[]>

/**
 * api-v1 §7's table: an error with one of these statuses answers exactly this `code`, and its catalog
 * code — the finer cause, e.g. `store_closed` — as `reason`. Any other status answers its catalog
 * code as both (docs/errors.md).
 */
export const TABLE_CODES = { 401: 'unauthenticated', 403: 'forbidden', 404: 'not_found', 422: 'validation_failed', 429: 'rate_limited' } as const satisfies Record<number, ErrorCode>

/** The `errors` key of a rule about the request as a whole, which no one field carries (docs/errors.md). */
export const WHOLE_REQUEST = 'body'

/** The table in words for docs: "unauthenticated for 401, …"; `q` quotes each code (a backtick in Markdown). */
export const tableInWords = (q = ''): string => Object.entries(TABLE_CODES).map(([status, code]) => `${q}${code}${q} for ${status}`).join(', ')

/** The §7 table's `code` of a status, if the table has the status. */
export const tableCode = (status: number): ErrorCode | undefined => (TABLE_CODES as Record<number, ErrorCode>)[status]

/** The envelope's `code` of a catalog code: the §7 table's code of its status, else the code itself. */
export const publicCode = (code: ErrorCode): ErrorCode => tableCode(ERROR_CATALOG[code].status) ?? code

/** The §7 envelope: `code` to branch on, `reason` the catalog code, `errors` on every 422, `details` where documented. */
export type ErrorEnvelope = { message: string; code: ErrorCode; reason: ErrorCode; errors?: FieldErrors; details?: Record<string, unknown> }

export const errorEnvelope = (reason: ErrorCode, message: string, errors?: FieldErrors, details?: Record<string, unknown>): ErrorEnvelope => ({
  message, code: publicCode(reason), reason,
  ...(errors ? { errors } : {}),
  ...(details ? { details } : {}),
})

/** A failure with a stable catalog `code`; the HTTP edge (and every other door) turns it into the §7 envelope. */
export class ApiError extends Error {
  readonly status: number
  /** Field path → messages; never empty on a 422: a rule no field carries is keyed `WHOLE_REQUEST`. */
  readonly errors?: FieldErrors
  constructor(
    readonly code: ErrorCode,
    message?: string,
    errors?: FieldErrors,
    readonly headers?: Record<string, string>,
    /** Machine-readable facts about the failure (e.g. which plan limit), sent as `details`. */
    readonly details?: Record<string, unknown>,
  ) {
    super(message ?? ERROR_CATALOG[code].message)
    this.status = ERROR_CATALOG[code].status
    const named = errors !== undefined && Object.keys(errors).length > 0
    this.errors = named || this.status !== 422 ? errors : { [WHOLE_REQUEST]: [this.message] }
  }

  toJSON(): ErrorEnvelope {
    return errorEnvelope(this.code, this.message, this.errors, this.details)
  }
}

export const notFound = (what = 'resource'): ApiError => new ApiError('not_found', `The ${what} does not exist.`)

/** A 422 naming one field, the common case for business-rule failures. */
export const invalidField = (field: string, message: string, code: ErrorCode = 'validation_failed'): ApiError =>
  new ApiError(code, message, { [field]: [message] })
