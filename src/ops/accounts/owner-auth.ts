/**
 * Owner credentials (issue 14; docs/dashboard.md "Signing in"): sign-up with email verification,
 * password sign-in with its limits and optional TOTP, and two-factor enrolment. Every front door
 * that signs an owner in with a password (the web `/login`, the shell's `POST /app/auth/login`,
 * api-v1 §4.9) calls `checkOwnerPassword`, so the limits and the refusals exist once.
 */
import { randomBytes } from 'node:crypto'
import * as v from 'valibot'
import type { Services } from '../../services.ts'
import { ApiError, invalidField } from '../../errors.ts'
import { nowIso } from '../../storage/db.ts'
import { hashSecret, verifySecret } from '../../auth/passwords.ts'
import { sha256Hex } from '../../auth/tokens.ts'
import { newTotpSecret, totpUri, verifyTotp } from '../../auth/staff.ts'
import { SlidingWindowLimiter } from '../../auth/phone-limits.ts'
import { accountSuspended } from '../../auth/suspension.ts'
import { validate } from '../validate.ts'
import {
  advanceTotpStep, emailTokenOwner, expireResetLinks, insertEmailToken, insertOwnerWithPassword, markEmailVerified, otherLiveSessionIds,
  ownerByLoginEmail, ownerCredentials, ownerIdByEmail, resetLinksSince, revokeSessions, setOwnerPassword, setTotpPending, setTotpSecret,
  useEmailToken, type OwnerCredentials,
} from '../../storage/owner-auth.ts'

// ---- limits -------------------------------------------------------------------------------------------------

/** Sign-in attempts per client address: 10 a minute (api-v1 §8 "login 10/min"). */
export const SIGN_IN_PER_ADDRESS = { limit: 10, periodMs: 60_000 }
/** Wrong passwords or codes per account: after 5 in 15 minutes the account answers 429 until the window moves. */
export const FAILURES_PER_ACCOUNT = { limit: 5, periodMs: 15 * 60_000 }

/** Failures per account (by email, whether or not it exists: the answer must not tell). */
class FailureCounter {
  private readonly times = new Map<string, number[]>()
  private lastSweep = 0
  constructor(private readonly w: { limit: number; periodMs: number }) {}
  /** Seconds until the account may try again, or 0. */
  blockedFor(key: string, now = Date.now()): number {
    const recent = (this.times.get(key) ?? []).filter((t) => t > now - this.w.periodMs)
    if (recent.length === 0) this.times.delete(key)
    else this.times.set(key, recent)
    if (recent.length < this.w.limit) return 0
    return Math.max(1, Math.ceil((recent[recent.length - this.w.limit]! + this.w.periodMs - now) / 1000))
  }
  fail(key: string, now = Date.now()): void {
    this.sweep(now)
    const list = this.times.get(key) ?? []
    list.push(now)
    if (list.length > this.w.limit) list.splice(0, list.length - this.w.limit)
    this.times.set(key, list)
  }
  clear(key: string): void { this.times.delete(key) }
  /**
   * Forget keys whose last failure left the window: the keys are whatever emails are tried, so
   * without this one wrong guess per made-up address would stay in memory for good.
   */
  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return
    this.lastSweep = now
    for (const [k, times] of this.times) if (times[times.length - 1]! <= now - this.w.periodMs) this.times.delete(k)
  }
}

interface Limits { address: SlidingWindowLimiter; accounts: FailureCounter }
// One set per server (tests run several servers in one process), shared by every sign-in door.
const limitsOf = new WeakMap<Services, Limits>()
function limits(svc: Services): Limits {
  let l = limitsOf.get(svc)
  if (!l) limitsOf.set(svc, (l = { address: new SlidingWindowLimiter([SIGN_IN_PER_ADDRESS]), accounts: new FailureCounter(FAILURES_PER_ACCOUNT) }))
  return l
}

const tooMany = (sec: number, what: string) =>
  new ApiError('rate_limited', `Too many sign-in attempts ${what}; retry in ${sec} s.`, undefined, { 'Retry-After': String(sec) })

