/** Owner accounts and their API tokens as `GET /me` shows them (api-v1 §4.2). Reads only. */
import type { Db } from './db.ts'

export interface OwnerBrief { id: number; name: string; email: string; created_at: string }
export interface OwnerTokenBrief { id: number; name: string; token_prefix: string; capabilities: string; expires_at: string | null; created_at: string }

export const ownerById = (db: Db, id: number): OwnerBrief | undefined =>
  db.prepare<[number], OwnerBrief>('SELECT id, name, email, created_at FROM owners WHERE id = ?').get(id)

export const ownerTokenById = (db: Db, id: number): OwnerTokenBrief | undefined =>
  db.prepare<[number], OwnerTokenBrief>('SELECT id, name, token_prefix, capabilities, expires_at, created_at FROM owner_tokens WHERE id = ?').get(id)
