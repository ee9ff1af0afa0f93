/**
 * One node of a cluster (docs/cluster.md): starts as a replica — its database checked against the
 * stream, the capture triggers removed, the stream applied from its last message — and tries for the
 * lease whenever nobody holds it. Holding it, the node becomes primary only after it has applied the
 * whole stream and appended its *epoch* message with the stream's last sequence as the expected one:
 * from then on nothing the previous primary sends can land. Then the capture triggers go in, the
 * Replicator takes over, and `promote` starts the full server.
 *
 * A primary that loses its lease or is fenced by the stream stops acknowledging at once and `exit`
 * ends the process (crash-only: its supervisor starts it again, as a replica). A graceful stop
 * releases the lease so a replica takes over at once.
 */
import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from '../log.ts'
import type { Db } from '../storage/db.ts'
import { ensureChangeTables, installCapture, removeCapture } from '../storage/changes.ts'
import type { ClusterConfig } from './config.ts'
import { lastSeq, linkCluster, streamBounds, type ClusterLink } from './nats.ts'
import { downloadSnapshot, listSnapshots, takeSnapshot, type SnapshotInfo } from './snapshots.ts'
import { Lease } from './lease.ts'
import { Applier } from './applier.ts'
import { Replicator, type Publish } from './replicator.ts'
import { decodeMessage, encodeMessage, FORMAT } from './batch.ts'
import { readApplied, recordApplied, schemaVersion } from './state.ts'

export interface ClusterStatus {
  role: 'replica' | 'promoting' | 'primary'
  node: string
  /** The lease holder's NODE_ID (null while nobody holds it). */
  primary: string | null
  applied_seq: number
  /** How far this node's data is behind the primary's commits, in ms (0 on the primary). */
  lag_ms: number
  /** Why this node cannot serve (a replica that stopped applying, a fenced primary), or null. */
  problem: string | null
  /**
   * A replica's commit-to-apply delay over its last messages (the primary's capture time to this
   * node's commit, one clock per machine: skew between machines counts), or null.
   */
  apply_delay_ms: { p50: number; p99: number; max: number; samples: number } | null
  /**
   * Replicas: the public reads answered from this node's own database, and those of the same list
   * forwarded to the primary instead (src/http/replica-reads.ts); absent on the primary.
   */
  local_reads?: { served: number; forwarded: number; lag_bound_ms: number | null; refused: string | null }
  ready: boolean
}

/** The node's database holds writes the stream never took: it is set aside and the node rejoins from the stream. */
export class DivergedError extends Error {}
/** The database and the stream disagree in a way an operator must look at: the node does not start. */
export class RefusedError extends Error {}
/**
 * The node joins from a snapshot (empty, or behind what the stream keeps): it was downloaded to
 * `path`, to replace the database file once it is closed.
 */
export class RestoreError extends Error {
  constructor(readonly path: string, readonly snapshot: SnapshotInfo) { super(`restoring snapshot ${snapshot.name} (message ${snapshot.seq})`) }
}

export interface NodeOptions {
  cluster: ClusterConfig
  db: Db
  dbPath: string
  log: Logger
  /**
   * Build and start the full server on this database, writing through `replicator`; `renew` renews
   * the lease at once, for after work that held the event loop (false: the lease is gone).
   */
  promote(replicator: Replicator, renew: () => Promise<boolean>, forwardSecret: string): Promise<void>
  /**
   * Linked to the cluster, as a replica: `forwardSecret` proves this node to the primary when it
   * forwards; `nc` carries live frames (src/cluster/frame-link.ts).
   */
  joined(forwardSecret: string, nc: NatsConnection): void
  /** End the process now (fenced, or the lease lost): acknowledging anything more could lose it. */
  exit(why: string): void
}

/**
 * How stale a replica's data may be, in ms: 0 while it holds everything the stream had when last
 * asked; else the age of the newest moment its data is known complete — the commit time of the last
 * message applied, or the last time it found itself caught up (`currentAt`: every message after that
 * check was committed after it), whichever is later. After an idle hour the first new message makes
 * the replica at most a check's interval behind, not an hour.
 */
export function replicaLagMs(o: { appliedSeq: number; appliedAt: number; streamLast: number; pending: number; currentAt: number; now: number }): number {
  if (o.appliedSeq >= o.streamLast && o.pending === 0) return 0
  // Never known complete (an empty node before its first message): counted from the epoch, so it is
  // neither ready nor serving reads until it knows better.
  return Math.max(0, o.now - Math.max(o.appliedAt, o.currentAt))
}

