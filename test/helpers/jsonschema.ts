/**
 * A small JSON Schema checker for the subset the OpenAPI document uses for responses (type,
 * required, properties, additionalProperties, items, anyOf/oneOf, enum, const, $ref into
 * components). Enough to prove that real responses match what the document promises.
 */
type Schema = Record<string, any>

function typeOf(x: unknown): string {
  if (x === null) return 'null'
  if (Array.isArray(x)) return 'array'
  if (typeof x === 'number') return Number.isInteger(x) ? 'integer' : 'number'
  return typeof x
}

const typeMatches = (t: string, x: unknown) => {
  const got = typeOf(x)
  return t === got || (t === 'number' && got === 'integer')
}

/** Problems found (empty when `value` conforms), each with a JSON path. */
export function checkSchema(schema: Schema | boolean | undefined, value: unknown, root: Schema, path = '$'): string[] {
  if (schema === true || schema === undefined) return []
  if (schema === false) return [`${path}: not allowed`]
  if (schema.$ref) {
    const target = (schema.$ref as string).replace(/^#\//, '').split('/').reduce((o: any, k) => o?.[k], root)
    if (!target) return [`${path}: unresolvable $ref ${schema.$ref}`]
    return checkSchema(target, value, root, path)
  }
  const out: string[] = []
  if (schema.anyOf || schema.oneOf) {
    const alts = (schema.anyOf ?? schema.oneOf) as Schema[]
    if (!alts.some((s) => checkSchema(s, value, root, path).length === 0)) out.push(`${path}: matches none of ${alts.length} alternatives (${JSON.stringify(value)?.slice(0, 80)})`)
  }
  if (schema.type) {
    const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type]
    if (!types.some((t) => typeMatches(t, value))) return [...out, `${path}: expected ${types.join('|')}, got ${typeOf(value)}`]
  }
  if (schema.enum && !schema.enum.some((e: unknown) => e === value)) out.push(`${path}: ${JSON.stringify(value)} not in enum`)
  if ('const' in schema && schema.const !== value) out.push(`${path}: expected const ${JSON.stringify(schema.const)}`)
  if (typeOf(value) === 'object') {
    const obj = value as Record<string, unknown>
    for (const k of schema.required ?? []) if (!(k in obj)) out.push(`${path}: missing required ${k}`)
    const props: Record<string, Schema> = schema.properties ?? {}
    for (const [k, v] of Object.entries(obj)) {
      if (k in props) out.push(...checkSchema(props[k]!, v, root, `${path}.${k}`))
      else if (schema.additionalProperties !== undefined && typeof schema.additionalProperties === 'object') out.push(...checkSchema(schema.additionalProperties, v, root, `${path}.${k}`))
      else if (schema.additionalProperties === false) out.push(`${path}: unexpected property ${k}`)
    }
  }
  if (Array.isArray(value) && schema.items) value.forEach((v, i) => out.push(...checkSchema(schema.items, v, root, `${path}[${i}]`)))
  return out
}
