/**
 * Every MCP tool's `inputSchema` is a JSON Schema an agent's validator reads whole: the same
 * valibot → JSON Schema conversion as the OpenAPI document (src/ops/schemas/json-schema.ts), so every array
 * says what it holds — tuples (business hours' `[open, close]`) included, as `items` besides
 * `prefixItems` — and the top is an object, as MCP requires.
 */
import t from 'tap'
import { MCP_SERVERS } from '../../src/mcp/servers/index.ts'
import { inputSchemaOf } from '../../src/mcp/schema.ts'

function arraysWithoutItems(node: unknown, path: string, out: string[]): string[] {
  if (Array.isArray(node)) node.forEach((x, i) => arraysWithoutItems(x, `${path}[${i}]`, out))
  else if (node && typeof node === 'object') {
    const o = node as Record<string, unknown>
    if ((o.type === 'array' || (Array.isArray(o.type) && o.type.includes('array'))) && o.items === undefined) out.push(path)
    for (const [k, v] of Object.entries(o)) arraysWithoutItems(v, `${path}.${k}`, out)
  }
  return out
}

t.test('every tool input schema: an object, every array with items', async (t) => {
  let tuples = 0
  for (const server of MCP_SERVERS) {
    for (const b of server.tools) {
      const schema = inputSchemaOf(b)
      t.equal(schema.type, 'object', `${server.path} ${b.name}: an object at the top`)
      t.same(arraysWithoutItems(schema, b.name, []), [], `${server.path} ${b.name}: every array says what it holds`)
      tuples += JSON.stringify(schema).split('"prefixItems"').length - 1
    }
  }
  t.ok(tuples > 0, `tuples are among them (${tuples}), read as typed arrays`)
})
