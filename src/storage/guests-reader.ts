/**
 * Guest reads off the event loop (docs/operations.md "Guests and segments", "Off the event loop"):
 * the aggregate of src/storage/guests.ts takes about 1 s on a store with 100k orders, and
 * better-sqlite3 is synchronous, so on the main connection it stalled every store's orders, sockets
 * and kitchen screens for that second. Here the reads go to ONE worker thread per server
 * (src/storage/guests-worker.ts) with its own read-only connection to the same file:
 *
 * - started on the first read, started again on the next read after it died (the reads it held
 *   answer 503 `unavailable` with Retry-After), terminated by `close()` (app.ts shutdown);
 * - at most MAX_IN_WORKER reads in it at once (one runs, the rest wait, in order); one more is
 *   refused at once with 503 `unavailable` and `Retry-After: RETRY_AFTER_S`, not queued without bound;
 * - an in-memory database (`:memory:`, tests' own connections) cannot be opened twice: reads run
 *   inline there, as they do when GUESTS_WORKER=0.
 */
import type { Worker } from 'node:worker_threads'
import { spawnWorker } from '../threads/spawn.ts'
import { resolve } from 'node:path'
import type { Db } from './db.ts'
import { ApiError } from '../errors.ts'
import type { Logger } from '../log.ts'
import { runGuestRead, type GuestRead, type GuestReadKind, type GuestReadResults } from './guests.ts'
import type { WorkerControl, WorkerReply, WorkerRequest } from './guests-worker.ts'

/** Reads in the worker at once (running or waiting); at ~1 s per read of a 100k-order store the last waits ~16 s. */
export const MAX_IN_WORKER = 16
export const RETRY_AFTER_S = 2

export interface GuestReader {
  readonly mode: 'worker' | 'inline'
  read<K extends GuestReadKind>(req: Extract<GuestRead, { kind: K }>): Promise<GuestReadResults[K]>
  /** Reads in the worker now (running or waiting). */
  inFlight(): number
  /** Test hook: the worker blocks until the returned function is called (reads queue behind it). */
  hold(): Promise<() => void>
  /** Test hook: the worker exits; resolves once it has. */
  crash(): Promise<void>
  /** Terminates the worker; reads still in it answer 503. */
  close(): Promise<void>
}

const busy = (why: string) => new ApiError('unavailable', why, undefined, { 'Retry-After': String(RETRY_AFTER_S) })

/** The worker beside this file (src/threads/spawn.ts starts it from the sources or the build alike). */
const spawn = (path: string): Worker => spawnWorker(new URL('./guests-worker.ts', import.meta.url), { workerData: { path } })

export function createGuestReader(db: Db, opts: { log: Logger; worker?: boolean; maxInWorker?: number }): GuestReader {
  if (opts.worker === false || db.memory || db.name === '' || db.name === ':memory:') return inlineReader(db)
  const path = resolve(db.name)
  const max = opts.maxInWorker ?? MAX_IN_WORKER
  const pending = new Map<number, { ok(v: unknown): void; fail(e: unknown): void; control: boolean }>()
  const held = new Set<Int32Array>()
  let worker: Worker | null = null
  let exited: Promise<void> = Promise.resolve()
  let seq = 0
  let closed = false

  const current = (): Worker => {
    if (worker) return worker
    const w = spawn(path)
    w.unref() // the server's listener keeps the process alive; a forgotten reader must not
    w.on('message', (r: WorkerReply) => {
      const p = pending.get(r.id)
      if (!p) return
      pending.delete(r.id)
      if (r.ok) p.ok(r.value)
      else p.fail(new Error(`guest read failed: ${r.error}`))
    })
    w.on('error', (err) => opts.log.error({ err }, 'guest read worker failed'))
    exited = new Promise((done) => w.once('exit', (code) => {
      if (worker === w) worker = null
      if (!closed) opts.log.warn({ code, lost: reads() }, 'guest read worker exited; the next guest read starts another')
      for (const p of pending.values()) p.fail(busy('The guest read was interrupted; retry shortly.'))
      pending.clear()
      done()
    }))
    worker = w
    return w
  }

  const send = <T>(msg: WorkerRequest | WorkerControl, control: boolean): Promise<T> =>
    new Promise<T>((ok, fail) => {
      pending.set(msg.id, { ok: ok as (v: unknown) => void, fail, control })
      current().postMessage(msg)
    })

  const reads = () => [...pending.values()].filter((p) => !p.control).length
  return {
    mode: 'worker',
    inFlight: reads,
    read<K extends GuestReadKind>(req: Extract<GuestRead, { kind: K }>): Promise<GuestReadResults[K]> {
      if (closed) return Promise.reject(busy('The server is shutting down.'))
      if (reads() >= max) return Promise.reject(busy('Too many guest reports are being computed; retry shortly.'))
      return send<GuestReadResults[K]>({ ...req, id: ++seq }, false)
    },
    async hold() {
      const flag = new Int32Array(new SharedArrayBuffer(4))
      held.add(flag)
      await send({ id: ++seq, kind: 'hold', flag }, true)
      return () => {
        held.delete(flag)
        Atomics.store(flag, 0, 1)
        Atomics.notify(flag, 0)
      }
    },
    async crash() {
      current()
      const gone = exited
      send({ id: ++seq, kind: 'crash' }, true).catch(() => {})
      await gone
    },
    async close() {
      closed = true
      // A held worker would never see the termination.
      for (const flag of held) { Atomics.store(flag, 0, 1); Atomics.notify(flag, 0) }
      held.clear()
      const w = worker
      if (w) { await w.terminate(); await exited }
    },
  }
}

function inlineReader(db: Db): GuestReader {
  const hook = () => Promise.reject(new Error('guest reads run inline here: there is no worker'))
  return {
    mode: 'inline',
    inFlight: () => 0,
    read: <K extends GuestReadKind>(req: Extract<GuestRead, { kind: K }>) => Promise.resolve().then(() => runGuestRead<K>(db, req)),
    hold: hook,
    crash: hook,
    close: () => Promise.resolve(),
  }
}
