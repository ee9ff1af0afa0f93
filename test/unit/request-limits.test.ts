/** The byte scans and head limits of src/net/request-limits.ts (docs/limits.md), checked against real parsers. */
import t from 'tap'
import { Packr } from 'msgpackr'
import { headProblem, JSON_SHAPE, jsonShapeProblem, msgpackShapeProblem, MAX_NESTING } from '../../src/net/request-limits.ts'

const b = (s: string) => Buffer.from(s)
/** Depth alone: the other limits out of the way. */
const depthOnly = (max: number) => ({ depth: max, members: Infinity, elements: Infinity, nodes: Infinity })
const jsonTooDeep = (buf: Uint8Array, max = MAX_NESTING) => jsonShapeProblem(buf, depthOnly(max))?.limit === 'depth'
const msgpackTooDeep = (buf: Uint8Array, max = MAX_NESTING) => msgpackShapeProblem(buf, depthOnly(max))?.limit === 'depth'
const nestedJson = (n: number, open = '[', close = ']') => open.repeat(n) + close.repeat(n)

t.test('JSON: depth counts arrays and objects, not brackets inside strings', async (t) => {
  t.notOk(jsonTooDeep(b(nestedJson(MAX_NESTING))), `${MAX_NESTING} levels are fine`)
  t.ok(jsonTooDeep(b(nestedJson(MAX_NESTING + 1))), 'one more is too deep')
  t.ok(jsonTooDeep(b('{"a":'.repeat(65) + '1' + '}'.repeat(65))), 'objects count')
  t.notOk(jsonTooDeep(b(JSON.stringify({ s: '[[[[[['.repeat(100) }))), 'brackets in a string do not count')
  t.notOk(jsonTooDeep(b(JSON.stringify({ s: '\\"[[[[' + '['.repeat(200) }))), 'nor after an escaped quote')
  t.notOk(jsonTooDeep(b('[' + '[],'.repeat(10_000) + '[]]')), 'wide is not deep')
  t.notOk(jsonTooDeep(b('{"items":[{"id":1,"extras":[{"id":2}]}]}')), 'an order body')
})

t.test('MessagePack: depth from the headers, agreeing with msgpackr on what it decodes', async (t) => {
  const packr = new Packr({ useRecords: false })
  const deep = (n: number) => Buffer.concat([Buffer.alloc(n, 0x91), Buffer.from([0x01])]) // fixarray of 1, n times
  t.same(packr.unpack(deep(3)), [[[1]]], 'the test document is what it claims')
  t.notOk(msgpackTooDeep(deep(MAX_NESTING)))
  t.ok(msgpackTooDeep(deep(MAX_NESTING + 1)))
  t.ok(msgpackTooDeep(Buffer.alloc(100_000, 0x81)), 'maps count (fixmap of 1 whose key is a map…)')
  const typical = { type: 'location', lat: 52.52, lng: 13.405, seq: 17, nested: { a: [1, 'x', { b: [true, null, 1.5, -3, 2 ** 40] }], bin: Buffer.alloc(300) }, s: 'y'.repeat(300) }
  const packed = packr.pack(typical)
  t.notOk(msgpackTooDeep(packed), 'a realistic frame with every kind of value')
  t.ok(msgpackTooDeep(packed, 4), 'which nests 5 levels')
  t.notOk(msgpackTooDeep(packed, 5))
  t.ok(jsonTooDeep(b(JSON.stringify(typical)), 4), 'as its JSON form does')
  t.notOk(jsonTooDeep(b(JSON.stringify(typical)), 5))
  t.notOk(msgpackTooDeep(Buffer.from([0xc1])), 'not MessagePack: left to the decoder')
  t.notOk(msgpackTooDeep(Buffer.from([0xdd, 0xff, 0xff])), 'a truncated header: left to the decoder')
  // array16/array32/map16 headers with empty containers nested inside
  const arr16 = (inner: Buffer) => Buffer.concat([Buffer.from([0xdc, 0x00, 0x01]), inner])
  let x = Buffer.from([0x90])
  for (let i = 0; i < MAX_NESTING; i++) x = arr16(x)
  t.ok(msgpackTooDeep(x), 'empty innermost container counts as a level')
})

