/**
 * `dispatch backup` and `dispatch restore` (issue 21 item 7; docs/running.md "Backups and
 * retention"), through the real CLI binary: a backup taken while a server is taking orders is
 * consistent (every order acknowledged before it started is in it, with its lines; integrity ok);
 * restore refuses while a server has DB_PATH open and leaves it untouched; restored into a new path,
 * a server started on it serves the orders.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { startServer } from './helpers/server.ts'
import { createAccount, postOrder } from './helpers/fixtures.ts'

const ROOT = new URL('..', import.meta.url).pathname
const dir = mkdtempSync(join(tmpdir(), 'dispatch-backup-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

/** The CLI in its own process, without blocking this one (the server here keeps serving). */
function dispatch(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['bin/dispatch.js', ...args], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'silent', ...env } })
    let stdout = '', stderr = ''
    p.stdout.on('data', (b: Buffer) => { stdout += b.toString() })
    p.stderr.on('data', (b: Buffer) => { stderr += b.toString() })
    const timer = setTimeout(() => { p.kill('SIGKILL'); reject(new Error(`dispatch ${args.join(' ')} did not finish`)) }, 60_000)
    p.on('close', (code) => { clearTimeout(timer); resolve({ code: code ?? -1, stdout, stderr }) })
  })
}
const integrity = (path: string) => {
  const db = new Database(path, { readonly: true })
  try { return db.pragma('integrity_check', { simple: true }) } finally { db.close() }
}

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '1000000' })
t.teardown(() => s.close())
const acct = createAccount(s.app.svc.db)
const body = { type: 'takeaway', items: [{ item_id: acct.menu.burger.id, quantity: 1 }, { item_id: acct.menu.fries, quantity: 2 }] }
const backupFile = join(dir, 'backup.db')

t.test('backup while the server takes orders: consistent and complete up to its start', async (t) => {
  const acked: number[] = []
  for (let i = 0; i < 20; i++) acked.push((await postOrder(s, acct.token, acct.storeId, body)).body.id as number)
  // Orders keep coming in during the backup, from several clients at once.
  let stop = false
  const during: number[] = []
  const load = Promise.all(Array.from({ length: 4 }, async () => {
    while (!stop) {
      const r = await postOrder(s, acct.token, acct.storeId, body)
      if (r.status === 200) during.push(r.body.id as number)
    }
  }))
  const r = await dispatch({ DB_PATH: s.dbPath }, 'backup', backupFile, '--json')
  stop = true
  await load
  t.equal(r.code, 0, r.stderr + r.stdout)
  const out = JSON.parse(r.stdout)
  t.match(out, { file: backupFile, integrity: 'ok', bytes: Number })
  t.ok(during.length > 0, `orders were taken during the backup (${during.length})`)

  t.equal(integrity(backupFile), 'ok', 'PRAGMA integrity_check of the copy')
  const copy = new Database(backupFile, { readonly: true })
  t.teardown(() => copy.close())
  const ids = new Set(copy.prepare('SELECT id FROM orders WHERE store_id = ?').pluck().all(acct.storeId) as number[])
  t.ok(acked.every((id) => ids.has(id)), 'every order acknowledged before the backup is in it')
  t.equal(copy.prepare('SELECT COUNT(*) FROM orders o WHERE store_id = ? AND (SELECT COUNT(*) FROM order_lines l WHERE l.order_id = o.id) <> 2').pluck().get(acct.storeId), 0, 'no order without its lines: one moment, not a torn copy')
  t.equal(copy.prepare("SELECT COUNT(*) FROM orders o WHERE store_id = ? AND NOT EXISTS (SELECT 1 FROM outbox e WHERE e.event = 'order.created' AND json_extract(e.data, '$.order_id') = o.id)").pluck().get(acct.storeId), 0, 'every order has its event')

  const again = await dispatch({ DB_PATH: s.dbPath }, 'backup', backupFile)
  t.equal(again.code, 2, 'a backup never overwrites a file')
  t.match(again.stderr, /already exists/)
})

t.test('restore refuses while a server has DB_PATH open, and leaves it alone', async (t) => {
  const before = s.app.svc.db.prepare('SELECT COUNT(*) FROM orders').pluck().get() as number
  const r = await dispatch({ DB_PATH: s.dbPath }, 'restore', backupFile, '--json')
  t.equal(r.code, 1)
  t.match(JSON.parse(r.stdout), { error: /has .* open: stop it first/ })
  t.equal(existsSync(`${s.dbPath}.pre-restore`), false, 'nothing moved aside')
  const after = await postOrder(s, acct.token, acct.storeId, body)
  t.equal(after.status, 200, 'the server keeps working on its own database')
  t.equal(s.app.svc.db.prepare('SELECT COUNT(*) FROM orders').pluck().get(), before + 1)
})

t.test('restore into a new path, start a server on it: the orders are there', async (t) => {
  const target = join(dir, 'restored', 'dispatch.db')
  const r = await dispatch({ DB_PATH: target }, 'restore', backupFile, '--json')
  t.equal(r.code, 0, r.stderr + r.stdout)
  t.match(JSON.parse(r.stdout), { restored: target, previous: null, integrity: 'ok' })
  const copy = new Database(backupFile, { readonly: true })
  const last = copy.prepare('SELECT MAX(id) FROM orders WHERE store_id = ?').pluck().get(acct.storeId) as number
  copy.close()

  const restored = await startServer({ DB_PATH: target, DEMO_SEED: '0' })
  t.teardown(() => restored.close())
  const got = await restored.req('GET', `/restaurants/${acct.storeId}/orders/${last}`, { token: acct.token })
  t.equal(got.status, 200, 'the owner token and the order came back')
  t.equal(got.body.items.length, 2)
  t.equal(restored.app.svc.db.pragma('integrity_check', { simple: true }), 'ok')
  t.equal((await postOrder(restored, acct.token, acct.storeId, body)).status, 200, 'and it takes new orders')
})

t.test('restore over an idle database keeps the old one aside; bad input is refused', async (t) => {
  const target = join(dir, 'idle.db')
  const idle = new Database(target)
  idle.pragma('journal_mode = WAL')
  idle.exec('CREATE TABLE marker (x)')
  idle.close()
  const r = await dispatch({ DB_PATH: target }, 'restore', backupFile)
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /restored .* \(the replaced database is at .*idle\.db\.pre-restore\)/)
  t.equal(integrity(target), 'ok')
  const back = new Database(`${target}.pre-restore`, { readonly: true })
  t.ok(back.prepare("SELECT 1 FROM sqlite_master WHERE name = 'marker'").get(), 'the replaced database is kept')
  back.close()

  const junk = join(dir, 'junk.db')
  writeFileSync(junk, 'not a database at all, just text that is long enough to have a header')
  const bad = await dispatch({ DB_PATH: join(dir, 'x.db') }, 'restore', junk)
  t.equal(bad.code, 2)
  t.match(bad.stderr, /not a SQLite database|integrity/)
  t.equal((await dispatch({ DB_PATH: join(dir, 'x.db') }, 'restore', join(dir, 'missing.db'))).code, 2)
  t.equal((await dispatch({ DB_PATH: join(dir, 'x.db') }, 'backup')).code, 2, 'a missing file name is a usage error')
})
