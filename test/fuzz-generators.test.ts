/**
 * The fuzzers' pure parts (test/helpers/fuzz/): valid values from a schema really are valid (by
 * the route's own valibot schema), each mutation changes exactly what it says, odd strings reach
 * the wire encodable, frames over a limit know the close they may get, and the envelope check
 * accepts the §7 envelope and nothing else.
 */
import t from 'tap'
import fc from 'fast-check'
import * as v from 'valibot'
import { unpack } from 'msgpackr'
import { validOf, type Schema } from './helpers/fuzz/arbitraries.ts'
import { applyMutation, encodeLoose, nested, pathsOf, queryString } from './helpers/fuzz/mutations.ts'
import { deepMsgpack, framesFor, FRAME_HARD_CAP, SOCKET_FRAMES } from './helpers/fuzz/frames.ts'
import { envelopeProblem, subSeed } from './helpers/fuzz/properties.ts'
import { liveRoutes, label } from './helpers/routes.ts'
import { jsonSchemaOf } from '../src/http/openapi.ts'

t.test('generated values satisfy hand-written schemas', async (t) => {
  const schema: Schema = {
    type: 'object', required: ['kind', 'n', 'items'],
    properties: {
      kind: { enum: ['a', 'b'] }, n: { type: 'integer', minimum: 1, maximum: 9 }, name: { anyOf: [{ type: 'string', maxLength: 3 }, { type: 'null' }] },
      items: { type: 'array', minItems: 1, maxItems: 2, items: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } }, required: ['id'] } },
      code: { type: 'string', pattern: '^[A-Z]{2}[0-9]$' },
    },
  }
  const valibot = v.object({
    kind: v.picklist(['a', 'b']), n: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(9)), name: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(3)))),
    items: v.pipe(v.array(v.object({ id: v.pipe(v.number(), v.integer(), v.minValue(1)) })), v.minLength(1), v.maxLength(2)),
    code: v.optional(v.pipe(v.string(), v.regex(/^[A-Z]{2}[0-9]$/))),
  })
  for (const x of fc.sample(validOf(schema), { seed: 1, numRuns: 300 })) {
    const r = v.safeParse(valibot, x)
    if (!r.success) t.fail(`${JSON.stringify(x)}: ${r.issues.map((i) => i.message).join('; ')}`)
  }
  const hinted = fc.sample(validOf({ type: 'integer', minimum: 1 }, { item_id: [4242] }, 'item_id'), { seed: 1, numRuns: 100 })
  t.ok(hinted.filter((x) => x === 4242).length > 40, 'hints are used for fields of their name')
})

t.test("most routes' generated bodies and queries pass the route's own valibot schema", async (t) => {
  // Custom checks (a phone format, a date range) are not in the JSON Schema; a route whose input no
  // generated value passes only gets refusals, so the fuzzer would never reach its handler.
  const misses: string[] = []
  let schemas = 0
  for (const r of liveRoutes()) {
    for (const [what, s] of [['body', r.body], ['query', r.query]] as const) {
      if (!s) continue
      schemas++
      const xs = fc.sample(validOf(jsonSchemaOf(s) as Schema), { seed: 7, numRuns: 40 })
      if (!xs.some((x) => v.safeParse(s, what === 'query' && x && typeof x === 'object' ? stringly(x) : x).success)) misses.push(`${label(r)} ${what}`)
    }
  }
  t.comment(`${schemas - misses.length}/${schemas} schemas reached; not reached: ${misses.join(', ') || 'none'}`)
  t.ok(misses.length <= schemas * 0.1, `at most a tenth of the schemas are never satisfied (${misses.length})`)
})

/** A query as the server sees it: strings (arrays stay arrays of strings). */
const stringly = (q: object) => Object.fromEntries(Object.entries(q).map(([k, x]) => [k, Array.isArray(x) ? x.map(String) : String(x)]))

