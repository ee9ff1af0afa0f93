/**
 * A small JSON-RPC 2.0 core for MCP (api-v1 §4.11; MCP 2024-11-05, 2025-03-26, 2025-06-18,
 * 2025-11-25 and 2026-07-28): `initialize`, `server/discover`, `ping`, `tools/list`, `tools/call`,
 * `resources/list`, `resources/templates/list`, `resources/read`, `completion/complete`,
 * notifications, batches. Stateless: every POST stands alone, so any process can answer it.
 *
 * Versions (issue 36; docs/mcp.md "Protocol versions"): the handshake revisions (up to 2025-11-25)
 * negotiate in `initialize`; 2026-07-28 has no handshake: each request names its version in
 * `_meta["io.modelcontextprotocol/protocolVersion"]`, `server/discover` says what the server is,
 * and every result carries `resultType: "complete"`. An `initialize` asking for 2026-07-28 (or any
 * version this server does not speak) is answered with 2025-11-25, the newest handshake revision.
 *
 * Chosen over the SDK server after measuring (DEPENDENCIES.md: ~16 µs against 200-570 µs of server
 * CPU per call).
 *
 * A tool call runs exactly the op pipeline (src/ops/invoke.ts). Protocol mistakes are JSON-RPC
 * errors (-32700, -32600, -32601, -32602: unknown tool or arguments that do not validate, with
 * the envelope's `code`, `reason` and field errors in `error.data`); domain failures are tool results
 * with `isError: true` and the API's §7 envelope, so an agent can read and correct them (MCP "Error Handling").
 */
import type { Principal } from '../auth/principals.ts'
import { ApiError } from '../errors.ts'
import { authorize } from '../auth/policy.ts'
import { invoke } from '../ops/invoke.ts'
import type { ScopeIds, ScopeNeed } from '../ops/op.ts'
import type { Services } from '../services.ts'
import { inputSchemaOf } from './schema.ts'
import { jsonSchemaOf } from '../ops/schemas/json-schema.ts'
import type { AnySchema } from '../ops/op.ts'
import type { McpServerDef, ToolBinding } from './tool.ts'
import { idsFrom, isTemplate, matchTemplate, MAX_COMPLETIONS, opRunner, templateVars, type ResourceBinding } from './resources.ts'

/** Every revision spoken, newest first (the `MCP-Protocol-Version` header may name any). */
export const PROTOCOL_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const
/** Revisions without the `initialize` handshake: the version travels in each request's `_meta`. */
export const STATELESS_VERSIONS: readonly string[] = ['2026-07-28']
/** Revisions `initialize` negotiates, newest first. */
export const HANDSHAKE_VERSIONS: readonly string[] = PROTOCOL_VERSIONS.filter((v) => !STATELESS_VERSIONS.includes(v))
export const LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[0]
export const LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[0]!
/** `_meta` keys of a 2026-07-28 request. */
export const META_VERSION = 'io.modelcontextprotocol/protocolVersion'
const SERVER_VERSION = '1.0.0'

export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const METHOD_NOT_FOUND = -32601
export const INVALID_PARAMS = -32602
export const INTERNAL_ERROR = -32603
/** MCP "Resources": the URI names nothing this caller can read. */
export const RESOURCE_NOT_FOUND = -32002
/** MCP 2026-07-28: the request's `_meta` names a version this server does not speak (`data: {supported, requested}`). */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022

/** A JSON-RPC error answer. */
export class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message)
  }
}

type Id = string | number | null
interface Message { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown }
export type RpcAnswer = { jsonrpc: '2.0'; id: Id; result: unknown } | { jsonrpc: '2.0'; id: Id; error: { code: number; message: string; data?: unknown } }

export interface CallContext {
  svc: Services
  principal: Principal | null
  requestId: string
  ip: string
  /** The `MCP-Protocol-Version` header, when sent (a 2026-07-28 request's `_meta` must agree with it). */
  headerVersion?: string
}

interface ToolEntry { binding: ToolBinding; descriptor: Record<string, unknown> }

/** One server's tools, described once (descriptors are the same for every caller; visibility is not). */
export class McpServer {
  private readonly tools = new Map<string, ToolEntry>()

  constructor(readonly def: McpServerDef) {
    for (const b of def.tools) {
      if (this.tools.has(b.name)) throw new Error(`MCP server ${def.path}: tool ${b.name} is declared twice`)
      this.tools.set(b.name, { binding: b, descriptor: describe(b) })
    }
  }

  get toolCount(): number {
    return this.tools.size
  }

