/** Start a real server on a random loopback port with a fresh database, plus a tiny HTTP client. */
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { loadConfig, type Config } from '../../src/config.ts'
import { buildApp, type App, type BuildOptions } from '../../src/app.ts'
import { openDb } from '../../src/storage/db.ts'
import { seedDemo, type DemoAccount } from '../../src/seed.ts'

export interface TestServer {
  app: App
  port: number
  site: string
  base: string
  dbPath: string
  seed(): DemoAccount
  req(method: string, path: string, opts?: ReqOpts): Promise<Res>
  close(): Promise<void>
}

export interface ReqOpts { token?: string; body?: unknown; raw?: string | Buffer; headers?: Record<string, string> }
export interface Res { status: number; headers: Headers; body: any; text: string }

/** `build`: what buildApp is given besides the configuration (a database opened by the test, cluster replication). */
export async function startServer(env: Record<string, string> = {}, overrides: Partial<Config> = {}, build: BuildOptions = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-test-'))
  const dbPath = join(dir, 'test.db')
  if (env.DB_PATH === undefined && overrides.dbPath === undefined) copyFileSync(migratedEmptyDb(), dbPath)
  // Links the server prints (track_url, openapi servers) must point at this server, so the port is
  // chosen before the server starts.
  const freePort = await findFreePort()
  const site = `http://127.0.0.1:${freePort}`
  const config = loadConfig({ LOG_LEVEL: 'silent', HOST: '127.0.0.1', PORT: String(freePort), DB_PATH: dbPath, SITE_URL: site, ...env }, overrides)
  const app = buildApp(config, build)
  const port = await app.listen()
  const base = `${site}/api/v1`
  return {
    app, port, site, base, dbPath,
    seed: () => seedDemo(app.svc.db, site),
    req: (method, path, opts = {}) => request(path.startsWith('http') ? path : base + path, method, opts),
    async close() {
      await app.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

const STORAGE = fileURLToPath(new URL('../../src/storage/', import.meta.url))

/**
 * An empty database with every migration applied, made once per set of migrations and shared by
 * the test processes (os.tmpdir(), named by a hash of src/storage/migrations/ and db.ts, which opens
 * and migrates it): a fresh server's database starts as a copy of it, the state `openDb` leaves a
 * new file in, and its own `openDb` finds nothing to migrate. Migrating from nothing is ~40
 * transactions, each fsynced: ~105 ms of CPU per server, and a suite run starts ~300 servers.
 * Migrations themselves are tested from nothing by test/unit/db.test.ts and the migration tests.
 */
function migratedEmptyDb(): string {
  const hash = createHash('sha1').update(readFileSync(join(STORAGE, 'db.ts')))
  const dir = join(STORAGE, 'migrations')
  for (const f of readdirSync(dir).sort()) hash.update(`\0${f}\0`).update(readFileSync(join(dir, f)))
  const file = join(tmpdir(), `dispatch-test-migrated-${hash.digest('hex')}.db`)
  if (existsSync(file)) return file
  // Made beside and renamed over: a parallel test process sees the whole file or none.
  const beside = `${file}.${process.pid}.tmp`
  openDb(beside).close()
  renameSync(beside, file)
  return file
}

export async function request(url: string, method: string, opts: ReqOpts = {}): Promise<Res> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) }
  if (opts.token) headers.authorization = `Bearer ${opts.token}`
  let body: string | Buffer | undefined
  if (opts.raw !== undefined) body = opts.raw
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body)
    headers['content-type'] ??= 'application/json'
  }
  const r = await fetch(url, { method, headers, body })
  const text = await r.text()
  let parsed: unknown = undefined
  try { parsed = text ? JSON.parse(text) : undefined } catch { parsed = undefined }
  return { status: r.status, headers: r.headers, body: parsed, text }
}

export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port
      srv.close(() => resolve(port))
    })
  })
}

/** Settle a promise that should reject (a refused upgrade): the rejection, or null if it resolved. */
export const refusal = (p: Promise<unknown>): Promise<{ status?: number; body?: any } | null> =>
  p.then(() => null, (e: { status?: number; body?: any }) => e)