/**
 * Whether the primary takes a snapshot now: CLUSTER_SNAPSHOT_EVERY messages confirmed since the last
 * one, and at least CLUSTER_SNAPSHOT_MIN_INTERVAL_MS since it last started one. Under a heavy write
 * load the count alone comes round every few seconds (10,000 messages are ~20 s at 2,000 orders/s),
 * and each snapshot copies the whole file; the interval bounds that cost, and the stream keeps more
 * messages in between instead.
 */
export function snapshotDue(o: { confirmed: number; lastSnapshot: number; every: number; lastStartedAt: number | null; minIntervalMs: number; now: number }): boolean {
  if (o.confirmed - o.lastSnapshot < o.every) return false
  return o.lastStartedAt === null || o.now - o.lastStartedAt >= o.minIntervalMs
}

export class ClusterNode {
  private role: ClusterStatus['role'] = 'replica'
  private primary: string | null = null
  private primaryUrl: string | null = null
  /** The primary's process (its lease's term): a primary restarted under the same name is another term. */
  private term: string | null = null
  private streamLast = 0
  /** When the watch last read the stream's length (0: not yet): this replica's lag is known as of then. */
  private streamAt = 0
  /** When the watch, asking the stream's length, last found this replica holding all of it (0: not yet). */
  private currentAt = 0
  private applier: Applier | null
  private replicator: Replicator | null = null
  private timer: NodeJS.Timeout | null = null
  private snapshotTimer: NodeJS.Timeout | null = null
  private stopped = false
  /** Fenced while NATS cannot be reached: serving reads from this node's data until it can (why), or null. */
  private readOnly: string | null = null

  private constructor(private readonly o: NodeOptions, private readonly link: ClusterLink, private readonly lease: Lease, applier: Applier) {
    this.applier = applier
  }

  /** Connect, check the database against the stream, start applying, and begin watching the lease. */
  static async start(o: NodeOptions): Promise<ClusterNode> {
    const link = await linkCluster(o.cluster)
    try {
      ensureChangeTables(o.db)
      const snapshot = await placeInStream(o.db, link)
      if (snapshot) {
        const path = `${o.dbPath}.restore`
        await downloadSnapshot(link, snapshot, path)
        throw new RestoreError(path, snapshot)
      }
      removeCapture(o.db)
      const applier = new Applier(o.dbPath, link, o.log)
      // Behind what the stream keeps (it was purged after a snapshot): start again, from the snapshot.
      applier.onFellBehind = (why) => o.exit(why)
      await applier.start()
      const node = new ClusterNode(o, link, new Lease(link.kv, o.cluster.nodeId, o.cluster.nodeUrl, o.cluster.leaseMs, o.log), applier)
      o.joined(link.forwardSecret, link.nc)
      node.watch()
      return node
    } catch (err) {
      await link.close()
      throw err
    }
  }

  status(): ClusterStatus {
    const now = Date.now()
    const base = { node: this.o.cluster.nodeId, primary: this.primary }
    if (this.role === 'primary') {
      const problem = this.readOnly ? `read-only: ${this.readOnly}` : this.replicator?.fenced ? 'fenced' : this.replicator?.stalled ? 'the replication stream does not take writes' : null
      return { ...base, role: 'primary', applied_seq: this.replicator?.lastCaptured ?? 0, lag_ms: 0, problem, apply_delay_ms: null, ready: problem === null && this.lease.valid() }
    }
    const s = this.applier?.status()
    const applied = s?.applied.seq ?? 0
    const lag = replicaLagMs({ appliedSeq: applied, appliedAt: s?.applied.at ?? 0, streamLast: this.streamLast, pending: s?.pending ?? 0, currentAt: this.currentAt, now })
    const problem = s?.problem ?? null
    return { ...base, role: this.role, applied_seq: applied, lag_ms: lag, problem, apply_delay_ms: s?.delays ?? null, ready: this.role === 'replica' && problem === null && this.lagKnown(now) && lag <= this.o.cluster.maxLagMs }
  }

  /**
   * Where a replica forwards what it does not serve (src/http/forward.ts): the primary's NODE_URL,
   * as the lease said last; null before any primary was seen, or on the primary itself.
   */
  forwardTarget(): string | null {
    return this.role === 'replica' && this.primary !== this.o.cluster.nodeId ? this.primaryUrl : null
  }

  /** The primary's term (src/cluster/lease.ts Holder): the live frames of a replica's own sockets are that term's. */
  primaryTerm(): string | null {
    return this.term
  }

