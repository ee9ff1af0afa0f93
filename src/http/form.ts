/**
 * HTML form bindings of operations (issue 33 item 1), beside the JSON routes of `bind` (bind.ts) and
 * the MCP tools: `form(op, {path, fields, success, failure})` is a site route that reads an
 * `application/x-www-form-urlencoded` body, maps its fields to the operation's input and runs the
 * operation through the one pipeline (src/ops/invoke.ts: authorize → resolve scope (404) → validate
 * (422) → run). The page decides only what the web decides: where success goes (a 303) and how a
 * refusal reads (the operation's field errors as the page's field messages). A form of the
 * `session` family reads the session's CSRF token from its own body (server.ts), like every form.
 */
import type { AuthFamily, Principal } from '../auth/principals.ts'
import { ApiError, WHOLE_REQUEST } from '../errors.ts'
import { invoke } from '../ops/invoke.ts'
import type { Op, ScopeIds, ScopeNeed } from '../ops/op.ts'
import type { Services } from '../services.ts'
import { scopeIdsOf, type Binding } from './bind.ts'
import { Reply, type Route } from './route.ts'

const HTML = 'text/html; charset=utf-8'

/** One message for one field of the page (`field` '' for the form as a whole). */
export interface FormError { field: string; message: string }

/** What a form's callbacks see of the request. */
export interface FormRequest<P extends Principal | null = Principal | null> {
  svc: Services
  principal: P
  params: Record<string, string>
  form: URLSearchParams
  headers: Readonly<Record<string, string>>
  requestId: string
  ip: string
  /** What the binding's `admit` found for its callbacks (the store website: its store and visitor). */
  state?: unknown
}

/** Who a page's form acts as, when the page decides it (see FormBinding.admit). */
export interface Admitted {
  principal: Principal | null
  ids?: ScopeIds
  state?: unknown
}

export interface FormBinding<O = unknown> {
  /** Path under `{site_url}`. */
  path: string
  /** The credential family the page authenticates (`session`: the owner's web session, CSRF checked). */
  auth: AuthFamily
  /** Path parameter that names each scope resource, as in `bind`. */
  ids?: Partial<Record<ScopeNeed, string>>
  /**
   * The input: form field → input field (values as posted, `''` when absent), path parameters
   * (`{name}` → input field, ids as numbers), or a function of the request for what a map cannot say.
   */
  fields: Record<string, string> | ((req: FormRequest) => unknown)
  /** Path parameters copied into the input (ids as numbers), as in `bind`. */
  params?: Record<string, string>
  /**
   * Pages whose visitors no request header authenticates (the store website: its store by `{slug}`,
   * its cookie double-submit CSRF, the signed-in customer or the policy's visitor): the principal and
   * scope ids the operation runs as, or the page to answer instead, and then nothing runs.
   */
  admit?: (req: FormRequest) => Admitted | Reply
  /** Where the browser goes once the operation succeeded (a 303), or the page to answer with. */
  success: (value: O, req: FormRequest) => Reply | Promise<Reply>
  /**
   * The page again with what to fix: the operation's refusal (any 4xx; rethrow it to have the
   * pipeline answer the error envelope instead) as field messages, and the error for its status.
   */
  failure: (errors: FormError[], req: FormRequest, err: ApiError) => Reply | Promise<Reply>
  summary?: string
  description?: string
  /** The OpenAPI tag when it is the page's rather than the operation's. */
  tag?: string
  /** A tighter per-route limit per client address (api-v1 §8 sign-in limits), as in `bind`. */
  rateLimit?: { perMinute: number }
  /** The statuses the page answers itself, for OpenAPI (see Route.pageErrors). */
  pageErrors?: Record<number, string>
}

/** What the pipeline needs of a form route beyond the plain route fields. */
export interface FormRoute {
  op: Op
  formBinding: FormBinding
}

/** An ApiError as messages for a form (field errors first, else the error's message). */
export function formErrors(err: ApiError, rename: Readonly<Record<string, string>> = {}): FormError[] {
  const fields = Object.entries(err.errors ?? {})
  if (fields.length === 0) return [{ field: '', message: err.message }]
  return fields.flatMap(([field, msgs]) => msgs.map((message) => ({ field: field === WHOLE_REQUEST ? '' : rename[field] ?? field, message })))
}

/** The operation's input from the posted fields and path parameters. */
function inputOfForm(b: FormBinding, req: FormRequest): unknown {
  if (typeof b.fields === 'function') return b.fields(req)
  const input: Record<string, unknown> = {}
  for (const [field, name] of Object.entries(b.fields)) input[name] = req.form.get(field) ?? ''
  for (const [param, name] of Object.entries(b.params ?? {})) {
    const raw = req.params[param]
    input[name] = raw !== undefined && /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : raw
  }
  return input
}

/** Make a route-table entry that runs `op` from an HTML form (the pipeline recognises `formBinding`). */
export function form<I, O>(op: Op<I, O>, b: FormBinding<O>): Route & FormRoute {
  return {
    method: 'POST', path: b.path, site: true, tag: b.tag ?? op.tag, summary: b.summary ?? op.summary,
    description: b.description ?? `An HTML form post (\`application/x-www-form-urlencoded\`) running the operation \`${op.id}\`; answers 303 on success, or the page again with what to fix.`,
    auth: b.auth, produces: HTML, form: true,
    ...(b.rateLimit ? { rateLimit: b.rateLimit } : {}),
    ...(b.pageErrors ? { pageErrors: b.pageErrors } : {}),
    handler: () => {
      throw new Error(`${op.id} is bound to the form POST ${b.path}: the pipeline runs it, not this handler`)
    },
    op: op as Op,
    formBinding: b as FormBinding,
  }
}

/** A refusal the page shows itself; a 5xx (a bug, an outage) is the pipeline's to answer. */
const shownOnPage = (err: unknown): err is ApiError => err instanceof ApiError && err.status < 500

/** Run a form route's operation: the success page or redirect, or the page again with the refusal. */
export async function runForm(route: Route & FormRoute, request: FormRequest): Promise<Reply> {
  const b = route.formBinding
  let req = request
  let ids = scopeIdsOf({ ids: b.ids } as Binding, req.params)
  if (b.admit) {
    const admitted = b.admit(req)
    if (admitted instanceof Reply) return admitted
    req = Object.assign({}, req, { principal: admitted.principal, state: admitted.state })
    if (admitted.ids) ids = admitted.ids
  }
  try {
    const { value } = await invoke(route.op, { svc: req.svc, principal: req.principal, ids, where: 'body', read: () => inputOfForm(b, req), requestId: req.requestId, ip: req.ip })
    return await b.success(value, req)
  } catch (err) {
    if (!shownOnPage(err)) throw err
    return b.failure(formErrors(err), req, err)
  }
}

/** A 303 to `to`, never cached (the usual success of a form). */
export const seeOther = (to: string, headers: Record<string, string> = {}): Reply => new Reply(303, null, Object.assign({ Location: to, 'Cache-Control': 'no-store' }, headers))
