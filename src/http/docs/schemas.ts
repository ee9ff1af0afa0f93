/**
 * JSON Schemas for the OpenAPI document (issue 20 item 7): valibot → JSON Schema 2020-12, and every
 * shape named with `named()` (src/ops/schemas/named.ts) hoisted into `components.schemas` once and
 * referred to by `$ref`. Two different shapes under one name are a programming error: thrown.
 */
import { toJsonSchema } from '@valibot/to-json-schema'
import { schemaName } from '../../ops/schemas/named.ts'
import { isValibot, typedTuple } from '../../ops/schemas/json-schema.ts'
import type { AnySchema, JsonSchema } from '../route.ts'

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` })

/** The named schemas met while converting, to become `components.schemas`. */
export class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {}
  /** The source objects seen under each name and their converted text, to tell a reuse from a clash. */
  private readonly sources = new Map<string, { seen: Set<object>; text: string | null }>()

  /** `s` as JSON Schema with every named subschema (and `s` itself, if named) replaced by a `$ref`. */
  ref(s: AnySchema | JsonSchema): JsonSchema {
    const name = schemaName(s)
    if (name) { this.define(name, s); return ref(name) }
    return this.convert(s)
  }

  /** Convert `s` itself (not a reference to it), referring to the named schemas inside it. */
  private convert(s: AnySchema | JsonSchema): JsonSchema {
    if (!isValibot(s)) return this.walk(s, s) as JsonSchema
    const out = toJsonSchema(s, {
      target: 'draft-2020-12', errorMode: 'ignore',
      overrideSchema: (context) => {
        const { valibotSchema } = context
        const inner = valibotSchema !== s ? schemaName(valibotSchema) : undefined
        if (!inner) return typedTuple(context)
        this.define(inner, valibotSchema)
        return ref(inner)
      },
    }) as JsonSchema
    delete out.$schema
    return out
  }

  private walk(node: unknown, root: object): unknown {
    if (Array.isArray(node)) return node.map((x) => this.walk(x, root))
    if (typeof node !== 'object' || node === null) return node
    const name = node !== root ? schemaName(node) : undefined
    if (name) { this.define(name, node); return ref(name) }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, this.walk(v, root)]))
  }

  private define(name: string, source: object): void {
    const known = this.sources.get(name)
    if (known?.seen.has(source)) return
    if (known && known.text === null) throw new Error(`OpenAPI: the schema named ${name} contains a different schema with the same name`)
    const entry = known ?? { seen: new Set([source]), text: null }
    if (!known) this.sources.set(name, entry)
    const converted = this.convert(source as AnySchema | JsonSchema)
    const text = JSON.stringify(converted)
    // The same shape built twice (e.g. `PaginatedSchema(OrderSchema)` in two files) is one component.
    if (known && known.text !== text) throw new Error(`OpenAPI: two different schemas are named ${name}`)
    entry.seen.add(source)
    if (!known) { entry.text = text; this.schemas[name] = converted }
  }
}