  /**
   * Whether this replica's lag is known: it read the stream's length within the last three leases (it
   * does every third of one). Not yet (just started), or not lately (cut off from NATS: its data may
   * be behind without its knowing), and it is not ready: sockets it would serve itself are tunnelled.
   * Three leases, not one: a watch slowed by a busy machine is no reason to drop out of a load
   * balancer (its public reads already pass to the primary after one, src/http/replica-reads.ts).
   */
  private lagKnown(now: number): boolean {
    return this.streamAt > 0 && now - this.streamAt <= 3 * this.o.cluster.leaseMs
  }

  /**
   * When this replica last learned how long the stream is (0: not since it started): its `lag_ms` is
   * only as current as that. A replica answers public reads itself only while it is recent
   * (src/http/replica-reads.ts): one restarted from an old file, or cut off from NATS, does not.
   */
  streamCheckedAt(): number {
    return this.streamAt
  }

  /** Every third of a lease: who is primary, how long the stream is, and whether to take the lease. */
  private watch(): void {
    const tick = async () => {
      if (this.stopped || this.role !== 'replica') return
      try {
        const holder = await this.lease.holder()
        this.primary = holder?.node ?? null
        this.term = holder?.term ?? null
        // Kept while nobody holds the lease: a primary fenced while NATS has no majority still serves
        // reads there (and a dead one simply does not answer: 503 either way).
        if (holder?.url) this.primaryUrl = holder.url
        // Taken before asking: whatever the answer does not count was committed after this moment.
        const asked = Date.now()
        this.streamLast = await lastSeq(this.link)
        this.streamAt = Date.now()
        this.applier?.nudge(this.streamLast)
        // Only a replica that has applied the whole stream contends: one still replaying a long
        // history would hold the lease while it catches up.
        const s = this.applier?.status()
        const caughtUp = s !== undefined && s.problem === null && s.pending === 0 && s.applied.seq >= this.streamLast
        if (s !== undefined && s.pending === 0 && s.applied.seq >= this.streamLast) this.currentAt = asked
        if (this.primary === null && caughtUp && await this.lease.acquire()) {
          this.primary = this.o.cluster.nodeId
          this.term = this.lease.term
          this.primaryUrl = this.o.cluster.nodeUrl
          try {
            await this.promote()
          } catch (err) {
            // Not primary after all (the catch-up or the epoch failed): give the lease up and start
            // again as a replica, rather than hold it while nobody serves.
            this.o.log.error({ err }, 'could not become primary; giving the lease up')
            await this.lease.release()
            this.o.exit(`could not become primary: ${(err as Error).message}`)
          }
          return
        }
      } catch (err) {
        this.o.log.warn({ err }, 'cluster watch failed; trying again')
      }
      if (!this.stopped && this.role === 'replica') this.timer = setTimeout(() => void tick(), this.o.cluster.leaseMs / 3)
    }
    void tick()
  }

  private async promote(): Promise<void> {
    const { db, cluster, log } = this.o
    this.role = 'promoting'
    this.lease.keep((why) => this.lost(why))
    log.info({ node: cluster.nodeId }, 'took the lease; catching up before becoming primary')
    const schema = schemaVersion(db)
    const publish: Publish = async (data, { expectedLastSeq, msgId }) => {
      const ack = await this.link.js.publish(this.link.names.subject, data, { msgID: msgId, expect: { lastSequence: expectedLastSeq }, timeout: 5000 })
      return { seq: ack.seq, duplicate: ack.duplicate }
    }
    // Apply everything, then append the epoch with the last sequence seen: refused while a previous
    // primary still appends (it stops once it sees its lease gone), so catch up again and retry.
    let epoch: { seq: number; id: string; at: number } | null = null
    const id = `${cluster.nodeId}:epoch:${Date.now()}`
    while (!epoch) {
      if (!this.lease.valid()) return this.lost('the lease ran out while catching up')
      const target = await lastSeq(this.link)
      await this.applier!.waitFor(target, 60_000)
      const at = Date.now()
      try {
        const ack = await publish(encodeMessage({ k: 'epoch', f: FORMAT, node: cluster.nodeId, id, schema, at }), { expectedLastSeq: target, msgId: id })
        epoch = { seq: ack.seq, id, at }
      } catch (err) {
        if (!/wrong last sequence/i.test((err as Error).message)) throw err
      }
    }
    await this.applier!.stop()
    this.applier = null
    db.transaction(() => recordApplied(db, epoch)).immediate()
    const tables = installCapture(db)
    this.replicator = new Replicator({
      db, tables, publish, nodeId: cluster.nodeId, schema, lastSeq: epoch.seq, log,
      leaseValid: () => this.lease.valid(),
      leaseRenewal: () => this.lease.renewal(),
      leaseMs: cluster.leaseMs,
      maxPayload: this.link.nc.info?.max_payload ?? 1024 * 1024,
      onFenced: (why) => void this.fenced(why),
    })
    this.role = 'primary'
    log.info({ node: cluster.nodeId, seq: epoch.seq }, 'primary')
    await this.o.promote(this.replicator, () => this.lease.renewNow(), this.link.forwardSecret)
    this.scheduleSnapshots((await listSnapshots(this.link)).at(-1)?.seq ?? 0)
  }

