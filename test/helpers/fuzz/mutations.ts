/**
 * Near-misses (issue 21 item 1): a valid input with one thing wrong — a field dropped, given the
 * wrong type, emptied, made huge, negative, fractional, odd unicode or a NaN-like string, an extra
 * field, deep nesting — plus malformed JSON, wrong content types, odd path ids and odd query
 * strings. Pure: values and strings only; ./http.ts puts them on the wire.
 */
import fc from 'fast-check'

/** Strings that break naive parsing, escaping, number coercion and length assumptions. */
export const ODD_STRINGS: readonly string[] = [
  '', ' ', 'NaN', 'Infinity', '-Infinity', '1e999', '-1e999', '-0', '0x10', '1_000', ' 1 ', '00001', 'true', 'null', 'undefined',
  '\uD800', 'a\uDC00b', '\u202Eevil\u202C', 'zero\u200Bwidth\uFEFF', '\u0000', 'a\u0000b', '😀👩‍👩‍👧', 'Ünïcödé', 'ﷺ', '١٢٣', '１２３',
  "'; DROP TABLE orders; --", '<script>alert(1)</script>', '../../etc/passwd', '%00', '%ZZ', '{{ 7*7 }}', '${7*7}', '\r\nX-Injected: 1',
  'x'.repeat(70_000),
]

/** Numbers at and past every boundary a schema or a SQLite column might have. */
export const ODD_NUMBERS: readonly number[] = [
  0, -0, -1, 1.5, -1.5, 0.1 + 0.2, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, 1e19, -1e19, Number.MAX_VALUE, -Number.MAX_VALUE, 5e-324,
]

/** `[[[…]]]` or `{"a":{"a":…}}` nested `depth` deep. */
export function nested(depth: number, kind: 'array' | 'object' = 'array'): unknown {
  let v: unknown = 1
  for (let i = 0; i < depth; i++) v = kind === 'array' ? [v] : { a: v }
  return v
}

/** Any value of the wrong kind for most fields. */
export const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom(...ODD_STRINGS), weight: 4 },
  { arbitrary: fc.constantFrom(...ODD_NUMBERS), weight: 3 },
  { arbitrary: fc.constantFrom<unknown>(true, false, null, [], {}, [null], { '': null }, JSON.parse('{"__proto__":{"polluted":1}}')), weight: 2 },
  { arbitrary: fc.constantFrom(16, 200, 1500).chain((d) => fc.constantFrom(nested(d, 'array'), nested(d, 'object'))), weight: 1 },
  { arbitrary: fc.constant(Array.from({ length: 20_000 }, (_, i) => i)), weight: 1 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 30 }), weight: 2 },
)

/** One change to a valid value: at a path picked by `at` (modulo the value's paths). */
export type Mutation =
  | { kind: 'drop'; at: number }
  | { kind: 'replace'; at: number; value: unknown }
  | { kind: 'extra'; at: number; key: string; value: unknown }
  | { kind: 'whole'; value: unknown }

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), value: oddValue }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('extra' as const), at: fc.nat(), key: fc.constantFrom('extra', 'id', 'owner_id', 'store_id', '__proto__', 'constructor', ''), value: oddValue }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('whole' as const), value: oddValue }), weight: 1 },
)

type Path = Array<string | number>

/** Every path into objects and arrays of `v` (the root first), depth-first. */
export function pathsOf(v: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix)
  if (Array.isArray(v)) v.forEach((x, i) => pathsOf(x, [...prefix, i], out))
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) pathsOf(x, [...prefix, k], out)
  return out
}

/** `value` with `m` applied; the input is not modified. */
export function applyMutation(value: unknown, m: Mutation): unknown {
  if (m.kind === 'whole') return m.value
  const copy = structuredClone(value)
  const paths = pathsOf(copy)
  const containers = paths.filter((p) => { const x = get(copy, p); return x !== null && typeof x === 'object' })
  if (m.kind === 'extra') {
    if (!containers.length) return m.value
    const target = get(copy, containers[m.at % containers.length]!) as Record<string, unknown> | unknown[]
    if (Array.isArray(target)) target.push(m.value)
    else Object.defineProperty(target, m.key, { value: m.value, enumerable: true, writable: true, configurable: true })
    return copy
  }
  const leaves = paths.filter((p) => p.length > 0)
  if (!leaves.length) return m.kind === 'drop' ? undefined : m.value
  const path = leaves[m.at % leaves.length]!
  const parent = get(copy, path.slice(0, -1)) as Record<string | number, unknown> | unknown[]
  const key = path[path.length - 1]!
  if (m.kind === 'drop') {
    if (Array.isArray(parent)) parent.splice(Number(key), 1)
    else delete (parent as Record<string, unknown>)[key]
  } else (parent as Record<string | number, unknown>)[key] = m.value
  return copy
}

function get(v: unknown, path: Path): unknown {
  return path.reduce<unknown>((x, k) => (x as Record<string | number, unknown>)[k], v)
}

