/**
 * Snapshots (docs/cluster.md "Snapshots and joining"): the primary copies its database
 * (SQLite's online backup, in a worker thread on a connection of its own: snapshot-copy-worker.ts) once every
 * CLUSTER_SNAPSHOT_EVERY stream messages, and puts the copy in the JetStream object store
 * `{CLUSTER_NAME}_snap_0`, named by the stream sequence it holds. A node that joins empty, or that
 * fell behind what the stream keeps, restores the newest snapshot and replays the stream from the
 * message after it. The stream keeps what the oldest kept snapshot needs: after a snapshot is stored,
 * the snapshots past CLUSTER_SNAPSHOTS_KEPT are deleted and the stream is purged up to the oldest kept.
 *
 * A snapshot holds only what the stream confirmed: the copy's own `_cluster_state` says which message
 * it ends with, and it is stored only once the stream has confirmed that message (a primary fenced
 * before that drops it); a copy with captured changes not yet sent (an operator CLI write between two
 * pumps) is dropped and taken again later, so a restored node never holds a row the stream has not.
 */
import { createReadStream, createWriteStream, rmSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { finished } from 'node:stream/promises'
import type { ObjectInfo } from '@nats-io/obj'
import type { Logger } from '../log.ts'
import { spawnWorker } from '../threads/spawn.ts'
import type { CopyReply, CopyRequest } from './snapshot-copy-worker.ts'
import type { ClusterLink } from './nats.ts'

export interface SnapshotInfo {
  name: string
  /** The last stream message the snapshot holds, and its id. */
  seq: number
  id: string
  /** The schema version (newest migration) of the database copied. */
  schema: number
  bytes: number
}

const nameOf = (seq: number): string => `snapshot-${String(seq).padStart(15, '0')}`

function infoOf(o: ObjectInfo): SnapshotInfo | null {
  try {
    const d = JSON.parse(o.description ?? '') as { seq?: unknown; id?: unknown; schema?: unknown }
    if (typeof d.seq === 'number' && typeof d.id === 'string' && typeof d.schema === 'number' && !o.deleted) return { name: o.name, seq: d.seq, id: d.id, schema: d.schema, bytes: o.size }
  } catch { /* not one of ours */ }
  return null
}

/** The snapshots the object store holds, oldest first. */
export async function listSnapshots(link: ClusterLink): Promise<SnapshotInfo[]> {
  const all = await link.snapshots.list()
  return all.map(infoOf).filter((s): s is SnapshotInfo => s !== null).sort((a, b) => a.seq - b.seq)
}

export interface TakeOptions {
  /** The primary's database file: copied on a connection of the copy thread's own. */
  dbPath: string
  link: ClusterLink
  /** Resolves true once the stream has confirmed message `seq`, false if it never will (fenced). */
  confirmed(seq: number): Promise<boolean>
  kept: number
  log: Logger
}

/**
 * Copy the primary's database, and store the copy once the stream confirmed everything it holds;
 * then keep the newest `kept` snapshots and purge the stream below the oldest of them. Resolves with
 * what was stored, or null when this copy was dropped (to be taken again later).
 */
export async function takeSnapshot(o: TakeOptions): Promise<SnapshotInfo | null> {
  const tmp = `${o.dbPath}.snapshot-tmp`
  rmSync(tmp, { force: true })
  try {
    const copied = await copyForSnapshot(o.dbPath, tmp)
    if (copied.unsent > 0) {
      o.log.info({ unsent: copied.unsent }, 'snapshot dropped: it holds changes not yet sent to the stream; taken again later')
      return null
    }
    const { seq, id, schema } = copied
    if (seq === 0 || !(await o.confirmed(seq))) return null
    const info = await o.link.snapshots.put(
      { name: nameOf(seq), description: JSON.stringify({ seq, id, schema }) },
      Readable.toWeb(createReadStream(tmp)) as unknown as ReadableStream<Uint8Array>,
    )
    o.log.info({ seq, bytes: info.size }, 'snapshot stored')
    await prune(o.link, o.kept, o.log)
    return { name: info.name, seq, id, schema, bytes: info.size }
  } finally {
    rmSync(tmp, { force: true })
  }
}

/**
 * Copy the database at `source` to `target` in a worker thread (src/cluster/snapshot-copy-worker.ts):
 * the copy's writes and syncs never hold the server's event loop. Resolves with what the copy holds.
 */
function copyForSnapshot(source: string, target: string): Promise<Extract<CopyReply, { ok: true }>> {
  return new Promise((resolve, reject) => {
    const worker = spawnWorker(new URL('./snapshot-copy-worker.ts', import.meta.url), { workerData: { source, target } satisfies CopyRequest })
    worker.once('message', (reply: CopyReply) => {
      void worker.terminate()
      if (reply.ok) resolve(reply)
      else reject(new Error(`snapshot copy failed: ${reply.error}`))
    })
    worker.once('error', reject)
    worker.once('exit', (code) => reject(new Error(`snapshot copy thread ended (${code})`)))
  })
}

/** Keep the newest `kept` snapshots; the stream keeps what the oldest of them needs, and no more. */
async function prune(link: ClusterLink, kept: number, log: Logger): Promise<void> {
  const all = await listSnapshots(link)
  for (const old of all.slice(0, Math.max(0, all.length - kept))) await link.snapshots.delete(old.name)
  const oldest = all.slice(-kept)[0]
  if (!oldest) return
  const r = await link.jsm.streams.purge(link.names.stream, { seq: oldest.seq + 1 })
  if (r.purged > 0) log.info({ purged: r.purged, below: oldest.seq + 1 }, 'stream purged below the oldest kept snapshot')
}

/**
 * Download `snap` to `path` (a file beside the database, renamed over it by the caller once the
 * database is closed). Checked by the object store's digest.
 */
export async function downloadSnapshot(link: ClusterLink, snap: SnapshotInfo, path: string): Promise<void> {
  rmSync(path, { force: true })
  const r = await link.snapshots.get(snap.name)
  if (!r) throw new Error(`snapshot ${snap.name} is gone from the object store`)
  const out = createWriteStream(path)
  for await (const chunk of r.data as unknown as AsyncIterable<Uint8Array>) {
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()))
  }
  out.end()
  await finished(out)
  const err = await r.error
  if (err) { rmSync(path, { force: true }); throw err }
  // On disk before it replaces the database: a crash right after must not leave half a file.
  const fh = await open(path, 'r+')
  try { await fh.sync() } finally { await fh.close() }
}
