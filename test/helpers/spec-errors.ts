/**
 * api-v1 §7 "Errors" as the spec writes it, for tests to check the server against (deliberately not
 * imported from src/errors.ts): these statuses always answer this `code`; the finer cause is `reason`.
 */
import { ERROR_CATALOG } from '../../src/errors.ts'

export const SPEC_TABLE: Readonly<Record<number, string>> = { 401: 'unauthenticated', 403: 'forbidden', 404: 'not_found', 422: 'validation_failed', 429: 'rate_limited' }

/** The `code` an answer whose `reason` is the catalog code `reason` must carry. */
export const specCode = (reason: string): string => SPEC_TABLE[(ERROR_CATALOG as Record<string, { status: number } | undefined>)[reason]?.status ?? 0] ?? reason