/** A valid value from `valid`, with one mutation applied. */
export const nearMiss = (valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
  fc.tuple(valid, mutation).map(([v, m]) => applyMutation(v, m))

/** Bodies that are not JSON, or JSON that no parser should be asked to take. */
export const MALFORMED_JSON: readonly string[] = [
  '{', '}', '{"a":', '[1,]', '{"a":1,}', "{'a':1}", '{a:1}', 'NaN', 'Infinity', 'undefined', '{"a":1}{"b":2}', '"unterminated',
  '\uFEFF{}', '\u0000', '{"a":"\\uD800"}', '{"a":"\\u00"}', '{"a":01}', '{"a":1e999}', '{"__proto__":{"polluted":true}}',
  '['.repeat(100_000), '{"a":'.repeat(50_000), '['.repeat(100_000) + ']'.repeat(100_000), '{"a":'.repeat(30_000) + '1' + '}'.repeat(30_000), `{"a":"${'x'.repeat(2_000_000)}"}`, ' ', '\n\n', 'null', '1', '"s"', '[]',
]

/** Content types a JSON route must refuse or survive. */
export const ODD_CONTENT_TYPES: readonly string[] = [
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/json; charset=utf-16',
  'application/json;;', 'APPLICATION/JSON', 'application/jsonx', 'application/zip', 'application/octet-stream', '', '*/*', 'application/json, text/plain',
]

/** Path segments where an id (or a token, or a slug) goes; already percent-encoded as they go on the wire. */
export const ODD_PATH_IDS: readonly string[] = [
  '0', '-1', '1.5', '1e3', '9999999999999999999', '18446744073709551616', '0x1', '+1', '%201', '1%00', '%00', 'abc', '%ZZ', '%E2%82', '%C0%AF',
  '%2F', '..', '%2e%2e', '%D9%A3', '%EF%BC%91', 'null', 'NaN', 'Infinity', '-0', 'x'.repeat(3000), '9'.repeat(400), '%F0%9F%98%80',
]

/** A raw query string (no `?`) mixing the route's own keys with repetition, array syntax, huge values and bad escapes. */
export function oddQuery(keys: readonly string[]): fc.Arbitrary<string> {
  const key = fc.oneof(fc.constantFrom(...(keys.length ? keys : ['q'])), fc.constantFrom('api_token', 'token', 'format', 'page', 'per_page', 'limit', '__proto__', ''))
  const val = fc.oneof(
    fc.constantFrom(...ODD_PATH_IDS),
    fc.constantFrom(...ODD_STRINGS.filter((x) => x.length < 1000)).map(encodeLoose),
    fc.constantFrom('x'.repeat(10_000), '%', '%%', '%u0041', '+', 'a+b', '1,2,3'),
  )
  const pair = fc.oneof(
    fc.tuple(key, val).map(([k, v]) => `${k}=${v}`),
    fc.tuple(key, val).map(([k, v]) => `${k}[]=${v}&${k}[]=${v}`),
    fc.tuple(key, val).map(([k, v]) => `${k}[a][b]=${v}`),
    fc.tuple(key, val, val).map(([k, a, b]) => `${k}=${a}&${k}=${b}`),
    key.map((k) => k),
    fc.constantFrom('=', '&', '==', '=x', ';', '%3D%26'),
  )
  return fc.array(pair, { minLength: 1, maxLength: 5 }).map((ps) => ps.join('&'))
}

/** A valid query object as the wire form (arrays as repeated keys). */
export function queryString(q: unknown): string {
  // Over about 16 KiB a URL only tests the head limits (issue 21 item 5, test/limits*), not the route.
  const cut = (x: unknown) => String(x).slice(0, 10_000)
  if (Array.isArray(q)) return q.slice(0, 50).map((x) => encodeLoose(cut(x))).join('&')
  if (!q || typeof q !== 'object') return encodeLoose(cut(q))
  const sp = new URLSearchParams()
  for (const [k, v] of Object.entries(q)) {
    // A 20,000-element array belongs in a body; in a URL it would only test the URL length limit.
    for (const x of Array.isArray(v) ? v.slice(0, 50) : [v]) sp.append(k, cut(x !== null && typeof x === 'object' ? JSON.stringify(x) : x))
  }
  return sp.toString()
}

/** Percent-encoding that also takes lone surrogates (as the bytes CESU-8 gives them: not valid UTF-8). */
export function encodeLoose(x: string): string {
  let out = ''
  for (const ch of x) {
    const c = ch.charCodeAt(0)
    out += ch.length === 1 && c >= 0xd800 && c <= 0xdfff
      ? `%${(0xe0 | (c >> 12)).toString(16).toUpperCase()}%${(0x80 | ((c >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (c & 0x3f)).toString(16).toUpperCase()}`
      : encodeURIComponent(ch)
  }
  return out
}
