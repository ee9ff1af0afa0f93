/**
 * The error catalog (src/errors.ts) and its documentation (docs/errors.md) name the same codes with
 * the same statuses, and every code's envelope follows api-v1 §7: the statuses of the spec's table
 * answer the spec's `code`, the catalog code is the `reason`, and every 422 names its fields.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { ApiError, ERROR_CATALOG, WHOLE_REQUEST, type ErrorCode } from '../../src/errors.ts'
import { SPEC_TABLE } from '../helpers/spec-errors.ts'

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8')
const rows = new Map([...doc.matchAll(/^\| (\d{3}) \| `(\w+)` \| `(\w+)` \|/gm)].map((m) => [m[3]!, { status: Number(m[1]), code: m[2]! }]))
const codes = Object.keys(ERROR_CATALOG) as ErrorCode[]

t.test('docs/errors.md documents every catalog code with its status, code and reason', async (t) => {
  for (const reason of codes) {
    const { status } = ERROR_CATALOG[reason]
    t.same(rows.get(reason), { status, code: SPEC_TABLE[status] ?? reason }, `docs/errors.md: ${reason}`)
  }
  for (const reason of rows.keys()) t.ok(reason in ERROR_CATALOG, `${reason} in docs/errors.md is a catalog code`)
})

t.test('the statuses of the spec\'s table answer the spec\'s code, with the catalog code as reason', async (t) => {
  for (const status of Object.keys(SPEC_TABLE).map(Number)) {
    t.ok(codes.some((c) => ERROR_CATALOG[c].status === status && c === SPEC_TABLE[status]), `${SPEC_TABLE[status]} is itself a catalog code of ${status}`)
  }
  for (const reason of codes) {
    const { status } = ERROR_CATALOG[reason]
    const body = new ApiError(reason).toJSON()
    t.equal(body.code, SPEC_TABLE[status] ?? reason, `${status} ${reason}: code`)
    t.equal(body.reason, reason, `${status} ${reason}: reason`)
  }
})

t.test('every 422 has a non-empty errors map; a rule without a field is keyed as the whole request', async (t) => {
  for (const reason of codes.filter((c) => ERROR_CATALOG[c].status === 422)) {
    const body = new ApiError(reason, 'Refused.').toJSON()
    t.same(body.errors, { [WHOLE_REQUEST]: ['Refused.'] }, `${reason} without fields`)
    t.same(new ApiError(reason, 'Refused.', {}).toJSON().errors, { [WHOLE_REQUEST]: ['Refused.'] }, `${reason} with an empty map`)
    t.same(new ApiError(reason, 'Refused.', { amount: ['Too much.'] }).toJSON().errors, { amount: ['Too much.'] }, `${reason} keeps its fields`)
  }
  t.equal(new ApiError('conflict').toJSON().errors, undefined, 'other statuses carry `errors` only where a code documents it')
  t.match(doc, new RegExp(`keyed\\s+\\*\\*\`${WHOLE_REQUEST}\`\\*\\*`), 'docs/errors.md names the whole-request key')
})
