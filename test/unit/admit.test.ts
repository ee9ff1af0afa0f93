/**
 * `admit` (src/ops/invoke.ts): an admission operation decides at once, for a socket's upgrade and its
 * credential re-checks. Its refusal is thrown to the door; one whose run returned a promise would
 * decide nothing, so it is refused as a programming error rather than admitting everyone.
 */
import t from 'tap'
import { admit } from '../../src/ops/invoke.ts'
import { defineOp } from '../../src/ops/op.ts'
import { ApiError } from '../../src/errors.ts'
import type { Services } from '../../src/services.ts'

const svc = {} as Services
const op = (run: () => null | Promise<null>) => defineOp({ id: 'test.admit', tag: 'Test', summary: 'test', access: { public: true }, scope: [], output: { type: 'null' }, run })

t.test('a synchronous admission admits and answers the resolved scope', async (t) => {
  t.same(admit(op(() => null), svc, null, {}), {})
})

t.test('its refusal reaches the door', async (t) => {
  t.throws(() => admit(op(() => { throw new ApiError('forbidden') }), svc, null, {}), { code: 'forbidden' })
})

t.test('an admission that answers a promise is refused, not taken as a yes', async (t) => {
  t.throws(() => admit(op(async () => { throw new ApiError('forbidden') }), svc, null, {}), /must decide synchronously/)
})
