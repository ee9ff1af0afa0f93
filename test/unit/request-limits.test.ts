/** The byte scans and head limits of src/net/request-limits.ts (docs/limits.md), checked against real parsers. */
import t from 'tap'
import { Packr } from 'msgpackr'
import { headProblem, jsonTooDeep, msgpackTooDeep, MAX_NESTING } from '../../src/net/request-limits.ts'

const b = (s: string) => Buffer.from(s)
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

t.test('request head: 414 for the URL, 431 for the headers', async (t) => {
  const lim = { maxUrlBytes: 100, maxHeaderBytes: 200 }
  t.equal(headProblem(100, 200, lim), null)
  t.match(headProblem(101, 0, lim), { status: 414, code: 'uri_too_long' })
  t.match(headProblem(0, 201, lim), { status: 431, code: 'request_header_fields_too_large' })
})