  /**
   * Every few seconds on the primary: a snapshot once it is due (`snapshotDue`; src/cluster/snapshots.ts).
   * One at a time; a failed one is tried again later.
   */
  private scheduleSnapshots(lastSnapshot: number): void {
    const { dbPath, cluster, log } = this.o
    let busy = false
    // When this primary last started one, on the monotonic clock (null: not yet; one due at promotion
    // is taken at once). A wall clock set back would hold snapshots off by as much.
    let lastStartedAt: number | null = null
    const confirmed = async (seq: number): Promise<boolean> => {
      const deadline = Date.now() + 30_000
      while (this.replicator && !this.replicator.fenced && this.replicator.lastConfirmed < seq) {
        if (Date.now() > deadline) return false
        await new Promise((r) => setTimeout(r, 100))
      }
      return Boolean(this.replicator && !this.replicator.fenced)
    }
    this.snapshotTimer = setInterval(() => {
      const r = this.replicator
      if (busy || this.stopped || !r || r.fenced) return
      const now = performance.now()
      if (!snapshotDue({ confirmed: r.lastConfirmed, lastSnapshot, every: cluster.snapshotEvery, lastStartedAt, minIntervalMs: cluster.snapshotMinIntervalMs, now })) return
      busy = true
      lastStartedAt = now
      takeSnapshot({ dbPath, link: this.link, confirmed, kept: cluster.snapshotsKept, log })
        .then((taken) => { if (taken) lastSnapshot = taken.seq })
        .catch((err: unknown) => log.warn({ err }, 'snapshot failed; trying again later'))
        .finally(() => { busy = false })
    }, SNAPSHOT_CHECK_MS)
    this.snapshotTimer.unref()
  }

  /**
   * Fenced: nothing more is acknowledged. With NATS answering, another node leads: end now, and
   * rejoin as a replica. Cut off from NATS (a majority of it down, or this machine's link), nobody
   * can take writes: keep serving reads and open sockets from this node's data (writes answer 503),
   * and end only once NATS answers again (docs/cluster.md "Failures").
   */
  private async fenced(why: string): Promise<void> {
    if (await this.natsAnswers()) return this.o.exit(`fenced: ${why}`)
    this.readOnly = `${why}; NATS cannot be reached, reads are served from this node's data until it can`
    this.o.log.warn({ why }, 'fenced with NATS unreachable: serving reads until NATS answers again')
    const retry = async () => {
      if (this.stopped) return
      if (await this.natsAnswers()) return this.o.exit(`fenced: ${why}; NATS answers again, rejoining as a replica`)
      setTimeout(() => void retry(), READ_ONLY_PROBE_MS).unref()
    }
    setTimeout(() => void retry(), READ_ONLY_PROBE_MS).unref()
  }

  /**
   * Whether JetStream takes writes now: a put to the lease bucket within a second (a write needs a
   * majority of the NATS servers; a read such as a stream's info is answered by a lone survivor).
   */
  private async natsAnswers(): Promise<boolean> {
    const probe = this.link.kv.put(`probe.${this.o.cluster.nodeId}`, new Uint8Array()).then(() => true, () => false)
    return Promise.race([probe, new Promise<boolean>((r) => setTimeout(() => r(false), 1000).unref())])
  }

  private lost(why: string): void {
    if (this.replicator) this.replicator.fence(`lease lost: ${why}`)
    else this.o.exit(`lease lost while becoming primary: ${why}`)
  }

  /**
   * Graceful stop (after the server drained): what the primary committed last reaches the stream,
   * then it gives its lease up (a replica takes over at once); the link closes.
   */
  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    if (this.snapshotTimer) clearInterval(this.snapshotTimer)
    await this.replicator?.idle(5000)
    if (this.role !== 'replica') await this.lease.release()
    else this.lease.stop()
    await this.applier?.stop()
    await this.link.close()
  }
}

