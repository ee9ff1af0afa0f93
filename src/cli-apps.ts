/**
 * App commands for developers and operators (docs/apps.md "Registering an app", "Review"):
 *
 *   dispatch app create --owner ID --name NAME --redirect-uri URL --scopes LIST [--pricing free|recurring|usage]
 *       [--price 0.05] [--webhook-url URL] [--embed-url URL] --json
 *     → exactly {"id", "client_id", "client_secret", "webhook_secret"} (the secrets are shown once)
 *   dispatch app approve ID [--json]
 *     → {"id", "status": "published", "published_at"}: the app's current terms become the published ones
 *
 * Input goes through the same schema and rules as `POST /developer/apps` (src/ops/apps/apps.ts). Both
 * write the shared database in one transaction; a running server reads apps on every request.
 */
import type { Db } from './storage/db.ts'
import { nowIso } from './storage/db.ts'
import type { Config } from './config.ts'
import { appById } from './storage/apps.ts'
import { AppInput, approveApp, checkAppFields, registerApp } from './ops/apps/apps.ts'
import { validate } from './ops/validate.ts'
import { ApiError } from './errors.ts'
import { CliError } from './cli.ts'

export const APP_USAGE = `  dispatch app create --owner ID --name NAME --redirect-uri URL --scopes LIST [--pricing free|recurring|usage]
      [--price 0.05] [--webhook-url URL] [--embed-url URL] [--json]   (LIST: app scopes, e.g. orders:read,menu:read)
  dispatch app approve ID [--json]`

export const APP_OPTIONS = {
  'redirect-uri': { type: 'string', multiple: true }, pricing: { type: 'string' }, price: { type: 'string' },
  'webhook-url': { type: 'string' }, 'embed-url': { type: 'string' },
} as const

export interface AppArgs {
  owner?: string; name?: string; scopes?: string; 'redirect-uri'?: string[]; pricing?: string; price?: string
  'webhook-url'?: string; 'embed-url'?: string
}
type Emit = (obj: Record<string, unknown>, text: string) => string

/** A validation failure as one line per field. */
function explain(e: unknown): never {
  if (e instanceof ApiError && e.errors) throw new CliError(Object.entries(e.errors).map(([k, m]) => `${k}: ${m.join(' ')}`).join('; '))
  throw e
}

/** Runs `app create` / `app approve`; null when `cmd` is not `app`. */
export function appCommand(db: Db, config: Config, positionals: string[], a: AppArgs, emit: Emit): { code: number; out: string } | null {
  const [cmd, sub, arg] = positionals
  if (cmd !== 'app') return null
  if (sub === 'create') {
    const ownerId = Number(a.owner)
    if (!Number.isInteger(ownerId) || ownerId < 1) throw new CliError('--owner must be an owner id')
    if (!db.prepare('SELECT 1 FROM owners WHERE id = ?').get(ownerId)) throw new CliError(`no owner with id ${ownerId}`)
    const price = a.price === undefined ? undefined : Number(a.price)
    if (price !== undefined && (a.price!.trim() === '' || !Number.isFinite(price))) throw new CliError(`invalid --price "${a.price}": use e.g. 0.05`)
    const raw = {
      name: a.name ?? '', redirect_uris: a['redirect-uri'] ?? [],
      scopes: (a.scopes ?? '').split(/[,\s]+/).filter(Boolean),
      ...(a.pricing !== undefined ? { pricing: a.pricing } : {}),
      ...(price !== undefined ? { price } : {}),
      ...(a['webhook-url'] !== undefined ? { webhook_url: a['webhook-url'] } : {}),
      ...(a['embed-url'] !== undefined ? { embed_url: a['embed-url'] } : {}),
    }
    let input
    try {
      input = validate(AppInput, raw, 'arguments')
      checkAppFields(input, null, { allowLoopback: config.webhookAllowLoopback })
    } catch (e) { explain(e) }
    const app = db.transaction(() => registerApp(db, ownerId, input, nowIso())).immediate()
    return { code: 0, out: emit({ id: app.id, client_id: app.client_id, client_secret: app.client_secret, webhook_secret: app.webhook_secret }, `app ${app.id} created (draft)\nclient_id: ${app.client_id}\nclient_secret: ${app.client_secret}\nwebhook_secret: ${app.webhook_secret}`) }
  }
  if (sub === 'approve') {
    const id = Number(arg)
    if (!arg || !Number.isInteger(id) || id < 1) throw new CliError('usage: dispatch app approve ID')
    const app = appById(db, id)
    if (!app) throw new CliError(`no app with id ${id}`)
    const done = db.transaction(() => approveApp(db, app, nowIso())).immediate()
    return { code: 0, out: emit({ id: done.id, status: done.status, published_at: done.published_at }, `app ${done.id} published`) }
  }
  throw new CliError(`unknown command: app ${sub ?? ''}\n${APP_USAGE}`)
}
