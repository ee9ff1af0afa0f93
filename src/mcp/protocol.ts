/**
 * A small JSON-RPC 2.0 core for MCP (api-v1 §4.11; MCP 2024-11-05, 2025-03-26, 2025-06-18):
 * `initialize`, `ping`, `tools/list`, `tools/call`, notifications, batches. Stateless: every POST
 * stands alone, so any process can answer it. Chosen over the SDK server after measuring
 * (DEPENDENCIES.md: ~16 µs against 200-570 µs of server CPU per call).
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
import type { McpServerDef, ToolBinding } from './tool.ts'

export const PROTOCOL_VERSIONS = ['2025-06-18', '2025-03-26', '2024-11-05'] as const
export const LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[0]
const SERVER_VERSION = '1.0.0'

export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const METHOD_NOT_FOUND = -32601
export const INVALID_PARAMS = -32602
export const INTERNAL_ERROR = -32603

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

  /** May this caller use the tool? The same check the op pipeline makes first. */
  private allowed(entry: ToolEntry, principal: Principal | null): boolean {
    try {
      authorize(principal, entry.binding.op.access)
      return true
    } catch {
      return false
    }
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
      return { jsonrpc: '2.0', id, result: await this.dispatch(m.method, m.params, ctx) }
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
      case 'ping': return {}
      case 'tools/list': return { tools: [...this.tools.values()].filter((t) => this.allowed(t, ctx.principal)).map((t) => t.descriptor) }
      case 'tools/call': return this.call(p, ctx)
      default: throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method}.`)
    }
  }

  private initialize(p: Record<string, unknown>) {
    const asked = p.protocolVersion
    // Echo a version we speak; answer our newest otherwise and let the client decide (MCP "Version Negotiation").
    const protocolVersion = typeof asked === 'string' && (PROTOCOL_VERSIONS as readonly string[]).includes(asked) ? asked : LATEST_PROTOCOL_VERSION
    return {
      protocolVersion,
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: this.def.name, title: this.def.title, version: SERVER_VERSION },
      instructions: this.def.instructions,
    }
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
      if (err instanceof ApiError) return toolError(err)
      throw err
    }
  }
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
  return {
    name: b.name,
    title: op.summary,
    description,
    inputSchema: inputSchemaOf(b),
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
export function toolError(e: ApiError) {
  const body = e.toJSON()
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true }
}

function validId(id: unknown): Id | undefined {
  if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) return id
  if (id === null) return null
  return undefined
}

function fail(id: Id, e: RpcError): RpcAnswer {
  return { jsonrpc: '2.0', id, error: { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) } }
}
