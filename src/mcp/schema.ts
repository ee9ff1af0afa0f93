/** The JSON Schema an agent sees for a tool's arguments, derived from the op input it binds. */
import type { AnySchema, JsonSchema } from '../ops/op.ts'
import { jsonSchemaOf } from '../ops/schemas/json-schema.ts'
import type { ToolBinding } from './tool.ts'

const ID_WORDS: Record<string, string> = { store: 'restaurant', order: 'order', driver: 'driver', endpoint: 'webhook endpoint' }

/**
 * The op input's object schema plus each scope-id argument as a required positive integer
 * (MCP requires `type: "object"` at the top). A binding that maps its arguments declares its own.
 */
export function inputSchemaOf(b: ToolBinding): JsonSchema {
  if (b.inputSchema) return b.inputSchema
  const base: JsonSchema = b.op.input ? jsonSchemaOf(b.op.input as AnySchema) : { type: 'object', properties: {} }
  const idProps: Record<string, JsonSchema> = {}
  const idNames: string[] = []
  for (const [need, arg] of Object.entries(b.ids ?? {})) {
    idProps[arg] = { type: 'integer', minimum: 1, description: `Id of the ${ID_WORDS[need] ?? need}.` }
    idNames.push(arg)
  }
  const props = { ...idProps, ...((base.properties as Record<string, JsonSchema> | undefined) ?? {}) }
  const required = [...new Set([...idNames, ...((base.required as string[] | undefined) ?? [])])]
  return { ...base, type: 'object', properties: props, ...(required.length ? { required } : {}) }
}
