/** Slow hashing for passwords and PINs: scrypt (N=2^14, r=8, p=1) with a per-secret salt. */
import { randomBytes, scrypt, scryptSync, timingSafeEqual } from 'node:crypto'

const KEYLEN = 32
const PARAMS = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }

const encode = (salt: Buffer, key: Buffer) => `scrypt$${PARAMS.N}$${salt.toString('base64url')}$${key.toString('base64url')}`

export function hashSecretSync(secret: string): string {
  const salt = randomBytes(16)
  return encode(salt, scryptSync(secret, salt, KEYLEN, PARAMS))
}

export function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16)
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, KEYLEN, PARAMS, (err, key) => (err ? reject(err) : resolve(encode(salt, key)))),
  )
}

/** Constant-time check of `secret` against a stored `scrypt$N$salt$key`. */
export function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, salt, key] = stored.split('$')
  if (scheme !== 'scrypt' || !n || !salt || !key) return Promise.resolve(false)
  const expected = Buffer.from(key, 'base64url')
  return new Promise((resolve) =>
    scrypt(secret, Buffer.from(salt, 'base64url'), expected.length, { ...PARAMS, N: Number(n) }, (err, got) =>
      resolve(!err && got.length === expected.length && timingSafeEqual(got, expected)),
    ),
  )
}

let dummy: Promise<string> | null = null
/**
 * A hash to verify against when the account does not exist, so an unknown login costs what a
 * wrong password costs (no timing oracle). Made on first use, off the event loop: computing it at
 * import cost ~60 ms of scrypt per module on every start (bench/cold-start.ts profile).
 */
export function dummyHash(): Promise<string> {
  return (dummy ??= hashSecret('not-a-real-password'))
}
