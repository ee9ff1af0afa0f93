/**
 * Readiness (docs/running.md "Health and readiness"): 200 while this instance should get
 * traffic, 503 once it is draining for shutdown or when its database does not answer or lacks a
 * migration. `/healthz` stays liveness: it answers 200 for as long as the process serves at all.
 */
import { Reply, route } from '../route.ts'

export const readyzRoutes = [
  route({
    method: 'GET', path: '/readyz', site: true, tag: 'Discovery', auth: 'none', rateLimit: false,
    summary: 'Readiness: 200 ready, 503 draining or database not ready',
    description: 'Load balancers and orchestrators route traffic by this; on SIGTERM it answers 503 before the listener closes (`SHUTDOWN_GRACE_MS`).',
    response: {
      type: 'object', required: ['status', 'checks'],
      properties: {
        status: { type: 'string', enum: ['ready', 'not_ready'] },
        checks: {
          type: 'object', required: ['database', 'migrations', 'draining'],
          properties: { database: { type: 'boolean' }, migrations: { type: 'boolean' }, draining: { type: 'boolean' } },
        },
      },
    },
    handler: ({ svc }) => {
      const checks = { ...svc.lifecycle.database(), draining: svc.lifecycle.draining() }
      const ready = checks.database && checks.migrations && !checks.draining
      // Not the §7 envelope: a probe reads the status code, and an operator reads which check failed.
      return new Reply(ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', checks }, { 'Cache-Control': 'no-store' })
    },
  }),
]