// ---- sign-in ------------------------------------------------------------------------------------------------

export const SignInInput = v.object({
  email: v.pipe(v.string(), v.trim(), v.maxLength(254)),
  password: v.pipe(v.string(), v.maxLength(200)),
  /** The 6-digit TOTP code, when the account has two-factor on. */
  otp: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(12))),
})
export type SignInInput = v.InferOutput<typeof SignInInput>

/** Compared against when the email is unknown, so both answers take as long. */
let dummyHash: Promise<string> | undefined

/**
 * The owner behind an email and password (and TOTP code), or the refusal: 429 `rate_limited` (per
 * address, or the account's recent failures), 401 `unauthenticated` (wrong email or password: the
 * same answer for both), 401 `two_factor_required` (code missing), 422 `otp_invalid`, 403
 * `email_not_verified` (a new link is mailed), 403 `account_suspended`.
 */
export async function checkOwnerPassword(svc: Services, input: SignInInput, ip: string): Promise<{ ownerId: number }> {
  const l = limits(svc)
  const wait = l.address.take(`ip:${ip}`)
  if (wait > 0) throw tooMany(wait, 'from this address')
  const key = input.email.trim().toLowerCase()
  const blocked = l.accounts.blockedFor(key)
  if (blocked > 0) throw tooMany(blocked, 'for this account')

  const owner = ownerByLoginEmail(svc.db, key)
  const ok = owner?.password_hash
    ? await verifySecret(input.password, owner.password_hash)
    : (await verifySecret(input.password, await (dummyHash ??= hashSecret(randomBytes(9).toString('hex')))), false)
  if (!owner || !ok) {
    l.accounts.fail(key)
    throw new ApiError('unauthenticated', 'The email or password is wrong.')
  }
  if (owner.totp_secret) {
    if (!input.otp) throw new ApiError('two_factor_required', 'This account has two-factor sign-in on: enter the 6-digit code from your authenticator app.')
    const step = verifyTotp(owner.totp_secret, input.otp, owner.totp_last_step)
    const accepted = step !== null && (await svc.committer.write((db) => advanceTotpStep(db, owner.id, step)))
    if (!accepted) {
      l.accounts.fail(key)
      throw invalidField('otp', 'The code is wrong or was already used.', 'otp_invalid')
    }
  }
  l.accounts.clear(key)
  // A suspended account keeps its data but signs in nowhere (docs/billing.md "Suspension").
  if (svc.accounts.suspended(owner.id)) throw accountSuspended()
  if (!owner.email_verified_at) {
    await sendVerification(svc, owner)
    throw new ApiError('email_not_verified', `Confirm ${owner.email} first: we have sent a new link.`)
  }
  return { ownerId: owner.id }
}

// ---- sign-up and verification -------------------------------------------------------------------------------

export const PASSWORD_MIN = 10

export const SignUpInput = v.object({
  name: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(100)), ''),
  email: v.pipe(v.string(), v.trim(), v.nonEmpty('Enter your email address.'), v.maxLength(254), v.email('Enter a valid email address.')),
  password: v.pipe(v.string(), v.minLength(PASSWORD_MIN, `Use at least ${PASSWORD_MIN} characters.`), v.maxLength(200, 'Use at most 200 characters.')),
})
export type SignUpInput = v.InferOutput<typeof SignUpInput>

/** The random part of an emailed link (24 bytes, base64url); anything else is not looked up. */
const RAW_LINK = /^[A-Za-z0-9_-]{20,64}$/

/** A verification link lives two days. */
const VERIFY_LIFETIME_MS = 2 * 86_400_000

async function sendVerification(svc: Services, owner: Pick<OwnerCredentials, 'id' | 'email'>): Promise<void> {
  const raw = randomBytes(24).toString('base64url')
  await svc.committer.write((db) => insertEmailToken(db, owner.id, sha256Hex(raw), nowIso(Date.now() + VERIFY_LIFETIME_MS)))
  const link = `${svc.config.siteUrl}/verify-email/${raw}`
  await svc.email.send(owner.email, 'Confirm your email address', `Welcome to Dispatch.\n\nConfirm your email address to sign in:\n${link}\n\nThe link works once and for two days. If you did not sign up, ignore this message.`)
}

