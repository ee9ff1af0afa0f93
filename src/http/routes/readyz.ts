/**
 * Readiness (docs/running.md "Health and readiness"): 200 while this instance should get
 * traffic, 503 once it is draining for shutdown or when its database does not answer or lacks a
 * migration. `/healthz` stays liveness: it answers 200 for as long as the process serves at all.
 */
import { Reply, route } from '../route.ts'
import * as v from 'valibot'
import type { Services } from '../../services.ts'

const ReadyzQuery = v.object({ role: v.optional(v.picklist(['primary'], 'The only role to ask for is primary.')) })

/**
 * The readiness answer, for this route and for a cluster replica's own listener (src/http/replica.ts).
 * Not the §7 envelope: a probe reads the status code, and an operator reads which check failed.
 */
export function readiness(lifecycle: Pick<Services['lifecycle'], 'database' | 'draining' | 'cluster'>, wantPrimary = false): { status: number; body: Record<string, unknown> } {
  const cluster = lifecycle.cluster?.()
  const checks = { ...lifecycle.database(), draining: lifecycle.draining(), ...(cluster ? { cluster: cluster.ready } : {}) }
  // `?role=primary`: ready only on the primary (a proxy's check while replicas do not serve the API).
  const ready = checks.database && checks.migrations && !checks.draining && (cluster?.ready ?? true) && (!wantPrimary || !cluster || cluster.role === 'primary')
  const { ready: _dropped, ...clusterFields } = cluster ?? { ready: true }
  return { status: ready ? 200 : 503, body: { status: ready ? 'ready' : 'not_ready', checks, ...clusterFields } }
}

export const readyzRoutes = [
  route({
    method: 'GET', path: '/readyz', site: true, tag: 'Discovery', auth: 'none', rateLimit: false,
    summary: 'Readiness: 200 ready, 503 draining or database not ready',
    description: 'Load balancers and orchestrators route traffic by this; on SIGTERM it answers 503 before the listener closes (`SHUTDOWN_GRACE_MS`). In cluster mode (docs/cluster.md) it also reports the node\'s role, the primary and its lag, and `?role=primary` answers 200 on the primary only.',
    response: {
      type: 'object', required: ['status', 'checks'],
      properties: {
        status: { type: 'string', enum: ['ready', 'not_ready'] },
        checks: {
          type: 'object', required: ['database', 'migrations', 'draining'],
          properties: {
            database: { type: 'boolean' }, migrations: { type: 'boolean' }, draining: { type: 'boolean' },
            cluster: { type: 'boolean', description: 'Cluster mode only: the primary holds its lease and the stream takes writes; a replica applies the stream within CLUSTER_MAX_LAG_MS' },
          },
        },
        role: { type: 'string', enum: ['primary', 'replica', 'promoting'], description: 'Cluster mode only (docs/cluster.md)' },
        node: { type: 'string', description: 'Cluster mode only: this node\'s NODE_ID' },
        primary: { type: ['string', 'null'], description: 'Cluster mode only: the primary\'s NODE_ID, null while nobody holds the lease' },
        applied_seq: { type: 'integer', description: 'Cluster mode only: the last stream message this node\'s database holds' },
        lag_ms: { type: 'integer', description: 'Cluster mode only: how far this node\'s data is behind the primary\'s commits' },
        problem: { type: ['string', 'null'], description: 'Cluster mode only: why this node cannot serve, or null' },
        apply_delay_ms: {
          description: 'Cluster mode, replicas: how long the messages applied in the last 10 s (up to 4,096) took from the primary\'s commit to this node\'s, in ms; null on the primary and when none were applied',
          anyOf: [{ type: 'null' }, { type: 'object', required: ['p50', 'p99', 'max', 'samples'], properties: { p50: { type: 'number' }, p99: { type: 'number' }, max: { type: 'number' }, samples: { type: 'integer' } } }],
        },
        local_reads: {
          type: 'object', required: ['served', 'forwarded', 'lag_bound_ms', 'refused'],
          description: 'Cluster mode, replicas: the public reads this node answered from its own database since it started (each such answer carries `X-Dispatch-Served-By`), those of the same routes it forwarded to the primary instead (further behind than `lag_bound_ms`, joining, or not holding what was asked yet), CLUSTER_READ_LAG_MS (null: off), and why it passes them on now (null while it answers them itself). Absent on the primary (docs/cluster.md "Public reads on replicas")',
          properties: { served: { type: 'integer' }, forwarded: { type: 'integer' }, lag_bound_ms: { type: ['integer', 'null'] }, refused: { type: ['string', 'null'] } },
        },
      },
    },
    query: ReadyzQuery,
    handler: ({ svc, query }) => {
      const r = readiness(svc.lifecycle, query?.role === 'primary')
      return new Reply(r.status, r.body, { 'Cache-Control': 'no-store' })
    },
  }),
]
