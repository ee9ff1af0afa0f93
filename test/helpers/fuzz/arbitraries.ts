/**
 * Valid inputs from a route's own schema (issue 21 item 1): a JSON Schema (what `jsonSchemaOf`
 * makes of a route's valibot body or query, or an MCP tool's `inputSchema`) → a fast-check
 * arbitrary of values that satisfy it. Pure: no server, no I/O. Custom valibot checks and
 * transforms are not in the JSON Schema, so "valid" means valid by shape; business rules may
 * still refuse it, which is exactly what the fuzzer wants to reach.
 */
import fc from 'fast-check'

export type Schema = Record<string, any>

/** Known-good values by field name (`item_id` → the world's item ids), mixed into what is generated. */
export type Hints = Record<string, ReadonlyArray<string | number>>

const MAX_EXTRA_ITEMS = 4

/** Values satisfying `schema`; `name` is the property it sits under, for `hints`. */
export function validOf(schema: Schema | boolean | undefined, hints: Hints = {}, name = '', depth = 0): fc.Arbitrary<unknown> {
  const own = valueOf(schema, hints, name, depth)
  const hinted = name ? hints[name] : undefined
  // A hint only helps when it fits the schema's type: an id hint for an integer field, not a string one.
  if (hinted?.length && fits(schema, hinted[0])) return fc.oneof({ arbitrary: fc.constantFrom(...hinted), weight: 3 }, { arbitrary: own, weight: 1 })
  return own
}

function fits(schema: Schema | boolean | undefined, v: unknown): boolean {
  if (!schema || typeof schema !== 'object') return true
  if (Array.isArray(schema.anyOf ?? schema.oneOf)) return (schema.anyOf ?? schema.oneOf).some((s: Schema) => fits(s, v))
  const types = ([] as string[]).concat(schema.type ?? [])
  if (!types.length) return true
  return types.some((t) => (t === 'integer' ? Number.isInteger(v) : t === 'number' ? typeof v === 'number' : typeof v === t))
}

function valueOf(schema: Schema | boolean | undefined, hints: Hints, name: string, depth: number): fc.Arbitrary<unknown> {
  if (schema === undefined || schema === true || (typeof schema === 'object' && Object.keys(schema).length === 0)) return anyJson
  if (schema === false) return fc.constant(null)
  if ('const' in schema) return fc.constant(schema.const)
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]))
  const alts = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined
  if (Array.isArray(alts) && alts.length) return fc.oneof(...alts.map((s) => validOf(s, hints, name, depth)))
  if (Array.isArray(schema.allOf) && schema.allOf.length) return validOf(schema.allOf[0] as Schema, hints, name, depth)
  const types = ([] as string[]).concat(schema.type ?? (schema.properties ? 'object' : []))
  if (types.length > 1) return fc.oneof(...types.map((t) => valueOf({ ...schema, type: t }, hints, name, depth)))
  switch (types[0]) {
    case 'null': return fc.constant(null)
    case 'boolean': return fc.boolean()
    case 'integer': return integerOf(schema)
    case 'number': return numberOf(schema)
    case 'string': return stringOf(schema)
    case 'array': return arrayOf(schema, hints, name, depth)
    case 'object': return objectOf(schema, hints, depth)
    default: return anyJson
  }
}

const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 2 })

function integerOf(s: Schema): fc.Arbitrary<number> {
  const min = typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : typeof s.minimum === 'number' ? Math.ceil(s.minimum) : -1_000_000
  const max = typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - 1 : typeof s.maximum === 'number' ? Math.floor(s.maximum) : 1_000_000
  // Small values are where the world's ids and the interesting boundaries are.
  return fc.oneof(fc.integer({ min, max: Math.min(max, min + 20) }), fc.integer({ min, max: Math.max(min, max) }), fc.constantFrom(min, Math.max(min, max)))
}

function numberOf(s: Schema): fc.Arbitrary<number> {
  const min = typeof s.minimum === 'number' ? s.minimum : -1e6
  const max = typeof s.maximum === 'number' ? s.maximum : 1e6
  return fc.oneof(fc.double({ min, max, noNaN: true, noDefaultInfinity: true }), integerOf(s))
}

function stringOf(s: Schema): fc.Arbitrary<string> {
  const minLength = typeof s.minLength === 'number' ? s.minLength : 0
  const maxLength = Math.max(minLength, Math.min(typeof s.maxLength === 'number' ? s.maxLength : 40, minLength + 40))
  switch (s.format) {
    case 'email': return fc.emailAddress().filter((e) => e.length >= minLength && e.length <= (s.maxLength ?? 1e9))
    case 'uri': return fc.webUrl({ validSchemes: ['https'] })
    case 'date-time': return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString())
    default: break
  }
  if (typeof s.pattern === 'string') {
    let re: RegExp | null = null
    try { re = new RegExp(s.pattern, 'u') } catch { re = null }
    if (re) {
      const cap = typeof s.maxLength === 'number' ? s.maxLength : Infinity
      return fc.stringMatching(re).filter((x) => x.length >= minLength && x.length <= cap)
    }
  }
  // Lengths are UTF-16 code units in valibot (and JavaScript); a grapheme may be several.
  return fc.string({ minLength, maxLength, unit: 'grapheme' }).map((x) => x.slice(0, maxLength))
}

function arrayOf(s: Schema, hints: Hints, name: string, depth: number): fc.Arbitrary<unknown[]> {
  const minLength = typeof s.minItems === 'number' ? s.minItems : 0
  const maxLength = Math.max(minLength, Math.min(typeof s.maxItems === 'number' ? s.maxItems : MAX_EXTRA_ITEMS, minLength + MAX_EXTRA_ITEMS))
  if (Array.isArray(s.prefixItems)) {
    const head = (s.prefixItems as Schema[]).map((p) => validOf(p, hints, name, depth + 1))
    return fc.tuple(...head)
  }
  // Hints keyed by a list's name (`extras`) apply to its items too.
  return fc.array(validOf(s.items as Schema | undefined, hints, name, depth + 1), { minLength, maxLength })
}

function objectOf(s: Schema, hints: Hints, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const props = (s.properties ?? {}) as Record<string, Schema>
  const required = new Set<string>(Array.isArray(s.required) ? s.required : [])
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [k, p] of Object.entries(props)) model[k] = validOf(p, hints, k, depth + 1)
  const known = fc.record(model, { requiredKeys: [...required].filter((k) => k in model) })
  const extra = s.additionalProperties && typeof s.additionalProperties === 'object' && depth < 3
    ? fc.dictionary(propertyName(s.propertyNames as Schema | undefined), validOf(s.additionalProperties as Schema, hints, '', depth + 1), { maxKeys: 3 })
    : fc.constant({})
  return fc.tuple(known, extra).map(([k, e]) => ({ ...e, ...k }))
}

function propertyName(s: Schema | undefined): fc.Arbitrary<string> {
  if (Array.isArray(s?.enum)) return fc.constantFrom(...(s.enum as string[]))
  if (s && (s.pattern || s.minLength || s.maxLength)) return stringOf({ type: 'string', ...s }).filter((x) => x !== '__proto__')
  return fc.string({ minLength: 1, maxLength: 12 }).filter((x) => x !== '__proto__')
}
