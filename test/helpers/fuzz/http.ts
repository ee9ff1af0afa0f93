/**
 * HTTP requests generated from one route of the live table (issue 21 item 1): valid bodies and
 * queries from the route's own schemas, near-misses, malformed JSON, wrong content types, odd path
 * ids, odd query strings and a wrong method, each sent by a token family — the route's own most of
 * the time, any other sometimes.
 */
import fc from 'fast-check'
import type { Route } from '../../../src/http/route.ts'
import { fullPath } from '../../../src/http/server.ts'
import { jsonSchemaOf } from '../../../src/http/openapi.ts'
import { validOf, type Schema } from './arbitraries.ts'
import { MALFORMED_JSON, nearMiss, ODD_CONTENT_TYPES, ODD_PATH_IDS, ODD_STRINGS, oddQuery, oddValue, queryString } from './mutations.ts'
import { FAMILIES, paramValue, type Family, type World } from './world.ts'

export interface HttpCase {
  /** `METHOD /path/{param}` of the route the case was made from. */
  route: string
  family: Family
  /** What kind of input this is (for the summary): valid, near-miss, malformed-json, ... */
  kind: string
  method: string
  /** Path and query, percent-encoded as sent. */
  target: string
  headers: Record<string, string>
  body?: string
}

/** The families that normally call a route of `auth`. */
const OWN: Record<string, Family[]> = {
  none: ['none'], owner: ['owner', 'owner-narrow', 'app'], staff: ['staff'], customer: ['customer'], storefront: ['storefront'],
  driver: ['driver'], session: ['session'], shell: ['shell'],
}

export const routeLabel = (r: Route): string => `${r.method} ${fullPath(r)}`

/** Whether a valid call of `r` may destroy part of the world (the runner rebuilds it afterwards). */
export const mayDestroy = (r: Route): boolean =>
  r.method !== 'GET' && !/\/(menu\/search|cart\/price|cart\/coupon|themes\/validate)$/.test(r.path)

/** Cases for `r` against `w`. */
export function httpCases(r: Route, w: World): fc.Arbitrary<HttpCase> {
  const own = OWN[r.auth] ?? ['none']
  const family = fc.oneof({ arbitrary: fc.constantFrom(...own), weight: 4 }, { arbitrary: fc.constantFrom(...FAMILIES), weight: 1 })
  const path = fullPath(r)
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!)
  const filled = (odd?: { at: number; id: string }) => path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (odd && names[odd.at % names.length] === name) return odd.id
    const v = paramValue(w, r.path, name)
    return encodeURIComponent(String(v ?? 1))
  })
  const oddPath = names.length ? fc.record({ at: fc.nat(), id: fc.constantFrom(...ODD_PATH_IDS) }) : fc.constant(undefined)
  const pathArb = fc.oneof({ arbitrary: fc.constant(undefined), weight: 5 }, { arbitrary: oddPath, weight: 1 }).map(filled)

  const qSchema = r.query ? (jsonSchemaOf(r.query) as Schema) : undefined
  const qKeys = Object.keys(qSchema?.properties ?? {})
  const query: fc.Arbitrary<{ kind: string; qs: string }> = qSchema
    ? fc.oneof(
      { arbitrary: validOf(qSchema, w.hints).map((q) => ({ kind: 'valid', qs: queryString(q) })), weight: 3 },
      { arbitrary: nearMiss(validOf(qSchema, w.hints)).map((q) => ({ kind: 'near-miss-query', qs: queryString(q) })), weight: 3 },
      { arbitrary: oddQuery(qKeys).map((qs) => ({ kind: 'odd-query', qs })), weight: 2 },
    )
    : fc.oneof({ arbitrary: fc.constant({ kind: 'valid', qs: '' }), weight: 6 }, { arbitrary: oddQuery([]).map((qs) => ({ kind: 'odd-query', qs })), weight: 1 })

  const json = (v: unknown) => ({ type: 'application/json', text: JSON.stringify(v) ?? '' })
  const bSchema = r.body ? (jsonSchemaOf(r.body) as Schema) : undefined
  type Body = { kind: string; type?: string; text?: string }
  let body: fc.Arbitrary<Body>
  if (r.form) {
    const pairs = fc.dictionary(fc.constantFrom('csrf', 'email', 'password', 'code', 'phone', 'item_id', 'quantity', 'decision', 'name', 'x'), fc.oneof(fc.string(), fc.constantFrom(...ODD_STRINGS)), { maxKeys: 5 })
    body = fc.oneof(
      pairs.map((p) => ({ kind: 'form', type: 'application/x-www-form-urlencoded', text: new URLSearchParams(p).toString() })),
      fc.constantFrom(...ODD_CONTENT_TYPES).map((type) => ({ kind: 'content-type', type, text: 'a=1&b=%ZZ&' })),
      fc.constantFrom(...MALFORMED_JSON).map((text) => ({ kind: 'malformed-json', type: 'application/json', text })),
    )
  } else if (bSchema) {
    body = fc.oneof(
      { arbitrary: validOf(bSchema, w.hints).map((v) => ({ kind: 'valid', ...json(v) })), weight: 5 },
      { arbitrary: nearMiss(validOf(bSchema, w.hints)).map((v) => ({ kind: 'near-miss', ...json(v) })), weight: 7 },
      { arbitrary: fc.constantFrom(...MALFORMED_JSON).map((text) => ({ kind: 'malformed-json', type: 'application/json', text })), weight: 1 },
      { arbitrary: fc.tuple(validOf(bSchema, w.hints), fc.constantFrom(...ODD_CONTENT_TYPES)).map(([v, type]) => ({ kind: 'content-type', type, text: JSON.stringify(v) })), weight: 1 },
      { arbitrary: fc.constant({ kind: 'no-body' }), weight: 1 },
    )
  } else if (r.method === 'GET') {
    body = fc.constant({ kind: 'valid' })
  } else {
    body = fc.oneof({ arbitrary: fc.constant({ kind: 'valid' }), weight: 4 }, { arbitrary: oddValue.map((v) => ({ kind: 'unexpected-body', ...json(v) })), weight: 1 })
  }
  const method = fc.oneof({ arbitrary: fc.constant(r.method), weight: 12 }, { arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'), weight: 1 })

  return fc.record({ family, path: pathArb, query, body, method }).map(({ family, path, query, body, method }) => {
    const headers: Record<string, string> = { ...w.headers[family] }
    if (body.type !== undefined) headers['content-type'] = body.type
    const kind = method !== r.method ? 'wrong-method' : path !== filled() ? 'odd-path' : query.kind !== 'valid' ? query.kind : body.kind
    const sendsBody = body.text !== undefined && method !== 'GET'
    return { route: routeLabel(r), family, kind, method, target: path + (query.qs ? `?${query.qs}` : ''), headers, ...(sendsBody ? { body: body.text } : {}) }
  })
}

/** The case as a copy-pasteable reproduction (curl), long bodies shortened with their length. */
export function describeCase(site: string, c: HttpCase): string {
  const cut = (x: string) => (x.length > 600 ? `${x.slice(0, 600)}…(${x.length} chars)` : x)
  const h = Object.entries(c.headers).map(([k, v]) => ` -H ${JSON.stringify(`${k}: ${v}`)}`).join('')
  const b = c.body !== undefined ? ` --data-raw ${JSON.stringify(cut(c.body))}` : ''
  return `[${c.family} · ${c.kind}] curl -X ${c.method} ${JSON.stringify(cut(site + c.target))}${h}${b}`
}
