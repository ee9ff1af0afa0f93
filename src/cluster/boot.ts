/**
 * Running as a cluster node (docs/cluster.md), what main.ts does instead of serving alone: the
 * database is checked against the stream (a database with writes the stream never took is moved
 * aside and the node rejoins from the stream), the node listens as a replica at once, and when it
 * becomes primary the full server replaces the replica's listener on the same port. The demo account
 * is created by the first primary of an empty cluster, and printed by it alone, once the stream holds it.
 */
import { existsSync, renameSync, rmSync } from 'node:fs'
import type { Config } from '../config.ts'
import type { Logger } from '../log.ts'
import type { Db } from '../storage/db.ts'
import { buildApp, type App } from '../app.ts'
import { replicaServer } from '../http/replica.ts'
import { databaseReadiness } from '../storage/health.ts'
import { forwarder, type Forwarder } from '../http/forward.ts'
import { replicaReads, type ReplicaReads } from '../http/replica-reads.ts'
import { mcpEndpoints } from '../mcp/endpoints.ts'
import { catalogServer } from '../mcp/servers/catalog.ts'
import { withClusterSecret } from '../net/client-address.ts'
import { seedDemo } from '../seed.ts'
import { firstRunMessage } from '../first-run.ts'
import { ClusterNode, DivergedError, RefusedError, RestoreError } from './node.ts'
import { allOwn, answerFrameOps, publishTrackFrames, type FrameLink } from './frame-link.ts'
import { kdsRemoteStep } from '../ws/kds.ts'
import { replicaSockets } from '../ws/replica-sockets.ts'
import { kdsOnReplica, ownerFeedOnReplica, replicaFeeds } from '../ws/replica-feeds.ts'
import { driverOnReplica } from '../ws/replica-driver.ts'
import { driverRemoteLocations, tellConnection, type RemoteLocationStore } from '../ws/driver.ts'
import { ordersFeed } from '../ws/orders.ts'
import { dispatchFeed } from '../ws/dispatch.ts'
import { dropCaptureTriggersOf } from '../storage/changes.ts'
import { EXIT, StartupError } from '../startup.ts'
import { allRoutes } from '../http/routes/index.ts'
import { fullPath } from '../http/server.ts'

/** The routes with a body limit of their own (the photo uploads), as the forwarder matches them: a `{param}` is one path segment. */
export function largeBodyRoutes(config: Config): Array<{ path: RegExp; limitBytes: number }> {
  return allRoutes().filter((r) => r.binding?.bodyLimit).map((r) => ({
    path: new RegExp(`^${fullPath(r).replace(/\{[^}]+\}/g, '[^/]+')}$`),
    limitBytes: r.binding!.bodyLimit!(config),
  }))
}

export interface Running {
  /** Graceful stop: resolves with the exit code. */
  stop(): Promise<number>
}

