/** Start a real server on a random loopback port with a fresh database, plus a tiny HTTP client. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:net'
import { loadConfig, type Config } from '../../src/config.ts'
import { buildApp, type App, type BuildOptions } from '../../src/app.ts'
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
