/**
 * The OAuth 2.0 JWT bearer grant of a Google service account (RFC 7523; Google's "Using OAuth 2.0
 * for server to server applications"), built with node:crypto: an RS256-signed assertion naming
 * the service account as issuer and the token URI as audience, valid one hour.
 */
import { createSign } from 'node:crypto'
import type { ServiceAccount } from './config.ts'

/** The scope FCM HTTP v1 asks for. */
export const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging'

const b64url = (x: string | Buffer) => Buffer.from(x).toString('base64url')

/** A compact JWS (RFC 7515 §7.1) of `claims`, RS256 with the PEM `privateKey`. */
export function signRs256(claims: Record<string, unknown>, privateKey: string, kid?: string): string {
  const header = { alg: 'RS256', typ: 'JWT', ...(kid ? { kid } : {}) }
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`
  const signature = createSign('RSA-SHA256').update(input).sign(privateKey)
  return `${input}.${b64url(signature)}`
}

/** The grant's assertion for `account` at `nowMs`. */
export function serviceAccountAssertion(account: ServiceAccount, scope: string, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000)
  return signRs256({ iss: account.client_email, scope, aud: account.token_uri, iat, exp: iat + 3600 }, account.private_key, account.private_key_id)
}
