/**
 * What a suspended account's callers are told (docs/billing.md "Suspension", issue 13 item 4). Its
 * tokens of every family are refused by the account gate around every authenticator
 * (src/auth/account-gate.ts); its public routes and pages say the store is unavailable.
 */
import { ApiError } from '../errors.ts'

/** What a public page or public route of a suspended account's store answers (403, same code). */
export const storeUnavailable = (): ApiError => new ApiError('account_suspended', 'This store is unavailable.')

export const accountSuspended = (): ApiError =>
  new ApiError('account_suspended', 'This account is suspended; its tokens are refused until it is unsuspended. Its data is kept.')