t.test('JSON shape: members per object, elements per array and values in all, counted as JSON.parse sees them', async (t) => {
  const obj = (n: number) => JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])))
  const arr = (n: number, el = '0') => `[${Array(n).fill(el).join(', ')}]`
  t.equal(jsonShapeProblem(b(obj(JSON_SHAPE.members))), null, `${JSON_SHAPE.members} members are fine`)
  t.same(jsonShapeProblem(b(obj(JSON_SHAPE.members + 1))), { limit: 'members', max: JSON_SHAPE.members })
  t.equal(jsonShapeProblem(b(arr(JSON_SHAPE.elements))), null, `${JSON_SHAPE.elements} elements are fine`)
  t.same(jsonShapeProblem(b(arr(JSON_SHAPE.elements + 1))), { limit: 'elements', max: JSON_SHAPE.elements })
  t.same(jsonShapeProblem(b(arr(10, arr(10)))), null)
  const lim = { depth: 64, members: 1000, elements: 1000, nodes: 111 }
  t.equal(jsonShapeProblem(b(arr(10, arr(10))), lim), null, '1 + 10 + 100 values')
  t.same(jsonShapeProblem(b(arr(10, arr(10)).replace(']]', ', 1]]')), lim), { limit: 'nodes', max: 111 }, 'one more')
  t.equal(jsonShapeProblem(b(arr(10, '[ ]')), lim), null, 'empty containers hold nothing, whitespace or not')
  t.equal(jsonShapeProblem(b(JSON.stringify({ s: ',,,,'.repeat(5000), t: '\\",[{' })), lim), null, 'commas and brackets in strings do not count')
  // The scan agrees with JSON.parse on what it counts, for bodies of every shape.
  const count = (v: unknown): number => 1 + (Array.isArray(v) ? v.reduce((n: number, x) => n + count(x), 0) : v && typeof v === 'object' ? Object.values(v).reduce((n: number, x) => n + count(x), 0) : 0)
  for (const body of [obj(3), arr(0), '{"a":[1,{"b":[]},"x,y"],"c":{}}', ' [ [ ] , { } , "\\\\" , 1 ] ', '"just a string"', '17']) {
    const n = count(JSON.parse(body))
    t.equal(jsonShapeProblem(b(body), { ...lim, nodes: n }), null, `${body}: ${n} values`)
    t.same(jsonShapeProblem(b(body), { ...lim, nodes: n - 1 })?.limit, n > 1 ? 'nodes' : undefined)
  }
})

t.test('MessagePack shape: a map entry is one member and one value, as in JSON', async (t) => {
  const packr = new Packr({ useRecords: false })
  const lim = { depth: 64, members: 3, elements: 4, nodes: 8 }
  t.equal(msgpackShapeProblem(packr.pack({ a: 1, b: 2, c: 3 }), lim), null)
  t.same(msgpackShapeProblem(packr.pack({ a: 1, b: 2, c: 3, d: 4 }), lim), { limit: 'members', max: 3 })
  t.equal(msgpackShapeProblem(packr.pack([1, 2, 3, 4]), lim), null)
  t.same(msgpackShapeProblem(packr.pack([1, 2, 3, 4, 5]), lim), { limit: 'elements', max: 4 })
  t.equal(msgpackShapeProblem(packr.pack({ a: [1, 2], b: { c: 1, d: 2 } }), lim), null, '1 + 2 + 2 + 2 = 7 values')
  t.same(msgpackShapeProblem(packr.pack({ a: [1, 2, 3], b: { c: 1, d: 2 } }), lim), null, '8 values')
  t.same(msgpackShapeProblem(packr.pack({ a: [1, 2, 3, 4], b: { c: 1, d: 2 } }), lim), { limit: 'nodes', max: 8 })
  t.same(msgpackShapeProblem(Buffer.from([0xdd, 0x00, 0x01, 0x00, 0x00])), { limit: 'elements', max: JSON_SHAPE.elements }, 'refused from the header, before its elements')
})

t.test('request head: 414 for the URL, 431 for the headers', async (t) => {
  const lim = { maxUrlBytes: 100, maxHeaderBytes: 200 }
  t.equal(headProblem(100, 200, lim), null)
  t.match(headProblem(101, 0, lim), { status: 414, code: 'uri_too_long' })
  t.match(headProblem(0, 201, lim), { status: 431, code: 'request_header_fields_too_large' })
})
