/**
 * Graceful shutdown (issue 21 #4, docs/running.md "Stopping"), on the real server in a child
 * process: after SIGTERM `/readyz` answers 503 while `/healthz` still answers 200, then the
 * listener closes; requests that had started before are all answered; every answered order is in
 * the database exactly once and no unanswered one is; sockets close with 1001; exit code 0.
 */
import t from 'tap'
import { connect, type Socket } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { openDb } from '../src/storage/db.ts'
import { createAccount, type Account } from './helpers/fixtures.ts'
import { spawnServer, type ServerProcess } from './helpers/process.ts'
import { WsClient } from './helpers/ws-client.ts'

const dir = mkdtempSync(join(tmpdir(), 'dispatch-shutdown-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
let server: ServerProcess | null = null
t.teardown(() => server?.kill())

const IN_FLIGHT = 32

function account(dbPath: string): Account {
  const db = openDb(dbPath)
  try { return createAccount(db) } finally { db.close() }
}

const orderBody = (acct: Account, i: number) =>
  JSON.stringify({ type: 'takeaway', note: `in flight ${i}`, items: [{ item_id: acct.menu.fries, quantity: 1 + (i % 3) }] })

/**
 * A POST whose head is sent and whose body is held back until `sendBody()`: once the server has
 * answered `100 Continue`, the request is certainly in the server's hands (its handler runs).
 */
function heldRequest(port: number, acct: Account, i: number) {
  const body = orderBody(acct, i)
  const sock: Socket = connect(port, '127.0.0.1')
  let got = ''
  sock.setEncoding('latin1')
  let onData: () => void = () => {}
  sock.on('data', (d: string) => { got += d; onData() })
  const ended = new Promise<void>((resolve) => { sock.on('close', () => resolve()); sock.on('error', () => resolve()) })
  const waitFor = (pred: () => boolean) => new Promise<void>((resolve, reject) => {
    onData = () => { if (pred()) resolve() }
    onData()
    void ended.then(() => (pred() ? resolve() : reject(new Error(`connection closed, got ${JSON.stringify(got)}`))))
  })
  sock.write(`POST /api/v1/restaurants/${acct.storeId}/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${acct.token}\r\n`
    + `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`)
  return {
    continued: waitFor(() => got.startsWith('HTTP/1.1 100')),
    /** Send the body; resolves with the final status and body, or null if the connection died unanswered. */
    async finish(): Promise<{ status: number; body: any } | null> {
      sock.write(body)
      const head = /HTTP\/1\.1 100[^\r]*\r\n\r\n/
      try {
        await waitFor(() => {
          const rest = got.replace(head, '')
          const m = /\r\nContent-Length: (\d+)\r\n/i.exec(rest)
          const at = rest.indexOf('\r\n\r\n')
          return m !== null && at >= 0 && rest.length >= at + 4 + Number(m[1])
        })
      } catch { return null }
      const rest = got.replace(head, '')
      sock.destroy()
      return { status: Number(rest.slice(9, 12)), body: JSON.parse(rest.slice(rest.indexOf('\r\n\r\n') + 4)) }
    },
  }
}

/** Resolves with the first status of `url` that is not 200, or 'refused' when nothing listens. */
async function firstNot200(url: string): Promise<number | 'refused'> {
  for (;;) {
    try {
      const r = await fetch(url, { headers: { connection: 'close' } })
      await r.arrayBuffer()
      if (r.status !== 200) return r.status
    } catch { return 'refused' }
  }
}

t.test('SIGTERM: readiness 503 first, then every request in flight is answered and committed once', async (t) => {
  const dbPath = join(dir, 'drain.db')
  const acct = account(dbPath)
  // A grace long enough that /readyz is seen answering 503 before the listener closes (a bound, not a timing).
  server = await spawnServer({ DB_PATH: dbPath, DEMO_SEED: '0', RATE_LIMIT_PER_MINUTE: '1000000', SHUTDOWN_GRACE_MS: '3000', SHUTDOWN_TIMEOUT_MS: '60000' })
  const sp = server
  t.equal((await fetch(`${sp.site}/readyz`)).status, 200, 'ready before the signal')

  const feed = await WsClient.open(`ws://127.0.0.1:${sp.port}/api/v1/ws/dispatch/${acct.storeId}`, { token: acct.token })
  const held = Array.from({ length: IN_FLIGHT }, (_, i) => heldRequest(sp.port, acct, i))
  await Promise.all(held.map((h) => h.continued))

  sp.proc.kill('SIGTERM')
  t.equal(await firstNot200(`${sp.site}/readyz`), 503, '/readyz answers 503 while the listener is still open')
  const health = await fetch(`${sp.site}/healthz`, { headers: { connection: 'close' } }).then((r) => r.status, () => 'refused')
  t.ok(health === 200 || health === 'refused', `/healthz is liveness: still 200 while draining (${health})`)
  t.equal(await firstNot200(`${sp.site}/healthz`), 'refused', 'then the listener closes: new connections are refused')

  // Only now, with the listener closed, do the held requests send their bodies.
  const answers = await Promise.all(held.map((h) => h.finish()))
  const ids = answers.map((a) => (a?.status === 200 ? (a.body as { id: number }).id : null))
  t.equal(ids.filter((id) => id !== null).length, IN_FLIGHT, `all ${IN_FLIGHT} requests in flight at SIGTERM answered 200`)
  t.same((await feed.closed).code, 1001, 'the socket is closed with 1001 going away')
  t.equal(await sp.exited, 0, 'exit 0 after a complete drain')

  const db = new Database(dbPath, { readonly: true })
  t.teardown(() => db.close())
  const rows = db.prepare('SELECT id FROM orders WHERE store_id = ? ORDER BY id').pluck().all(acct.storeId) as number[]
  t.same(rows, [...(ids as number[])].sort((a, b) => a - b), 'every answered order is stored exactly once, and no other')
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok')
})

t.test('SIGTERM under a stream of requests: no order is committed without an answer', async (t) => {
  const dbPath = join(dir, 'stream.db')
  const acct = account(dbPath)
  server = await spawnServer({ DB_PATH: dbPath, DEMO_SEED: '0', RATE_LIMIT_PER_MINUTE: '1000000' })
  const sp = server
  let answered = 0
  let refused = 0
  let signalled = false
  const ids: number[] = []
  const other: number[] = []
  // 32 clients, each a new connection per order, until the server refuses them.
  await Promise.all(Array.from({ length: IN_FLIGHT }, async (_, c) => {
    for (let i = 0; ; i++) {
      try {
        const r = await fetch(`${sp.base}/restaurants/${acct.storeId}/orders`, {
          method: 'POST', body: orderBody(acct, c * 1000 + i),
          headers: { authorization: `Bearer ${acct.token}`, 'content-type': 'application/json', connection: 'close' },
        })
        const body = (await r.json()) as { id: number }
        if (r.status === 200) ids.push(body.id)
        else other.push(r.status)
        if (++answered === 100 && !signalled) { signalled = true; sp.proc.kill('SIGTERM') }
      } catch {
        refused++
        return
      }
    }
  }))
  t.equal(await sp.exited, 0, 'exit 0')
  t.same(other, [], 'every answer was a success')
  const db = new Database(dbPath, { readonly: true })
  t.teardown(() => db.close())
  const rows = db.prepare('SELECT id FROM orders WHERE store_id = ? ORDER BY id').pluck().all(acct.storeId) as number[]
  t.same(rows, ids.sort((a, b) => a - b), `${answered} answered, ${refused} refused: the stored orders are exactly the answered ones`)
})
