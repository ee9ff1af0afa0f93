/**
 * Making WAL commits durable off the event loop.
 *
 * At `synchronous=FULL` SQLite fsyncs the WAL inside COMMIT, on the calling thread: the event loop
 * stands still for the whole fsync (a millisecond or more under load) and nothing else is parsed,
 * priced or answered meanwhile. The group committer instead commits at `synchronous=NORMAL` (the
 * frames are written to the WAL file, in the operating system's hands: a kill -9 cannot lose them)
 * and then asks this module for an fdatasync of the WAL file on libuv's thread pool. Only when that
 * returns are the batch's callers answered, so an acknowledged write survives a power cut exactly
 * as at FULL; the event loop keeps working while the disk does.
 *
 * Syncs are coalesced: one is in flight at a time, and every commit that finished while it ran
 * waits for the next one, which covers them all (an fsync started before a write may not cover it).
 */
import { closeSync, fdatasync, fdatasyncSync, openSync, statSync } from 'node:fs'
import type { Db } from './db.ts'

export type SyncDone = (err: Error | null) => void

export interface WalSync {
  /** Call `done` once everything committed before this call is on stable storage. */
  afterCommit(done: SyncDone): void
  /** Is an fdatasync in flight now? (A commit made meanwhile waits for the next one anyway.) */
  readonly busy: boolean
  /**
   * Called each time a sync returned, after its callers were answered and before the next one
   * starts: a committer that held its batch while the sync ran commits it here, so the next sync
   * covers it (see commit.ts).
   */
  onIdle: (() => void) | null
  /** The same, now, on this thread (shutdown). */
  syncNow(): void
  close(): void
}

/** A syncer for `db`'s WAL file, or null when there is none to sync (in-memory, not WAL). */
export function createWalSync(db: Db, observe?: (seconds: number) => void): WalSync | null {
  if (db.memory || String(db.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') return null
  const path = `${db.name}-wal`
  let fd = -1
  let ino = -1
  let waiting: SyncDone[] = []
  let running = false

  /** The WAL file's descriptor; reopened if the file was replaced (deleted and recreated). */
  function walFd(): number {
    const st = statSync(path)
    if (fd >= 0 && st.ino === ino) return fd
    if (fd >= 0) closeSync(fd)
    fd = openSync(path, 'r')
    ino = st.ino
    return fd
  }

  function settle(batch: SyncDone[], err: Error | null): void {
    for (const done of batch) done(err)
  }

  function start(): void {
    const batch = waiting
    waiting = []
    let target: number
    try {
      target = walFd()
    } catch (err) {
      settle(batch, err as Error)
      return
    }
    running = true
    const t0 = observe ? performance.now() : 0
    fdatasync(target, (err) => {
      running = false
      observe?.((performance.now() - t0) / 1000)
      settle(batch, err)
      api.onIdle?.()
      if (waiting.length > 0 && !running) start()
    })
  }

  const api: WalSync = {
    get busy() { return running },
    onIdle: null,
    afterCommit(done) {
      waiting.push(done)
      if (!running) start()
    },
    syncNow() {
      const batch = waiting
      waiting = []
      let err: Error | null = null
      try { fdatasyncSync(walFd()) } catch (e) { err = e as Error }
      settle(batch, err)
    },
    close() {
      if (fd >= 0) closeSync(fd)
      fd = -1
    },
  }
  return api
}