t.test('mutations change exactly what they say and leave the input alone', async (t) => {
  const base = { a: 1, b: { c: [1, 2] } }
  const frozen = JSON.stringify(base)
  t.same(pathsOf(base), [[], ['a'], ['b'], ['b', 'c'], ['b', 'c', 0], ['b', 'c', 1]])
  t.same(applyMutation(base, { kind: 'drop', at: 0 }), { b: { c: [1, 2] } }, 'drop a key')
  t.same(applyMutation(base, { kind: 'drop', at: 3 }), { a: 1, b: { c: [2] } }, 'drop an array element')
  t.same(applyMutation(base, { kind: 'replace', at: 2, value: 'NaN' }), { a: 1, b: { c: 'NaN' } }, 'replace one leaf')
  t.same(applyMutation(base, { kind: 'extra', at: 1, key: 'x', value: null }), { a: 1, b: { c: [1, 2], x: null } }, 'add a field')
  t.equal(JSON.stringify(applyMutation(base, { kind: 'extra', at: 0, key: '__proto__', value: { p: 1 } })), '{"a":1,"b":{"c":[1,2]},"__proto__":{"p":1}}', '__proto__ becomes an own key on the wire')
  t.equal(applyMutation(base, { kind: 'whole', value: 5 }), 5)
  t.equal(JSON.stringify(base), frozen, 'input unchanged')
  t.equal(JSON.stringify(nested(3)), '[[[1]]]')
})

t.test('odd strings reach the wire: lone surrogates as bytes that are not UTF-8, URLs bounded', async (t) => {
  t.equal(encodeLoose('a\uD800b'), 'a%ED%A0%80b')
  t.equal(encodeLoose('é'), '%C3%A9')
  t.equal(queryString({ k: [1, 2] }), 'k=1&k=2')
  t.ok(queryString({ k: 'x'.repeat(70_000) }).length < 11_000, 'query values are cut')
  t.ok(queryString(Array.from({ length: 20_000 }, (_, i) => i)).split('&').length <= 50, 'no 20,000-key query')
})

t.test('frames over a limit say which close they may get; deep MessagePack decodes to its depth', async (t) => {
  const frames = fc.sample(framesFor(SOCKET_FRAMES.track!, 1024), { seed: 3, numRuns: 400 })
  for (const f of frames) {
    if (f.data.length > FRAME_HARD_CAP) t.ok(f.mayClose?.includes(1006), `${f.kind} ${f.data.length} bytes may drop (1006)`)
    else if (f.data.length > 1024) t.ok(f.mayClose?.includes(1009), `${f.kind} ${f.data.length} bytes may close 1009`)
  }
  let depth = 0
  for (let x: unknown = unpack(deepMsgpack(10)); Array.isArray(x); x = x[0]) depth++
  t.equal(depth, 10)
})

t.test('the envelope check takes the §7 envelope with a catalog reason of its status and the spec\'s code, nothing else', async (t) => {
  const json = 'application/json; charset=utf-8'
  t.equal(envelopeProblem(404, json, '{"message":"No.","code":"not_found","reason":"route_not_found"}'), null)
  t.equal(envelopeProblem(409, json, '{"message":"No.","code":"conflict","reason":"conflict"}'), null)
  t.equal(envelopeProblem(422, json, '{"message":"No.","code":"validation_failed","reason":"store_closed","errors":{"body":["No."]}}'), null)
  t.match(envelopeProblem(404, json, '{"message":"No.","code":"not_found","reason":"nope"}'), /not in the error catalog/)
  t.match(envelopeProblem(400, json, '{"message":"No.","code":"not_found","reason":"not_found"}'), /catalogued as 404/)
  t.match(envelopeProblem(404, json, '{"message":"No.","code":"route_not_found","reason":"route_not_found"}'), /instead of not_found/)
  t.match(envelopeProblem(404, 'text/html', '<p>no</p>'), /content-type/)
  t.match(envelopeProblem(422, json, '{"message":"No.","code":"validation_failed","reason":"validation_failed","errors":{"a":"bad"}}'), /errors/)
  t.match(envelopeProblem(422, json, '{"message":"No.","code":"validation_failed","reason":"off_shift"}'), /without `errors`/)
  t.match(envelopeProblem(404, json, '{"code":"not_found","reason":"not_found"}'), /message/)
})

t.test('per-subject seeds are stable and differ between subjects', async (t) => {
  t.equal(subSeed(1, 'GET /a'), subSeed(1, 'GET /a'))
  t.not(subSeed(1, 'GET /a'), subSeed(1, 'GET /b'))
  t.not(subSeed(1, 'GET /a'), subSeed(2, 'GET /a'))
})
