/**
 * Owner sign-in for operators (docs/dashboard.md "Signing in"):
 *
 *   dispatch owner set-password --owner ID --password P [--json]
 *
 * Sets the owner's dashboard password (scrypt, src/auth/passwords.ts), counts the owner's email as
 * confirmed (the operator vouches for it) and ends the owner's web sessions and their API tokens:
 * after a reset, only the new password signs in. Safe while a server runs on the database: it
 * reads sessions on every request, and open sockets re-validate (src/ws/sessions.ts).
 */
import type { Db } from './storage/db.ts'
import { hashSecretSync } from './auth/passwords.ts'
import { markEmailVerified, otherLiveSessionIds, ownerCredentials, ownerByLoginEmail, revokeSessions, setOwnerPassword } from './storage/owner-auth.ts'
import { PASSWORD_MIN } from './ops/accounts/owner-auth.ts'
import { CliError } from './cli.ts'

export const OWNER_USAGE = '  dispatch owner set-password --owner ID --password P [--json]'
export const OWNER_OPTIONS = { password: { type: 'string' } } as const

export interface OwnerArgs { owner?: string; password?: string }
type Emit = (obj: Record<string, unknown>, text: string) => string

/** Runs `cmd sub` if it is an owner command; null when it is not. */
export function ownerCommand(db: Db, cmd: string | undefined, sub: string | undefined, a: OwnerArgs, emit: Emit): { code: number; out: string } | null {
  if (cmd !== 'owner' || sub !== 'set-password') return null
  const ownerId = Number(a.owner)
  if (!Number.isInteger(ownerId) || ownerId < 1) throw new CliError('--owner must be an owner id')
  const owner = ownerCredentials(db, ownerId)
  if (!owner) throw new CliError(`no owner with id ${ownerId}`)
  const password = a.password ?? ''
  if (password.length < PASSWORD_MIN) throw new CliError(`--password needs at least ${PASSWORD_MIN} characters`)
  // Sign-in is by email: another account that signs in with this address would make it ambiguous.
  const other = ownerByLoginEmail(db, owner.email)
  if (other && other.id !== ownerId) throw new CliError(`owner ${other.id} already signs in with ${owner.email}`)
  const hash = hashSecretSync(password)
  const ended = db.transaction(() => {
    setOwnerPassword(db, ownerId, hash)
    markEmailVerified(db, ownerId)
    return revokeSessions(db, otherLiveSessionIds(db, ownerId, null), ownerId)
  }).immediate()
  return { code: 0, out: emit({ owner_id: ownerId, email: owner.email, sessions_ended: ended }, `owner ${ownerId} (${owner.email}) signs in with the new password; ${ended} session(s) ended`) }
}