/**
 * A new account (on the default plan, docs/billing.md) and a verification mail. An address that is
 * taken gets a mail saying so instead, and the caller sees the same answer either way: sign-up does
 * not tell who has an account.
 */
export async function signUpOwner(svc: Services, raw: unknown, ip: string): Promise<{ email: string }> {
  // Its own count per address (not the sign-in one): 10 sign-ups a minute.
  const wait = limits(svc).address.take(`signup-ip:${ip}`)
  if (wait > 0) throw tooMany(wait, 'from this address')
  const input = validate(SignUpInput, raw, 'body')
  const passwordHash = await hashSecret(input.password)
  const created = await svc.committer.write((db) => {
    if (ownerIdByEmail(db, input.email) !== undefined) return null
    return insertOwnerWithPassword(db, input.name || input.email.split('@')[0]!, input.email, passwordHash)
  })
  if (created === null) {
    await svc.email.send(input.email, 'You already have an account', `Someone (maybe you) tried to sign up with this address, which already has a Dispatch account.\n\nSign in at ${svc.config.siteUrl}/login.`)
  } else {
    await sendVerification(svc, { id: created, email: input.email })
  }
  return { email: input.email }
}

/** Uses a verification link once: the owner whose address it confirms, or null (unknown, used, expired). */
export async function verifyOwnerEmail(svc: Services, rawToken: string): Promise<number | null> {
  if (!RAW_LINK.test(rawToken)) return null
  const ownerId = await svc.committer.write((db) => {
    const id = useEmailToken(db, sha256Hex(rawToken))
    if (id !== undefined) markEmailVerified(db, id)
    return id
  })
  return ownerId ?? null
}

// ---- forgotten password ---------------------------------------------------------------------------------------

/** A reset link lives one hour; an account gets at most three an hour (its mailbox is not ours to flood). */
export const RESET_LINK = { lifetimeMs: 60 * 60_000, perAccountPerHour: 3 }

const ForgotInput = v.object({
  email: v.pipe(v.string(), v.trim(), v.nonEmpty('Enter your email address.'), v.maxLength(254), v.email('Enter a valid email address.')),
})


/**
 * Mails a one-time link to set a new password, when the address signs in with a password. The
 * caller's answer is the same whether or not it does (the form does not tell who has an account);
 * 10 requests a minute per address, three links an hour per account (beyond it: silently none).
 */
export async function requestPasswordReset(svc: Services, raw: unknown, ip: string): Promise<{ email: string }> {
  const wait = limits(svc).address.take(`reset-ip:${ip}`)
  if (wait > 0) throw tooMany(wait, 'from this address')
  const { email } = validate(ForgotInput, raw, 'body')
  const owner = ownerByLoginEmail(svc.db, email)
  if (!owner) return { email }
  const linkRaw = randomBytes(24).toString('base64url')
  const issued = await svc.committer.write((db) => {
    if (resetLinksSince(db, owner.id, nowIso(Date.now() - 60 * 60_000)) >= RESET_LINK.perAccountPerHour) return false
    insertEmailToken(db, owner.id, sha256Hex(linkRaw), nowIso(Date.now() + RESET_LINK.lifetimeMs), 'reset_password')
    return true
  })
  if (issued) {
    const link = `${svc.config.siteUrl}/reset-password/${linkRaw}`
    // Not awaited: a slow or failing mail provider must not make a known address answer
    // differently (later, or 503) from an unknown one. The provider logs failures (masked).
    svc.email.send(owner.email, 'Reset your password', `Someone (maybe you) asked to reset the password of your Dispatch account.\n\nSet a new password here:\n${link}\n\nThe link works once and for one hour. If you did not ask, ignore this message: your password stays as it is.`)
      .catch((e: unknown) => svc.log.warn({ err_code: e instanceof ApiError ? e.code : 'error' }, 'password reset mail not delivered'))
  }
  return { email }
}

