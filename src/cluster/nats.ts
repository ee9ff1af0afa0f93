/**
 * The NATS side of cluster mode (docs/cluster.md): one connection per node, the replication stream,
 * the lease bucket and their names. Every name carries CLUSTER_NAME (two clusters can share one NATS)
 * and the shard id, `0` today (docs/cluster.md "Past one primary").
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node'
import { jetstream, jetstreamManager, JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream'
import { Kvm, type KV } from '@nats-io/kv'
import { Objm, type ObjectStore } from '@nats-io/obj'
import type { ClusterConfig } from './config.ts'

export const SHARD = 0

export interface ClusterNames {
  stream: string
  subject: string
  leaseBucket: string
  /** Settings of the whole cluster that never expire (the forwarding secret). */
  metaBucket: string
  /** The object store of the database snapshots (src/cluster/snapshots.ts). */
  snapshots: string
}

export const clusterNames = (cluster: string, shard = SHARD): ClusterNames => ({
  stream: `${cluster}_repl_${shard}`,
  subject: `${cluster}.repl.${shard}`,
  leaseBucket: `${cluster}_lease_${shard}`,
  metaBucket: `${cluster}_meta`,
  snapshots: `${cluster}_snap_${shard}`,
})

export interface ClusterLink {
  nc: NatsConnection
  js: JetStreamClient
  jsm: JetStreamManager
  kv: KV
  snapshots: ObjectStore
  names: ClusterNames
  /**
   * The secret a replica shows when it forwards a request to the primary (src/http/forward.ts), so
   * the primary believes the client address it names: made once per cluster, kept in the meta
   * bucket (readable by whoever may use the cluster's NATS account, as the stream is).
   */
  forwardSecret: string
  close(): Promise<void>
}

/** Connect and make sure the stream and the lease bucket exist (created by whichever node comes first). */
export async function linkCluster(c: ClusterConfig): Promise<ClusterLink> {
  const nc = await connect({
    servers: c.natsUrls,
    name: `dispatch-${c.nodeId}`,
    // Keep trying for ever: a NATS outage is survived, not fatal (docs/cluster.md "Failures").
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    // Every request (each stream publish) would otherwise build an Error up front for its stack
    // trace, for stacks our logs never show. (nats.js 3.4 still builds a second one per request, in
    // RequestOne.cancel after the answer resolved it, whatever this says: ~0.9 % of the primary's
    // CPU in the orders bench.)
    noAsyncTraces: true,
    ...(c.user ? { user: c.user, pass: c.password ?? '' } : {}),
    ...(c.token ? { token: c.token } : {}),
    ...(c.credsFile ? { authenticator: credsAuthenticator(readFileSync(c.credsFile)) } : {}),
    ...(c.tls ? { tls: { ...(c.tls.ca ? { caFile: c.tls.ca } : {}), ...(c.tls.cert ? { certFile: c.tls.cert } : {}), ...(c.tls.key ? { keyFile: c.tls.key } : {}) } } : {}),
  })
  const names = clusterNames(c.name)
  try {
    const jsm = await jetstreamManager(nc)
    // A NATS cluster that has just started has no JetStream leader yet for a while: retried.
    await untilReady(async () => {
      try {
        await jsm.streams.info(names.stream)
      } catch (err) {
        if (!(err instanceof JetStreamApiError) || !/not found/i.test(err.message)) throw err
        // Purged below the oldest kept snapshot (src/cluster/snapshots.ts); a joining node restores one.
        await jsm.streams.add({ name: names.stream, subjects: [names.subject], num_replicas: c.replicas, duplicate_window: 120_000_000_000 })
      }
    })
    const kv = await untilReady(() => new Kvm(nc).create(names.leaseBucket, { ttl: c.leaseMs, history: 1, replicas: c.replicas }))
    // An existing bucket keeps the settings it was made with: a node counting a longer lease than the
    // bucket keeps would trust a lease another node already holds.
    const ttl = (await untilReady(() => kv.status())).ttl
    if (ttl !== c.leaseMs) throw new Error(`the lease bucket ${names.leaseBucket} expires entries after ${ttl} ms, this node has CLUSTER_LEASE_MS=${c.leaseMs}: every node needs the same lease`)
    const meta = await untilReady(() => new Kvm(nc).create(names.metaBucket, { history: 1, replicas: c.replicas }))
    const forwardSecret = await untilReady(() => sharedSecret(meta))
    const snapshots = await untilReady(() => new Objm(nc).create(names.snapshots, { replicas: c.replicas }))
    return link(nc, jsm, kv, snapshots, names, forwardSecret)
  } catch (err) {
    await nc.close()
    throw err
  }
}

/** The cluster's forwarding secret: whichever node comes first creates it, every node reads the same. */
async function sharedSecret(meta: KV): Promise<string> {
  const mine = randomBytes(32).toString('base64url')
  try {
    await meta.create('forward-secret', new TextEncoder().encode(mine))
    return mine
  } catch (err) {
    if (!/wrong last sequence|key exists/i.test((err as Error).message)) throw err
    const e = await meta.get('forward-secret')
    if (!e || e.operation !== 'PUT') throw new Error('the cluster\'s forwarding secret is missing from its meta bucket', { cause: err })
    return e.string()
  }
}

const link = (nc: NatsConnection, jsm: JetStreamManager, kv: KV, snapshots: ObjectStore, names: ClusterNames, forwardSecret: string): ClusterLink => ({
  nc, js: jetstream(nc), jsm, kv, snapshots, names, forwardSecret,
  async close() { await nc.drain().catch(() => nc.close()) },
})

/** Retry `fn` for up to 30 s while JetStream is not ready (no leader, not enough servers yet). */
async function untilReady<T>(fn: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      return await fn()
    } catch (err) {
      if (Date.now() > deadline) throw err
      await new Promise((r) => setTimeout(r, 250))
    }
  }
}

/** The stream's last sequence (0 when empty). */
export async function lastSeq(link: ClusterLink): Promise<number> {
  return (await link.jsm.streams.info(link.names.stream)).state.last_seq
}

/** The stream's first and last sequence (first > last when empty; first > 1 once purged). */
export async function streamBounds(link: ClusterLink): Promise<{ first: number; last: number }> {
  const { state } = await link.jsm.streams.info(link.names.stream)
  return { first: state.first_seq, last: state.last_seq }
}
