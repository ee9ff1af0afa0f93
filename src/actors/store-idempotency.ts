/**
 * The one owner of idempotent order creation's state (api-v1 §2.4; the rule: src/domain/idempotency.ts).
 * The create-order operation asks `idempotencyOf` for the request's key; the store actor's shell
 * keeps, per store, the keys whose commit is under way and reads and records the committed ones
 * (`idempotency_keys`, src/storage/orders.ts, through this module only); its pure transition turns
 * `decideIdempotency`'s answer into a replay or `idempotencyRefusal`.
 */
import { createHash } from 'node:crypto'
import { ApiError, ERROR_CATALOG, invalidField } from '../errors.ts'
import { chooseKey, idempotencySlot, websiteClientUuid, type Idempotency, type IdempotencyRecord, type KeyedRequest } from '../domain/idempotency.ts'
import type { Db } from '../storage/db.ts'
import { findIdempotency, insertIdempotency } from '../storage/orders.ts'

/** Point reads of committed keys (StoreDeps.idempotency), in the store actor's turn. */
export interface IdempotencyReads { find(scope: string, key: string): IdempotencyRecord | undefined }
export const idempotencyReads = (db: Db): IdempotencyReads => ({ find: (scope, key) => findIdempotency(db, scope, key) })

const sha256hex = (text: string): string => createHash('sha256').update(text).digest('hex')
const sha256url = (text: string): string => createHash('sha256').update(text).digest('base64url')

/** The request's scoped and hashed key, or null without one; a malformed key is 422 `validation_failed` keyed `Idempotency-Key`. */
export function idempotencyOf(r: KeyedRequest): Idempotency | null {
  const c = chooseKey(r, sha256hex)
  if (!c.ok) throw new ApiError('validation_failed', undefined, c.errors)
  return c.idem
}

/** The website checkout's `client_uuid` for cart `cartId` and the form as posted (src/domain/idempotency.ts `websiteClientUuid`). */
export const checkoutClientUuid = (cartId: string, form: readonly unknown[]): string => websiteClientUuid(cartId, form, sha256url)

/** The answer to a refused key: 409 for the same request still committing; 422 keyed by the header (as a malformed key) for another request. */
export const idempotencyRefusal = (kind: 'reused' | 'in_flight'): ApiError =>
  kind === 'in_flight'
    ? new ApiError('idempotency_in_flight')
    : invalidField('Idempotency-Key', ERROR_CATALOG.idempotency_key_reused.message, 'idempotency_key_reused')

/**
 * One store's keys (the store actor's shell holds one): those whose commit is under way (slot →
 * request hash), filled as an insert starts and emptied the moment it settles, so a message handled
 * before the commit finds the key here (409) and one handled after finds it committed (a replay).
 */
export class StoreIdempotency {
  private readonly pending = new Map<string, string>()

  constructor(private readonly reads: IdempotencyReads) {}

  /** The hash of the request whose commit holds `k` now, if any. */
  inFlight(k: Idempotency | null): string | undefined {
    return k === null ? undefined : this.pending.get(idempotencySlot(k))
  }

  /** `k`'s committed record, if any. */
  seen(k: Idempotency | null): IdempotencyRecord | undefined {
    return k === null ? undefined : this.reads.find(k.scope, k.key)
  }

  /** An insert with `k` starts: the key is in flight until `release` with the slot answered. */
  hold(k: Idempotency | null): string | null {
    if (k === null) return null
    const slot = idempotencySlot(k)
    this.pending.set(slot, k.hash)
    return slot
  }

  /** The insert settled (committed or failed). */
  release(slot: string | null): void {
    if (slot !== null) this.pending.delete(slot)
  }

  /** Remember `k` with the order it made, inside the order's own durable write. */
  record(db: Db, k: Idempotency | null, orderId: number, now: string): void {
    if (k !== null) insertIdempotency(db, k, orderId, now)
  }
}
