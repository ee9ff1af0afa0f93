/**
 * MCP resources and completions as bindings to operations (issue 36 item 4; MCP "Resources",
 * "Completion"): a resource template names an op and which URI variable names each scope
 * resource, as a tool names its id arguments; reading it runs exactly the op pipeline
 * (src/ops/invoke.ts), so what a caller may read is what its tools may call. Completions of an id
 * variable list what the caller can see, through the same ops. No business rule lives here.
 */
import { ApiError } from '../errors.ts'
import { invoke } from '../ops/invoke.ts'
import type { Op, ScopeIds, ScopeNeed } from '../ops/op.ts'
import type { CallContext } from './protocol.ts'

/** Run an op for the caller: scope ids and the input, as a tool call would. Throws ApiError. */
export type RunOp = (op: Op, ids: ScopeIds, input?: unknown) => Promise<unknown>

export interface ResourceEntry { uri: string; name: string; title?: string; description?: string; mimeType?: string }

export interface ResourceBinding {
  /** RFC 6570 level-1 template (`dispatch://restaurants/{restaurant_id}/menu`), or a fixed URI. */
  uriTemplate: string
  name: string
  title: string
  description: string
  mimeType: 'application/json' | 'text/markdown'
  /** The operation reading it. */
  op: Op
  /** URI variable that names each scope resource, e.g. `{ store: 'restaurant_id' }`. */
  ids?: Partial<Record<ScopeNeed, string>>
  /** URI variables → op input (default: none). */
  input?: (vars: Record<string, string>) => unknown
  /** Op value → the resource's text (default: JSON). */
  text?: (value: unknown, vars: Record<string, string>) => string
  /** The concrete resources this caller can read (resources/list); default: the fixed URI, or none for a template. */
  list?: (run: RunOp) => Promise<ResourceEntry[]>
}

/** Values for one completable argument: those starting with `value` that the caller may see. */
export type Completer = (run: RunOp, value: string, context: Record<string, string>) => Promise<string[]>

/** MCP `completion/complete` answers at most 100 values. */
export const MAX_COMPLETIONS = 100

const VAR = /\{([a-z_]+)\}/g

/** Match a URI against a template: its variables, or null. Variables match one path segment. */
export function matchTemplate(template: string, uri: string): Record<string, string> | null {
  const names: string[] = []
  const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{([a-z_]+)\\?\}/g, (_, n: string) => { names.push(n); return '([^/?#]+)' })
  const m = new RegExp(`^${pattern}$`).exec(uri)
  if (!m) return null
  const vars: Record<string, string> = {}
  names.forEach((n, i) => { vars[n] = decodeURIComponent(m[i + 1]!) })
  return vars
}

export const isTemplate = (uriTemplate: string): boolean => /\{[a-z_]+\}/.test(uriTemplate)
export const templateVars = (uriTemplate: string): string[] => [...uriTemplate.matchAll(VAR)].map((m) => m[1]!)

/** A runner of ops for one caller (the scope ids must be positive integers, else not_found as for a missing id). */
export function opRunner(ctx: CallContext): RunOp {
  return async (op, ids, input) => {
    for (const v of Object.values(ids)) if (!(typeof v === 'number' && Number.isSafeInteger(v) && v > 0)) throw new ApiError('not_found')
    const { value } = await invoke(op, {
      svc: ctx.svc, principal: ctx.principal, ids, where: 'arguments', read: () => input ?? {}, requestId: ctx.requestId, ip: ctx.ip,
    })
    return value
  }
}

/** Scope ids from URI variables (digits only; anything else is an unknown resource). */
export function idsFrom(b: ResourceBinding, vars: Record<string, string>): ScopeIds {
  const ids: ScopeIds = {}
  for (const [need, name] of Object.entries(b.ids ?? {}) as Array<[ScopeNeed, string]>) {
    const raw = vars[name] ?? ''
    ids[need] = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : 0
  }
  return ids
}

/** Keep the values starting with `prefix`, at most MAX_COMPLETIONS. */
export const startingWith = (values: Iterable<string>, prefix: string): string[] =>
  [...new Set(values)].filter((v) => v.toLowerCase().startsWith(prefix.toLowerCase())).slice(0, MAX_COMPLETIONS)
