/**
 * Fuzzing every WebSocket (issue 21 item 1; docs/realtime.md, docs/kds.md): generated and mutated
 * frames on the driver, tracking, dispatch, orders and kitchen sockets, JSON and MessagePack, plus
 * odd upgrade addresses. Properties (test/helpers/fuzz/run-ws.ts): a documented error frame or a
 * documented close code, never a hang, a refused frame writes nothing, `/healthz` and another
 * socket keep working. Seeded (FUZZ_SEED); `npm run fuzz -- --ws` runs more.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { fuzzWs, SOCKETS } from './helpers/fuzz/run-ws.ts'
import { seedFromEnv } from './helpers/fuzz/properties.ts'
import { FUZZ_ENV } from './helpers/fuzz/world.ts'

const s = await startServer(FUZZ_ENV)
t.teardown(() => s.close())

t.test('every socket survives generated frames: documented answers and closes only', async (t) => {
  const runs = Number(process.env.FUZZ_RUNS ?? 40)
  const tally = await fuzzWs(s, { seed: seedFromEnv(), runs })
  t.comment(tally.summary('ws'))
  for (const k of SOCKETS) t.equal(tally.byFamily[k.name], runs, `${k.name}: every frame sent`)
  for (const f of tally.failures) t.fail(f)
})