  /** What `initialize` and `server/discover` declare. */
  get capabilities(): Record<string, unknown> {
    return {
      tools: { listChanged: false },
      ...(this.def.resources?.length ? { resources: { listChanged: false, subscribe: false } } : {}),
      ...(this.def.completions && Object.keys(this.def.completions).length ? { completions: {} } : {}),
    }
  }

  /** May this caller use the tool (or resource)? The same check the op pipeline makes first. */
  private allowed(entry: { binding: { op: ToolBinding['op'] } }, principal: Principal | null): boolean {
    try {
      authorize(principal, entry.binding.op.access)
      return true
    } catch {
      return false
    }
  }

  /** The resources this caller may read, as tools/list shows the tools it may call. */
  private visibleResources(principal: Principal | null): ResourceBinding[] {
    return this.def.resources!.filter((b) => this.allowed({ binding: b }, principal))
  }

  /** Answer one parsed JSON-RPC message; null for notifications and client responses (nothing to say). */
  async answer(msg: unknown, ctx: CallContext): Promise<RpcAnswer | null> {
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return fail(null, new RpcError(INVALID_REQUEST, 'Invalid Request: a message is a JSON object.'))
    const m = msg as Message
    const id = validId(m.id)
    if (m.jsonrpc !== '2.0') return fail(id ?? null, new RpcError(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0".'))
    if (typeof m.method !== 'string') {
      // A response to a server request (this server sends none) or garbage: nothing to answer to a response.
      if (id !== undefined && ('result' in m || 'error' in m)) return null
      return fail(id ?? null, new RpcError(INVALID_REQUEST, 'Invalid Request: "method" must be a string.'))
    }
    if (id === undefined) {
      if ('id' in m) return fail(null, new RpcError(INVALID_REQUEST, 'Invalid Request: "id" must be a string or number.'))
      return null // a notification (notifications/initialized, notifications/cancelled, …): nothing to do
    }
    try {
      const stateless = statelessVersion(m.params, ctx)
      const result = await this.dispatch(m.method, m.params, ctx)
      // 2026-07-28: every result says it is complete (no input is asked back: this server never needs any).
      return { jsonrpc: '2.0', id, result: stateless || m.method === 'server/discover' ? { ...(result as object), resultType: 'complete' } : result }
    } catch (err) {
      if (err instanceof RpcError) return fail(id, err)
      ctx.svc.log.error({ err, reqId: ctx.requestId, method: m.method }, 'MCP method failed')
      return fail(id, new RpcError(INTERNAL_ERROR, 'Internal error.'))
    }
  }

  private async dispatch(method: string, params: unknown, ctx: CallContext): Promise<unknown> {
    if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params))) {
      throw new RpcError(INVALID_PARAMS, 'Invalid params: "params" must be an object.')
    }
    const p = (params ?? {}) as Record<string, unknown>
    switch (method) {
      case 'initialize': return this.initialize(p)
      case 'server/discover': return this.discover()
      case 'ping': return {}
      case 'tools/list': return { tools: [...this.tools.values()].filter((t) => this.allowed(t, ctx.principal)).map((t) => t.descriptor) }
      case 'tools/call': return this.call(p, ctx)
      case 'resources/list': return this.def.resources ? this.listResources(ctx) : notFound(method)
      case 'resources/templates/list': return this.def.resources ? this.listTemplates(ctx) : notFound(method)
      case 'resources/read': return this.def.resources ? this.readResource(p, ctx) : notFound(method)
      case 'completion/complete': return this.def.completions ? this.complete(p, ctx) : notFound(method)
      default: return notFound(method)
    }
  }

  private get serverInfo() {
    return { name: this.def.name, title: this.def.title, version: SERVER_VERSION }
  }

  private initialize(p: Record<string, unknown>) {
    const asked = p.protocolVersion
    // Echo a handshake version we speak; answer our newest handshake version otherwise and let the
    // client decide (MCP "Version Negotiation"). 2026-07-28 has no handshake: a client offering it
    // here is also offered 2025-11-25.
    const protocolVersion = typeof asked === 'string' && HANDSHAKE_VERSIONS.includes(asked) ? asked : LATEST_HANDSHAKE_VERSION
    return { protocolVersion, capabilities: this.capabilities, serverInfo: this.serverInfo, instructions: this.def.instructions }
  }

  /** MCP 2026-07-28 `server/discover`: the stateless revisions spoken, capabilities, identity, instructions. */
  private discover() {
    return { supportedVersions: [...STATELESS_VERSIONS], capabilities: this.capabilities, serverInfo: this.serverInfo, instructions: this.def.instructions }
  }

  private async listResources(ctx: CallContext) {
    const run = opRunner(ctx)
    const out: Array<Record<string, unknown>> = []
    for (const b of this.visibleResources(ctx.principal)) {
      if (!isTemplate(b.uriTemplate) && !b.list) { out.push({ uri: b.uriTemplate, name: b.name, title: b.title, description: b.description, mimeType: b.mimeType }); continue }
      if (!b.list) continue
      try {
        for (const e of await b.list(run)) out.push({ mimeType: b.mimeType, ...e })
      } catch (err) {
        // What the caller may not list (a token without the capability) is left out, as its tools are.
        if (!(err instanceof ApiError)) throw err
      }
    }
    return { resources: out }
  }

  private listTemplates(ctx: CallContext) {
    return {
      resourceTemplates: this.visibleResources(ctx.principal).filter((b) => isTemplate(b.uriTemplate))
        .map((b) => ({ uriTemplate: b.uriTemplate, name: b.name, title: b.title, description: b.description, mimeType: b.mimeType })),
    }
  }

  private async readResource(p: Record<string, unknown>, ctx: CallContext) {
    const uri = p.uri
    if (typeof uri !== 'string' || uri.length > 2000) throw new RpcError(INVALID_PARAMS, 'Invalid params: "uri" must be a string.')
    let found: { b: ResourceBinding; vars: Record<string, string> } | undefined
    for (const b of this.def.resources!) {
      const vars = matchTemplate(b.uriTemplate, uri)
      if (vars) { found = { b, vars }; break }
    }
    if (!found) throw new RpcError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}.`, { uri })
    const { b, vars } = found
    try {
      const value = await opRunner(ctx)(b.op, idsFrom(b, vars), b.input?.(vars))
      return { contents: [{ uri, mimeType: b.mimeType, text: b.text ? b.text(value, vars) : JSON.stringify(value) }] }
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      // Someone else's store reads as missing, exactly as its tools answer not_found; so does a URI
      // whose variables are no ids at all (the op refuses them as input).
      const { code, reason, message } = err.toJSON()
      const missing = err.status === 404 || err.status === 422
      throw new RpcError(missing ? RESOURCE_NOT_FOUND : INVALID_PARAMS, missing ? `Resource not found: ${uri}.` : message, { uri, code, reason })
    }
  }

  /** `completion/complete` for a resource template's argument: values the caller may use, through the ops. */
  private async complete(p: Record<string, unknown>, ctx: CallContext) {
    const ref = p.ref as { type?: unknown; uri?: unknown } | undefined
    const arg = p.argument as { name?: unknown; value?: unknown } | undefined
    if (!ref || typeof ref !== 'object' || !arg || typeof arg !== 'object' || typeof arg.name !== 'string' || typeof arg.value !== 'string') {
      throw new RpcError(INVALID_PARAMS, 'Invalid params: "ref" and "argument" {name, value} are required.')
    }
    if (ref.type !== 'ref/resource' && ref.type !== 'ref/prompt') throw new RpcError(INVALID_PARAMS, 'Invalid params: "ref.type" is ref/resource or ref/prompt.')
    // Nothing to offer (a prompt: this server has none; a template or argument it does not have): no values.
    const template = ref.type === 'ref/resource' ? this.def.resources?.find((b) => b.uriTemplate === ref.uri) : undefined
    const completer = template && templateVars(template.uriTemplate).includes(arg.name) ? this.def.completions![arg.name] : undefined
    const context = ((p.context as { arguments?: unknown } | undefined)?.arguments ?? {}) as Record<string, unknown>
    const known = Object.fromEntries(Object.entries(context).filter(([, v]) => typeof v === 'string')) as Record<string, string>
    let values: string[] = []
    try {
      values = completer ? await completer(opRunner(ctx), arg.value.slice(0, 200), known) : []
    } catch (err) {
      if (!(err instanceof ApiError)) throw err // what the caller may not see completes to nothing
    }
    return { completion: { values: values.slice(0, MAX_COMPLETIONS), total: values.length, hasMore: false } }
  }

  private async call(p: Record<string, unknown>, ctx: CallContext) {
    const name = p.name
    const entry = typeof name === 'string' ? this.tools.get(name) : undefined
    if (!entry) throw new RpcError(INVALID_PARAMS, `Unknown tool: ${String(name)}.`)
    const args = p.arguments ?? {}
    if (args === null || typeof args !== 'object' || Array.isArray(args)) throw new RpcError(INVALID_PARAMS, 'Invalid params: "arguments" must be an object.')
    const b = entry.binding
    const a = args as Record<string, unknown>
    const ids = scopeIdsOf(b, a)
    try {
      const { value } = await invoke(b.op, {
        svc: ctx.svc, principal: ctx.principal, ids, where: 'arguments',
        read: () => (b.args ? b.args(a) : a),
        requestId: ctx.requestId, ip: ctx.ip,
        invalid: (e) => invalidArguments(b.name, e),
      })
      return toolResult(b.op.empty ? { ok: true } : b.result ? b.result(value) : value)
    } catch (err) {
      // A tool that declares an output schema sends its error body as text only: `structuredContent`
      // must match the schema (clients check it, errors included).
      if (err instanceof ApiError) return toolError(err, !('outputSchema' in entry.descriptor))
      throw err
    }
  }
}

const notFound = (method: string): never => { throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method}.`) }

