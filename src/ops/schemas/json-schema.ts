/**
 * valibot → JSON Schema 2020-12, one conversion for every front door that describes an operation's
 * shapes: the OpenAPI document (src/http/docs/schemas.ts) and the MCP tools' `inputSchema`
 * (src/mcp/schema.ts). Transforms and custom checks are skipped, not fatal.
 */
import { toJsonSchema } from '@valibot/to-json-schema'
import type { AnySchema, JsonSchema } from '../op.ts'

export type Override = NonNullable<NonNullable<Parameters<typeof toJsonSchema>[1]>['overrideSchema']>

export const isValibot = (s: unknown): s is AnySchema => typeof s === 'object' && s !== null && (s as { kind?: string }).kind === 'schema'

/**
 * A tuple as generators that predate `prefixItems` (OpenAPI 3.0) read it too: with `items` (its
 * element types) and `maxItems`, so `[open, close]` is a pair of strings rather than an untyped
 * array (issue 32 item 4; Spectral's `array-items`). A valibot tuple drops extra elements and a
 * strict one refuses them, so a valid value has exactly `prefixItems.length` of them, which is also
 * what the converter's own openapi-3.0 target writes.
 */
export const typedTuple: Override = ({ valibotSchema, jsonSchema }) => {
  if (valibotSchema.type !== 'tuple' && valibotSchema.type !== 'strict_tuple') return null
  const prefix = (jsonSchema as { prefixItems?: JsonSchema[] }).prefixItems ?? []
  const kinds = [...new Map(prefix.map((p) => [JSON.stringify(p), p])).values()]
  return { ...jsonSchema, items: kinds.length === 1 ? kinds[0]! : { anyOf: kinds }, maxItems: prefix.length } as ReturnType<Override>
}

/** `s` as an inlined JSON Schema (no components); a JSON Schema given as such is returned as it is. */
export function jsonSchemaOf(s: AnySchema | JsonSchema): JsonSchema {
  if (!isValibot(s)) return s
  const out = toJsonSchema(s, { target: 'draft-2020-12', errorMode: 'ignore', overrideSchema: typedTuple }) as JsonSchema
  delete out.$schema
  return out
}
