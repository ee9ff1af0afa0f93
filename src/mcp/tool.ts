/**
 * MCP tools as bindings to operations (api-v1 §4.11, ARCHITECTURE "The shape" 1): a tool names an
 * op, says which argument names each scope resource and, when they differ, how its arguments map
 * onto the op input. No business rule lives here: a tool call runs exactly the op pipeline
 * (src/ops/invoke.ts): authorize → resolve scope (not_found) → validate → run.
 */
import type { Principal } from '../auth/principals.ts'
import type { JsonSchema, Op, ScopeNeed } from '../ops/op.ts'
import type { Services } from '../services.ts'
import type { Completer, ResourceBinding } from './resources.ts'

export type { JsonSchema }

export interface ToolBinding {
  /** snake_case, unique within its server. */
  name: string
  /** The operation it binds (src/ops). */
  op: Op
  /** What an agent reads; default: the op summary + description. */
  description?: string
  /** Tool argument that names each scope resource, e.g. `{ store: 'restaurant_id', order: 'order_id' }`. */
  ids?: Partial<Record<ScopeNeed, string>>
  /**
   * Tool arguments → op input when they differ (default: the arguments as they are; valibot
   * objects ignore unknown keys, so the id arguments may stay in).
   */
  args?: (args: Record<string, unknown>) => unknown
  /** Override the derived schema (derived = op input JSON Schema + the id arguments as required integers). */
  inputSchema?: JsonSchema
  /** Op value → what the agent sees (default: the value). */
  result?: (value: unknown) => unknown
  /** MCP annotation `readOnlyHint`. */
  readOnly?: boolean
}

/** Make a tool binding; reads like `bind(op, …)` for HTTP routes. */
export const tool = (op: Op, b: Omit<ToolBinding, 'op'>): ToolBinding => ({ ...b, op })

export type McpPath = '/mcp' | '/mcp/storefront' | '/mcp/customer' | '/mcp/catalog' | '/mcp/dev'

export interface McpServerDef {
  /** Address under `{site_url}`. */
  path: McpPath
  /** `serverInfo.name` in the initialize answer. */
  name: string
  title: string
  /** `instructions` in the initialize answer: what the server is for, read by the agent first. */
  instructions: string
  /** The credential family the address authenticates (api-v1 §5); `none` for public servers. */
  auth: 'owner' | 'storefront' | 'customer' | 'none'
  /**
   * Who may open the server at all: an operation (src/ops/apps/mcp-admission.ts) run through the one
   * pipeline before any message, its refusal answered as the HTTP error envelope, e.g. the storefront
   * `agent` scope or the admin `mcp` plan feature.
   */
  admission?: Op
  tools: ToolBinding[]
  /** Resources and templates (MCP "Resources"), read through their ops; declares the `resources` capability. */
  resources?: ResourceBinding[]
  /** Completions per argument name of a resource template (MCP "Completion"); declares `completions`. */
  completions?: Record<string, Completer>
}
