/**
 * The guest read worker's thread (docs/operations.md "Guests and segments", "Off the event loop"):
 * its own READ-ONLY connection to the server's database file, answering `{id, kind, storeId, params}`
 * messages with `{id, ok, value}` or `{id, ok: false, error}`. better-sqlite3 is synchronous, so the
 * aggregate over a big store's orders (about 1 s at 100k orders) stalls this thread, never the
 * server's event loop. WAL lets it read the last committed snapshot while the main connection writes;
 * every acknowledged write was committed before its reply, so a client reading after its own write
 * sees it. The queries and the phone normaliser they call are src/storage/guests.ts itself.
 *
 * Two test hooks (src/storage/guests-reader.ts `hold`, `crash`): `hold` blocks this thread on a shared
 * flag until the main thread releases it (a slow query in flight, without timing), `crash` exits it.
 */
import Database from 'better-sqlite3'
import { parentPort, workerData } from 'node:worker_threads'
import { runGuestRead, type GuestRead } from './guests.ts'

export type WorkerRequest = { id: number } & GuestRead
export type WorkerControl = { id: number; kind: 'hold'; flag: Int32Array } | { id: number; kind: 'crash' }
export type WorkerReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string }

const port = parentPort
if (!port) throw new Error('src/storage/guests-worker.ts runs as a worker thread (src/storage/guests-reader.ts starts it)')

const db = new Database((workerData as { path: string }).path, { readonly: true, fileMustExist: true })
// The main connection may hold the write lock briefly (a checkpoint); wait as it does.
db.pragma('busy_timeout = 5000')

port.on('message', (msg: WorkerRequest | WorkerControl) => {
  if (msg.kind === 'hold') {
    // Blocks this thread (not the server's) until the main thread stores 1 and notifies.
    port.postMessage({ id: msg.id, ok: true, value: 'held' } satisfies WorkerReply)
    Atomics.wait(msg.flag, 0, 0)
    return
  }
  if (msg.kind === 'crash') process.exit(3) // in a worker, ends this thread only
  let reply: WorkerReply
  try {
    reply = { id: msg.id, ok: true, value: runGuestRead(db, msg) }
  } catch (err) {
    reply = { id: msg.id, ok: false, error: err instanceof Error ? err.message : String(err) }
  }
  port.postMessage(reply)
})
