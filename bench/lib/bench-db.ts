/**
 * Databases the benches build before the server starts: big ones cached under bench/results/.cache/
 * (git-ignored) and built once, and the owner every bench store belongs to.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { RESULTS_DIR } from './scenario.ts'
import type { Db } from '../../src/storage/db.ts'
import { createOwnerToken } from '../../src/seed.ts'
import { setAccountPlan, syncPlatformPlans } from '../../src/storage/plans.ts'

/**
 * `<key>.db` in the cache, built by `build` into a fresh temporary file on first use and renamed
 * into place when complete (an interrupted build leaves nothing that counts), with the metadata
 * `build` returned kept next to it as `<key>.json`. Runs copy the file: the server never writes into it.
 */
export function cachedDb<M>(key: string, what: string, build: (path: string) => M, log: (s: string) => void): { db: string; meta: M } {
  const dir = join(RESULTS_DIR, '.cache')
  mkdirSync(dir, { recursive: true })
  const base = join(dir, key)
  if (!existsSync(`${base}.json`)) {
    log(`building ${what} once (cached in ${dir})…`)
    rmSync(`${base}.tmp.db`, { force: true })
    rmSync(`${base}.tmp.db-wal`, { force: true })
    rmSync(`${base}.tmp.db-shm`, { force: true })
    const meta = build(`${base}.tmp.db`)
    renameSync(`${base}.tmp.db`, `${base}.db`)
    writeFileSync(`${base}.json`, JSON.stringify(meta))
  }
  return { db: `${base}.db`, meta: JSON.parse(readFileSync(`${base}.json`, 'utf8')) as M }
}

/** An owner on the pro plan with an all-capabilities API token (inside the caller's transaction). */
export function benchOwner(db: Db, name: string, email: string, createdAt: string): { ownerId: number; token: string } {
  const ownerId = Number(db.prepare('INSERT INTO owners (name, email, created_at) VALUES (?, ?, ?)').run(name, email, createdAt).lastInsertRowid)
  if (!db.prepare("SELECT 1 FROM plans WHERE key = 'pro'").get()) syncPlatformPlans(db)
  setAccountPlan(db, ownerId, 'pro')
  return { ownerId, token: createOwnerToken(db, ownerId, ['*'], null, 'bench').token }
}
