/**
 * App session tokens (api-v1 §4.10, §5, §8: 60 s; docs/apps.md "Embedding"): compact JWS (RFC 7515)
 * JWTs (RFC 7519) signed HS256 with the app's client secret, so an app verifies them with any
 * standard JWT library and the secret it already holds. Written with node:crypto: the format is a
 * few lines and a dependency would add nothing (shared/DEPENDENCIES.md "OAuth 2.0 code flow").
 */
import { createHmac, randomBytes } from 'node:crypto'

/** Seconds a session token lives (api-v1 §8 "App session token life"). */
export const SESSION_TOKEN_TTL_S = 60

/** The claims every session token carries (docs/apps.md lists their meaning). */
export interface SessionClaims {
  /** The site URL: who issued it. */
  iss: string
  /** Where the owner is: the account's dashboard, `{site_url}/dashboard`, or one store's (`…/dashboard?store=ID`). */
  dest: string
  /** The app's client_id: a token for one app is useless to another. */
  aud: string
  /** The owner account's id, as a string (RFC 7519 §4.1.2: a StringOrURI). */
  sub: string
  exp: number
  nbf: number
  iat: number
  /** Unique per token (a row in app_session_tokens). */
  jti: string
  /** The owner's web session the token was issued for. */
  sid: string
}

const b64url = (s: string | Buffer): string => Buffer.from(s).toString('base64url')

/** A new unique token id: 128 random bits. */
export const newJti = (): string => randomBytes(16).toString('base64url')

/** The signed token. The key is the client secret's UTF-8 bytes, as JWT libraries take a string secret. */
export function signSessionToken(claims: SessionClaims, clientSecret: string): string {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))
  const body = b64url(JSON.stringify(claims))
  const sig = createHmac('sha256', clientSecret).update(`${head}.${body}`).digest('base64url')
  return `${head}.${body}.${sig}`
}

/** The claims of a token issued at `nowMs` (seconds, as RFC 7519 NumericDate). */
export function sessionClaims(p: { siteUrl: string; dest: string; clientId: string; ownerId: number; sessionId: number; jti: string; nowMs: number }): SessionClaims {
  const iat = Math.floor(p.nowMs / 1000)
  return {
    iss: p.siteUrl, dest: p.dest, aud: p.clientId, sub: String(p.ownerId),
    exp: iat + SESSION_TOKEN_TTL_S, nbf: iat, iat, jti: p.jti, sid: String(p.sessionId),
  }
}