/** How far ahead of the stream a database may be and still be set aside automatically (an unconfirmed tail). */
export const MAX_AUTO_SET_ASIDE = 64

/** How often a node fenced while cut off from NATS asks whether NATS answers again. */
const READ_ONLY_PROBE_MS = 1000

/** How often the primary checks whether a snapshot is due. */
const SNAPSHOT_CHECK_MS = 2000

/**
 * Where this database stands in the stream, before it applies anything: resume from its last
 * message, or restore a snapshot (returned) when it is empty or behind what the stream keeps.
 *
 * Its last recorded message must be the stream's message at that sequence, and it must hold no
 * captured change that was never sent. A primary killed between its COMMIT and the stream's
 * confirmation holds a batch nobody else has (and no client was told about): such a database cannot
 * rejoin as it is, and is set aside (DivergedError). Anything that does not look like such a short
 * tail — far ahead of the stream, a stream that lost what this database holds, a database with data
 * but no place in the stream (a single server's file) — is not for a machine to decide: the node
 * refuses to start (RefusedError), and says why.
 */
async function placeInStream(db: Db, link: ClusterLink): Promise<SnapshotInfo | null> {
  const unsent = db.prepare('SELECT COUNT(*) FROM _changes').pluck().get() as number
  const mine = readApplied(db)
  const { first, last } = await streamBounds(link)
  const snapshots = await listSnapshots(link)
  const latest = snapshots.at(-1) ?? null
  const restore = (why: string): SnapshotInfo => {
    if (!latest) throw new RefusedError(`${why}, and the cluster holds no snapshot to start from`)
    if (latest.schema > schemaVersion(db)) throw new RefusedError(`the newest snapshot was written by schema version ${latest.schema}, this build has ${schemaVersion(db)}: upgrade this node`)
    return latest
  }
  if (mine.seq === 0) {
    if (unsent > 0 || hasData(db)) throw new RefusedError('this database holds data but no place in the stream: a cluster starts from an empty database (docs/cluster.md "Not yet": bootstrapping from an existing one)')
    // Joining: from the newest snapshot when there is one (the stream may no longer start at 1).
    if (latest) return restore('joining')
    if (first > 1 && last >= first) return restore('the stream no longer starts at its first message')
    return null
  }
  if (mine.seq > last) {
    if (mine.seq - last > MAX_AUTO_SET_ASIDE) throw new RefusedError(`this database holds message ${mine.seq}, the stream ends at ${last}: the stream lost messages (wrong CLUSTER_NAME, or JetStream storage lost?). Fix NATS, or move DB_PATH aside to rejoin from what the stream holds`)
    throw new DivergedError(`this database holds message ${mine.seq}; the stream ends at ${last}`)
  }
  // Its own last message was purged: it holds a snapshot's exact state and the stream goes on right
  // after it (a node just restored), or it is behind what the stream keeps and restores the newest.
  if (mine.seq < first) {
    const atSnapshot = snapshots.some((s) => s.seq === mine.seq && s.id === mine.id)
    if (atSnapshot && mine.seq === first - 1 && unsent === 0) return null
    if (latest && latest.seq >= mine.seq) return restore(`this database ends at message ${mine.seq}, the stream keeps ${first} on`)
    throw new RefusedError(`the stream no longer holds message ${mine.seq}, this database's last, nor a snapshot past it: move DB_PATH aside to rejoin from the stream`)
  }
  // Null only when the stream answers that it has no such message: a timeout (an election under way)
  // fails the start, to be tried again, rather than refuse a node whose place is fine.
  const stored = await link.jsm.streams.getMessage(link.names.stream, { seq: mine.seq })
  if (!stored) throw new RefusedError(`the stream no longer holds message ${mine.seq}, this database's last: move DB_PATH aside to rejoin from the stream`)
  const theirs = decodeMessage(stored.data)
  if (theirs.id !== mine.id) throw new DivergedError(`this database's message ${mine.seq} is ${mine.id}; the stream's is ${theirs.id}`)
  if (unsent > 0) throw new DivergedError(`this database holds ${unsent} captured changes the stream never took`)
  return null
}

/** Whether a database that never joined a cluster already holds an account. */
const hasData = (db: Db): boolean => Boolean(db.prepare('SELECT 1 FROM owners LIMIT 1').get())