/**
 * The 2026-07-28 version a request names in `_meta`, checked (null: a handshake-era request). A
 * version this server does not speak is -32022 with what it does; a `MCP-Protocol-Version` header
 * that disagrees with `_meta` is -32600.
 */
function statelessVersion(params: unknown, ctx: CallContext): string | null {
  const meta = params && typeof params === 'object' ? (params as { _meta?: unknown })._meta : undefined
  const asked = meta && typeof meta === 'object' ? (meta as Record<string, unknown>)[META_VERSION] : undefined
  if (asked === undefined) return null
  if (typeof asked !== 'string' || !STATELESS_VERSIONS.includes(asked)) {
    throw new RpcError(UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version: ${String(asked)}.`, { supported: [...STATELESS_VERSIONS], requested: String(asked) })
  }
  if (ctx.headerVersion !== undefined && ctx.headerVersion !== asked) {
    throw new RpcError(INVALID_REQUEST, `Invalid Request: the MCP-Protocol-Version header (${ctx.headerVersion}) differs from _meta (${asked}).`)
  }
  return asked
}

/** Scope-id arguments must be positive integers: anything else is a bad argument (-32602), not a lookup. */
function scopeIdsOf(b: ToolBinding, args: Record<string, unknown>): ScopeIds {
  const ids: ScopeIds = {}
  const errors: Record<string, string[]> = {}
  for (const [need, arg] of Object.entries(b.ids ?? {}) as Array<[ScopeNeed, string]>) {
    const raw = args[arg]
    if (typeof raw === 'number' && Number.isSafeInteger(raw) && raw > 0) ids[need] = raw
    else errors[arg] = [raw === undefined ? 'Required.' : 'Expected a positive integer id.']
  }
  if (Object.keys(errors).length) throw invalidArguments(b.name, new ApiError('validation_failed', undefined, errors))
  return ids
}

/** -32602 for arguments that do not validate: `data` holds the §7 envelope's `code`, `reason` and `errors`. */
function invalidArguments(tool: string, e: ApiError): RpcError {
  const { code, reason, errors } = e.toJSON()
  return new RpcError(INVALID_PARAMS, `Invalid arguments for tool ${tool}.`, { code, reason, errors })
}

function describe(b: ToolBinding): Record<string, unknown> {
  const op = b.op
  const description = b.description ?? [op.summary, op.description].filter(Boolean).join('. ')
  const readOnly = b.readOnly ?? false
  // Structured output (2025-06-18 and later): the op's output schema when its results are objects,
  // which is when `structuredContent` is sent (arrays travel as text only).
  const output = !op.empty && !b.result && op.output ? jsonSchemaOf(op.output as AnySchema) : null
  return {
    name: b.name,
    title: op.summary,
    description,
    inputSchema: inputSchemaOf(b),
    ...(output?.type === 'object' ? { outputSchema: output } : {}),
    annotations: { title: op.summary, readOnlyHint: readOnly, ...(readOnly ? {} : { destructiveHint: /delete/i.test(b.name), idempotentHint: false }), openWorldHint: false },
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** A successful result: the JSON as text (every protocol version reads it), plus `structuredContent` for objects (2025-06-18). */
function toolResult(value: unknown) {
  const data = value ?? null
  return { content: [{ type: 'text', text: JSON.stringify(data) }], ...(isPlainObject(data) ? { structuredContent: data } : {}) }
}

/** A domain failure: the §7 envelope (`code`, `reason`, `message`, …) exactly as the HTTP API would answer it. */
export function toolError(e: ApiError, structured = true) {
  const body = e.toJSON()
  return { content: [{ type: 'text', text: JSON.stringify(body) }], ...(structured ? { structuredContent: body } : {}), isError: true }
}

function validId(id: unknown): Id | undefined {
  if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) return id
  if (id === null) return null
  return undefined
}

function fail(id: Id, e: RpcError): RpcAnswer {
  return { jsonrpc: '2.0', id, error: { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) } }
}
