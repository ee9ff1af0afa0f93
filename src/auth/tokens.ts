/** Secrets: random tokens with a family prefix, stored only as SHA-256 (api-v1 §5, ARCHITECTURE "Storage"). */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto'

/** Family prefixes make a leaked token recognisable (and let secret scanners find it). */
export const TOKEN_PREFIX = {
  owner: 'dso_',
  storefront: 'dss_',
  driver: 'dsd_',
  customer: 'dsc_',
  staff: 'dst_',
  track: 'trk_',
  /** The owner's mobile shell app (api-v1 §4.9, docs/app-shell.md). */
  shell: 'dsh_',
  /** Third-party apps' access and refresh tokens (api-v1 §4.10, docs/apps.md). */
  app: 'dsa_',
  appRefresh: 'dsar_',
} as const
export type TokenFamily = keyof typeof TOKEN_PREFIX

/**
 * Random bytes from a pool refilled 4 KiB at a time: one CSPRNG call per 128 tokens instead of one
 * per token (a track token is minted for every order). Each slice is handed out once.
 */
const POOL_SIZE = 4096
let pool = Buffer.alloc(0)
let poolOffset = POOL_SIZE
function random32(): Buffer {
  if (poolOffset + 32 > pool.length) {
    pool = randomBytes(POOL_SIZE)
    poolOffset = 0
  }
  const out = pool.subarray(poolOffset, poolOffset + 32)
  poolOffset += 32
  return out
}

/** 256 random bits, base64url, behind the family prefix. */
export const newToken = (family: TokenFamily): string => TOKEN_PREFIX[family] + random32().toString('base64url')

/**
 * A track token (minted with every order): the family prefix, the minting time in milliseconds as
 * 12 hex digits, then 256 random bits as `newToken` has them. The time part carries no secret (the
 * holder sees the order's times anyway) and only orders the tokens: `orders.track_token` is UNIQUE,
 * and purely random keys land on a different page of that index with every order, so each batch
 * rewrote a page per order into the WAL (~2x the insert cost at 200k orders in a micro-test); keys
 * in minting order all land at one end. Older, purely random tokens are looked up the same way.
 */
export const newTrackToken = (now: number = Date.now()): string =>
  TOKEN_PREFIX.track + now.toString(16).padStart(12, '0') + random32().toString('base64url')

// One-shot `hash` (no Hash object): a third of createHash's cost, and it runs on every authentication.
export const sha256Hex = (s: string): string => hash('sha256', s, 'hex')

/** Constant-time comparison of two hex digests (for secrets compared outside an indexed lookup). */
export function safeEqualHex(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'hex')
  const bb = Buffer.from(b, 'hex')
  return ba.length === bb.length && timingSafeEqual(ba, bb)
}
