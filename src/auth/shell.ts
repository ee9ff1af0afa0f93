/**
 * The `shell` family (api-v1 §4.9, docs/app-shell.md): the owner's mobile shell app holds a shell
 * token per device (`Authorization: Bearer dsh_…`). It authenticates only the app group's routes
 * (`/app/…`), never the rest of `/api/v1`: the shell's web view reaches the dashboard through a
 * one-time handoff into a web session, and the dashboard calls the API with its own short-lived
 * tokens. Looked up in SQLite (by SHA-256) on every request, so a sign-out applies at once.
 */
import type { Db } from '../storage/db.ts'
import { nowIso } from '../storage/db.ts'
import { liveShellToken } from '../storage/app-group.ts'
import { TOKEN_PREFIX, sha256Hex } from './tokens.ts'

export interface ShellPrincipal {
  kind: 'shell'
  ownerId: number
  /** The shell token's row: one per signed-in device. */
  tokenId: number
  device: string
  platform: string
  expiresAt: string
}

export function createShellAuth(db: Db) {
  return {
    /** The principal for a raw shell token, or null when missing, unknown, revoked or expired. */
    resolve(rawToken: string): ShellPrincipal | null {
      if (!rawToken.startsWith(TOKEN_PREFIX.shell)) return null
      const row = liveShellToken(db, sha256Hex(rawToken), nowIso())
      if (!row) return null
      return { kind: 'shell', ownerId: row.owner_id, tokenId: row.id, device: row.device, platform: row.platform, expiresAt: row.expires_at }
    },
  }
}
