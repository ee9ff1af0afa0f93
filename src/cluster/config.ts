/**
 * Cluster mode's settings (docs/cluster.md "Configuration"): NATS_URL switches it on. Read from the
 * environment by loadConfig (src/config.ts); an invalid combination stops the start with one line.
 */
import { existsSync } from 'node:fs'
import { hostname } from 'node:os'

export interface ClusterConfig {
  natsUrls: string[]
  nodeId: string
  /** Prefix of every stream, bucket and subject: two clusters can share one NATS. */
  name: string
  /** Copies JetStream keeps of the stream and the lease (R3 on a NATS cluster of three). */
  replicas: number
  /** The primary's lease: held this long without a renewal (renewed every third of it). */
  leaseMs: number
  /** A replica further behind than this answers 503 on /readyz. */
  maxLagMs: number
  /**
   * A replica answers the public reads from its own database while it is at most this far behind
   * (src/http/replica-reads.ts); further behind, it forwards them to the primary like everything else.
   * null (`off`): every read goes to the primary.
   */
  readLagMs: number | null
  user: string | null
  password: string | null
  token: string | null
  credsFile: string | null
  tls: { ca: string | null; cert: string | null; key: string | null } | null
  /**
   * Where the other nodes reach this node's HTTP listener (NODE_URL): a replica forwards what it
   * does not serve itself to the primary's address (src/http/forward.ts).
   */
  nodeUrl: string
  /** The primary stores a snapshot every this many stream messages (src/cluster/snapshots.ts). */
  snapshotEvery: number
  /** And no sooner than this many ms after the snapshot this primary took last (0: no spacing). */
  snapshotMinIntervalMs: number
  /** Snapshots kept; the stream keeps what the oldest of them needs. */
  snapshotsKept: number
}

const fail = (msg: string): never => { throw new Error(`invalid configuration: ${msg}`) }

const whole = (env: Record<string, string | undefined>, name: string, fallback: number, min: number, maxValue: number): number => {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\s*\d+\s*$/.test(raw)) fail(`${name} must be a whole number, got "${raw}"`)
  const n = Number(raw)
  if (n < min || n > maxValue) fail(`${name} must be between ${min} and ${maxValue}, got ${n}`)
  return n
}

/** null unless NATS_URL is set; the cluster's settings otherwise, every combination checked. */
export function clusterConfig(env: Record<string, string | undefined>, single: { dbPath: string; groupCommit: boolean; host: string; port: number }): ClusterConfig | null {
  const urls = (env.NATS_URL ?? '').split(',').map((s) => s.trim()).filter(Boolean)
  if (urls.length === 0) {
    for (const name of ['NODE_ID', 'NODE_URL', 'NATS_CREDS', 'NATS_USER', 'NATS_TOKEN', 'NATS_REPLICAS', 'CLUSTER_READ_LAG_MS', 'CLUSTER_SNAPSHOT_MIN_INTERVAL_MS']) if (env[name]) fail(`${name} needs NATS_URL (cluster mode)`)
    return null
  }
  for (const u of urls) if (!/^(nats|tls):\/\/[^\s/]+(:\d+)?\/?$/.test(u)) fail(`NATS_URL must be a comma-separated list of nats://host:port, got "${u}"`)
  const nodeId = env.NODE_ID?.trim() ?? ''
  if (!nodeId) fail('NODE_ID is required with NATS_URL: a name unique in the cluster, e.g. node-1')
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(nodeId)) fail(`NODE_ID must be 1-64 letters, digits, _ or -, got "${nodeId}"`)
  const name = env.CLUSTER_NAME?.trim() || 'dispatch'
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(name)) fail(`CLUSTER_NAME must be 1-32 letters, digits, _ or -, got "${name}"`)
  if (single.dbPath === ':memory:') fail('DB_PATH=:memory: cannot be a cluster node: a replica applies the stream through a second connection to its file')
  if (!single.groupCommit) fail('GROUP_COMMIT=0 cannot be used with NATS_URL: a batch is replicated once per commit')
  if (env.NATS_PASSWORD && !env.NATS_USER) fail('NATS_PASSWORD needs NATS_USER')
  const auth = [env.NATS_USER ? 'NATS_USER' : '', env.NATS_TOKEN ? 'NATS_TOKEN' : '', env.NATS_CREDS ? 'NATS_CREDS' : ''].filter(Boolean)
  if (auth.length > 1) fail(`use one of NATS_USER, NATS_TOKEN, NATS_CREDS, not ${auth.join(' and ')}`)
  for (const f of ['NATS_CREDS', 'NATS_TLS_CA', 'NATS_TLS_CERT', 'NATS_TLS_KEY']) if (env[f] && !existsSync(env[f]!)) fail(`${f}: no file ${env[f]}`)
  if (Boolean(env.NATS_TLS_CERT) !== Boolean(env.NATS_TLS_KEY)) fail('NATS_TLS_CERT and NATS_TLS_KEY go together (a client certificate and its key)')
  const leaseMs = whole(env, 'CLUSTER_LEASE_MS', 3000, 1000, 60_000)
  const tls = env.NATS_TLS_CA || env.NATS_TLS_CERT || urls.some((u) => u.startsWith('tls://'))
    ? { ca: env.NATS_TLS_CA || null, cert: env.NATS_TLS_CERT || null, key: env.NATS_TLS_KEY || null }
    : null
  const nodeUrl = (env.NODE_URL?.trim() || defaultNodeUrl(single.host, single.port)).replace(/\/$/, '')
  if (!/^https?:\/\/[^\s/?#@]+$/.test(nodeUrl)) fail(`NODE_URL must be http(s)://host:port, where the other nodes reach this one, got "${nodeUrl}"`)
  return {
    natsUrls: urls,
    nodeId,
    name,
    replicas: whole(env, 'NATS_REPLICAS', Math.min(3, urls.length), 1, 5),
    leaseMs,
    maxLagMs: whole(env, 'CLUSTER_MAX_LAG_MS', 5000, 100, 3_600_000),
    readLagMs: readLag(env),
    user: env.NATS_USER || null,
    password: env.NATS_PASSWORD || null,
    token: env.NATS_TOKEN || null,
    credsFile: env.NATS_CREDS || null,
    tls,
    nodeUrl,
    snapshotEvery: whole(env, 'CLUSTER_SNAPSHOT_EVERY', 10_000, 1, 1_000_000_000),
    snapshotMinIntervalMs: whole(env, 'CLUSTER_SNAPSHOT_MIN_INTERVAL_MS', 60_000, 0, 86_400_000),
    snapshotsKept: whole(env, 'CLUSTER_SNAPSHOTS_KEPT', 2, 1, 100),
  }
}

/** CLUSTER_READ_LAG_MS: a whole number of ms (0 = only while caught up), or `off`: every read goes to the primary. */
function readLag(env: Record<string, string | undefined>): number | null {
  if (env.CLUSTER_READ_LAG_MS?.trim().toLowerCase() === 'off') return null
  return whole(env, 'CLUSTER_READ_LAG_MS', 2000, 0, 3_600_000)
}

/**
 * Without NODE_URL: loopback when the server listens on loopback (nodes on one machine), else this
 * machine's host name (what compose and Kubernetes resolve to the container) — on several machines
 * set NODE_URL to the address the others can reach.
 */
function defaultNodeUrl(host: string, port: number): string {
  const loopback = host === '127.0.0.1' || host === 'localhost' || host === '::1'
  return `http://${loopback ? '127.0.0.1' : hostname()}:${port}`
}
