/**
 * Idempotent order creation (api-v1 §2.4 "Idempotency", docs/orders.md), pure: which key a request
 * carries, how it is scoped and hashed, and what a key means when it comes back. Every front door
 * that creates orders (owner API, storefront, customer, the store website's checkout, the MCP
 * `place_order` tools) reaches these through src/ops/orders/order-create.ts; the store actor keeps the
 * keys in flight and the committed ones through src/actors/store-idempotency.ts, which asks
 * `decideIdempotency` what to do. Nothing else decides.
 *
 * - The key: the transport's (HTTP `Idempotency-Key`), else the body's `client_uuid`; 1–255
 *   characters. Keys are scoped per caller and store: two callers may pick the same key.
 * - The hash: of the input as stable JSON (sorted keys), so a reordered body is the same request;
 *   the digest (SHA-256, hex) is the owner's, as this module uses no Node built-ins. Hashes are kept
 *   in `idempotency_keys`: changing how they are made turns every retry across an upgrade into a 422.
 * - The decision: a key held by a commit under way is 409 `idempotency_in_flight` for the same
 *   request and 422 `idempotency_key_reused` for another; a committed key replays its order for the
 *   same request and is 422 for another; an unknown key is a new order.
 */
import type { FieldErrors } from '../errors.ts'

/** A request's key, scoped to its caller and store, with the hash of what it asked for. */
export interface Idempotency { scope: string; key: string; hash: string }
/** A key already used and committed (the `idempotency_keys` row): the request's hash and the order it made. */
export interface IdempotencyRecord { request_hash: string; order_id: number }

/** The longest key accepted (api-v1 §2.4). */
export const MAX_KEY_LENGTH = 255

/** Stable JSON (sorted keys) so the same request always hashes the same. */
export function stableJson(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(stableJson).join(',')}]`
  if (x && typeof x === 'object') {
    return `{${Object.keys(x).sort().map((k) => `${JSON.stringify(k)}:${stableJson((x as Record<string, unknown>)[k])}`).join(',')}}`
  }
  return JSON.stringify(x) ?? 'null'
}

/** A digest of text (src/actors/store-idempotency.ts: SHA-256, hex). */
export type Digest = (text: string) => string

/**
 * Who a key belongs to (`KeyedRequest.caller`): keys are scoped per caller and store, so two callers
 * of one store may pick the same key. The store website's guests share `storefront:0`, the scope
 * their orders always had (a guest's key is its cart's random id, src/ops/web/website-cart.ts); a
 * reservation's seat names the reservation (it sends no key today).
 */
export const keyCaller = {
  owner: (ownerId: number) => `owner:${ownerId}`,
  customer: (customerId: number) => `customer:${customerId}`,
  storefront: (tokenId: number) => `storefront:${tokenId}`,
  websiteGuest: 'storefront:0',
  reservation: (reservationId: number) => `reservation:${reservationId}`,
} as const

/** What a create-order request names: who asks (`keyCaller`), where, and its keys. */
export interface KeyedRequest {
  caller: string
  storeId: number
  /** The transport's key (HTTP `Idempotency-Key`), if any: it wins over `client_uuid`. */
  transportKey?: string | undefined
  input: { client_uuid?: string | null | undefined }
}

/** The request's key (null: no key, every request is a new order), or why it cannot be one (422, keyed `Idempotency-Key`). */
export type KeyChoice = { ok: true; idem: Idempotency | null } | { ok: false; errors: FieldErrors }

/** The request's key: the transport's, else `client_uuid`; scoped to caller and store; hashed with `digest` over the input's stable JSON. */
export function chooseKey(r: KeyedRequest, digest: Digest): KeyChoice {
  const key = r.transportKey ?? r.input.client_uuid ?? null
  if (key === null) return { ok: true, idem: null }
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) return { ok: false, errors: { 'Idempotency-Key': [`Use a key of 1 to ${MAX_KEY_LENGTH} characters.`] } }
  return { ok: true, idem: { scope: `${r.caller}/store:${r.storeId}`, key, hash: digest(stableJson(r.input)) } }
}

/** A key's slot among the commits under way: scope and key (two callers of one store may pick the same key). */
export const idempotencySlot = (k: Pick<Idempotency, 'scope' | 'key'>): string => `${k.scope}\n${k.key}`

/** What a keyed request gets (api-v1 §2.4). */
export type IdempotencyDecision =
  | { kind: 'new' }
  | { kind: 'replay'; orderId: number }
  | { kind: 'reused' }
  | { kind: 'in_flight' }

const NEW: IdempotencyDecision = Object.freeze({ kind: 'new' })
const REUSED: IdempotencyDecision = Object.freeze({ kind: 'reused' })
const IN_FLIGHT: IdempotencyDecision = Object.freeze({ kind: 'in_flight' })

/**
 * The decision for `k`, given the hash of the request whose commit holds the key now (`inFlight`)
 * and the key's committed record (`seen`). A commit under way is asked first: its record may not be
 * visible yet, and the same request retried meanwhile must wait (409), not create a second order.
 */
export function decideIdempotency(k: Idempotency, inFlight: string | undefined, seen: IdempotencyRecord | undefined): IdempotencyDecision {
  if (inFlight !== undefined) return inFlight === k.hash ? IN_FLIGHT : REUSED
  if (seen === undefined) return NEW
  return seen.request_hash === k.hash ? { kind: 'replay', orderId: seen.order_id } : REUSED
}

/**
 * The store website's checkout key (docs/website.md "Checkout"; api-v1 §2.4 `client_uuid`): the
 * cart's random id and a digest of the form as posted (`form`: what the checkout posts, in a fixed
 * order; `digest`: SHA-256, base64url). One cart, one form: one order, however often it is posted
 * (a double tap, a retried request); a changed form is another key, so fixing a refused post is
 * never an idempotency conflict.
 */
export function websiteClientUuid(cartId: string, form: readonly unknown[], digest: Digest): string {
  return `website-${cartId}-${digest(JSON.stringify(form)).slice(0, 16)}`
}