/** `exit`: end the process soon, without a drain (fenced, or the lease lost). */
export async function serveCluster(config: Config, openDatabase: () => Db, log: Logger, exit: (why: string) => void): Promise<Running> {
  const cluster = config.cluster!
  dropCaptureTriggersOf(config.dbPath)
  let db = openDatabase()
  let app: App | null = null
  let node: ClusterNode | null = null
  // Listening as a replica from the start; the primary's server takes the port over when promoted.
  const starting = { role: 'replica', node: cluster.nodeId, primary: null, applied_seq: 0, lag_ms: 0, problem: 'starting', apply_delay_ms: null, ready: false } as const
  // What the replica does not serve itself goes to the primary, once the node knows the cluster's secret.
  let forward: Forwarder | null = null
  // Live frames on NATS: a replica serves tracking sockets and the owner feeds itself; the primary publishes their frames.
  let frameLink: FrameLink | null = null
  let frames: { stop(): void } | null = null
  // The public reads it answers from its own database (docs/cluster.md "Public reads on replicas").
  let reads: ReplicaReads | null = null
  const endReads = () => { const r = reads; reads = null; return r?.close() }
  // Its status as the replica's listener tells it: from the moment the node holds the primary role
  // until the full server has the port, "promoting" and not ready. Else a probe would see a ready
  // primary on a listener about to close, and its next request would find the port shut.
  const status = () => {
    const n = node?.status() ?? starting
    const s = n.role === 'primary' ? { ...n, role: 'promoting' as const, ready: false, problem: n.problem ?? 'the full server is taking the port over' } : n
    return reads ? { ...s, local_reads: reads.stats() } : s
  }
  const replica = replicaServer(() => databaseReadiness(db), status, () => node?.forwardTarget() ?? null, () => forward, log,
    allOwn(
      replicaSockets({ config, log, db: () => db, status, term: () => node?.primaryTerm() ?? null, link: () => frameLink }),
      replicaFeeds({ config, log, status, term: () => node?.primaryTerm() ?? null, link: () => frameLink, view: () => reads?.view ?? null, feeds: [ownerFeedOnReplica(ordersFeed), ownerFeedOnReplica(dispatchFeed), kdsOnReplica(), driverOnReplica()] }),
    ), () => reads)
  const listening = replica.listen(config.host, config.port)
  const start = () => ClusterNode.start({
    cluster, db, dbPath: config.dbPath, log, exit,
    joined: (secret, nc) => {
      frameLink = { nc, cluster: cluster.name, node: cluster.nodeId }
      const trust = withClusterSecret(config.trustProxy, secret)
      forward = forwarder({ secret, trust, bodyLimitBytes: config.bodyLimitBytes, largeBodies: largeBodyRoutes(config), log })
      reads = replicaReads({
        config: { ...config, trustProxy: trust }, dbPath: config.dbPath, log, node: cluster.nodeId, boundMs: cluster.readLagMs, leaseMs: cluster.leaseMs,
        // The public catalog's MCP server: its tools only read (api-v1 §4.11).
        mcp: (svc) => mcpEndpoints(svc, [catalogServer]),
        freshness: () => node ? { status: node.status(), streamCheckedAt: node.streamCheckedAt() } : null,
      })
    },
    promote: async (replicator, renew, secret) => {
      await listening
      // Building the server and seeding hold the event loop for a while: the lease is renewed after
      // each, so it counts from then, not from before (a lapsed lease fences the first writes).
      // Requests the replicas forward name their client, proved by the cluster's secret.
      app = buildApp({ ...config, trustProxy: withClusterSecret(config.trustProxy, secret) }, { db, log, replication: replicator, cluster: () => node!.status() })
      if (!await renew()) throw new Error('the lease was taken while the server was being built')
      const built = app as App
      // Driver apps connected to replicas count as connected here (their actor is told when that changes).
      const published = publishTrackFrames(frameLink!, () => replicator.lastCaptured, (orderId) => built.realtime.lastTrackLocation(orderId), log,
        () => built.realtime.connectedDrivers(), (driverId) => tellConnection(built.svc, built.realtime, driverId))
      built.realtime.remote = published.publisher
      built.realtime.hub.remote = published.publisher
      // The bumps and recalls of kitchen screens and the positions of driver apps served by replicas,
      // run here as this node's own sockets' are.
      const storeLocation: RemoteLocationStore = (driverId, lat, lng, at) => built.realtime.remoteLocations!(driverId, lat, lng, at)
      const ops = answerFrameOps(frameLink!, (req) => req.socket === 'driver' ? driverRemoteLocations(built.svc, storeLocation, req) : kdsRemoteStep(built.svc, req), log)
      frames = { stop() { published.stop(); ops.stop() } }
      replica.close()
      void forward?.close()
      // Its read-only view closes with the listener: the full server answers every read from here on.
      void endReads()
      await app.listen()
      if (config.demoSeed && (db.prepare('SELECT COUNT(*) FROM owners').pluck().get() as number) === 0) {
        const demo = seedDemo(db, config.siteUrl)
        if (!await renew()) throw new Error('the lease was lost while the demo account was created')
        // Written outside a batch: an empty one takes it to the stream before it is shown.
        await app.svc.committer.write(() => undefined)
        process.stdout.write(firstRunMessage(demo, config.siteUrl, config.providers.email.kind !== 'smtp'))
      }
      log.info({ node: cluster.nodeId, port: config.port }, 'dispatch server ready (primary)')
    },
  })
  await listening
  const replaceFile = (by: string) => {
    db.close()
    for (const suffix of ['-wal', '-shm']) rmSync(config.dbPath + suffix, { force: true })
    renameSync(by, config.dbPath)
    db = openDatabase()
  }
  // At most: set a diverged file aside, then restore a snapshot, then start.
  for (let attempt = 0; !node; attempt++) {
    try {
      node = await start()
    } catch (err) {
      if (err instanceof RefusedError) {
        replica.close()
        throw new StartupError(EXIT.config, `cluster node ${cluster.nodeId}: ${err.message}`)
      }
      if (attempt >= 2 || !(err instanceof DivergedError || err instanceof RestoreError)) { replica.close(); throw err }
      if (err instanceof RestoreError) {
        // Empty, or behind what the stream keeps: the snapshot replaces the file, the stream follows from it.
        log.info({ snapshot: err.snapshot.name, seq: err.snapshot.seq, bytes: err.snapshot.bytes }, 'joining from a snapshot')
        replaceFile(err.path)
        continue
      }
      // Its extra writes were never acknowledged to anyone: kept aside for inspection, not served.
      const aside = `${config.dbPath}.diverged-${new Date().toISOString().replace(/[:.]/g, '-')}`
      log.warn({ why: err.message, movedTo: aside }, 'this database diverged from the stream; rejoining from the stream')
      db.close()
      for (const suffix of ['', '-wal', '-shm']) if (existsSync(config.dbPath + suffix)) renameSync(config.dbPath + suffix, aside + suffix)
      db = openDatabase()
    }
  }
  log.info({ node: cluster.nodeId, port: config.port }, 'dispatch cluster node started')
  const started: ClusterNode = node
  return {
    async stop() {
      let complete = true
      frames?.stop()
      if (app) complete = await (app as App).close()
      else { replica.close(); await forward?.close(); await endReads() }
      await started.stop()
      db.close()
      return complete ? 0 : 70
    },
  }
}