/** Whether a reset link is live (the page asks for the new password only then). */
export const resetLinkLive = (svc: Services, rawToken: string): boolean =>
  RAW_LINK.test(rawToken) && emailTokenOwner(svc.db, sha256Hex(rawToken), 'reset_password') !== undefined

const NewPasswordInput = v.object({ password: SignUpInput.entries.password })

/**
 * Sets the new password with a live reset link (used once; the account's other reset links end
 * too), counts the address as confirmed (the mail reached it), ends every web session of the
 * account and their API tokens (and sockets), and forgets its failed sign-ins. 404 `not_found`
 * for an unknown, used or expired link; 422 for a password that is too short.
 */
export async function resetPassword(svc: Services, rawToken: string, raw: unknown): Promise<{ ownerId: number }> {
  const { password } = validate(NewPasswordInput, raw, 'body')
  if (!RAW_LINK.test(rawToken)) throw new ApiError('not_found', 'This link does not work: it was used already or has expired.')
  const hash = await hashSecret(password)
  const done = await svc.committer.write((db) => {
    const ownerId = useEmailToken(db, sha256Hex(rawToken), 'reset_password')
    if (ownerId === undefined) return null
    setOwnerPassword(db, ownerId, hash)
    markEmailVerified(db, ownerId)
    expireResetLinks(db, ownerId)
    const ended = revokeSessions(db, otherLiveSessionIds(db, ownerId, null), ownerId)
    return { ownerId, ended }
  })
  if (!done) throw new ApiError('not_found', 'This link does not work: it was used already or has expired.')
  if (done.ended > 0) svc.realtime.credentialsChanged()
  const email = ownerCredentials(svc.db, done.ownerId)?.email
  if (email) limits(svc).accounts.clear(email.trim().toLowerCase())
  return { ownerId: done.ownerId }
}

// ---- two-factor (TOTP, RFC 6238, as the staff app) -------------------------------------------------------------

export interface TwoFactorState { enabled: boolean; pending: { secret: string; uri: string } | null }

export function twoFactorState(svc: Services, ownerId: number): TwoFactorState {
  const o = ownerCredentials(svc.db, ownerId)
  if (!o) return { enabled: false, pending: null }
  return { enabled: Boolean(o.totp_secret), pending: o.totp_pending ? { secret: o.totp_pending, uri: totpUri(o.totp_pending, o.email, 'Dispatch') } : null }
}

/** Starts enrolment: a new secret, shown to the owner until a code from it confirms it. */
export async function beginTwoFactor(svc: Services, ownerId: number): Promise<void> {
  const o = ownerCredentials(svc.db, ownerId)
  if (!o) throw new ApiError('not_found')
  if (o.totp_secret) throw new ApiError('conflict', 'Two-factor sign-in is already on.')
  const secret = newTotpSecret()
  await svc.committer.write((db) => setTotpPending(db, ownerId, secret))
}

/** Confirms enrolment with a code of the pending secret; from now on sign-in asks for a code. */
export async function confirmTwoFactor(svc: Services, ownerId: number, code: string): Promise<void> {
  const o = ownerCredentials(svc.db, ownerId)
  if (!o?.totp_pending) throw new ApiError('conflict', 'Start two-factor setup first.')
  const step = verifyTotp(o.totp_pending, code.trim(), null)
  if (step === null) throw invalidField('code', 'The code is wrong; check the time on your phone and try again.', 'otp_invalid')
  await svc.committer.write((db) => setTotpSecret(db, ownerId, o.totp_pending, step))
}

/** Turns two-factor off; a current code proves the owner still holds the device. */
export async function disableTwoFactor(svc: Services, ownerId: number, code: string): Promise<void> {
  const o = ownerCredentials(svc.db, ownerId)
  if (!o?.totp_secret) throw new ApiError('conflict', 'Two-factor sign-in is off.')
  const step = verifyTotp(o.totp_secret, code.trim(), o.totp_last_step)
  if (step === null) throw invalidField('code', 'The code is wrong or was already used.', 'otp_invalid')
  await svc.committer.write((db) => setTotpSecret(db, ownerId, null, null))
}
