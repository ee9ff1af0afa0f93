/**
 * Fuzzing every route of the live table over real HTTP by every token family (issue 21 item 1):
 * a bounded sample, seeded (FUZZ_SEED overrides the default; a failure prints the seed, route,
 * family and a curl line that repeats the request). Properties (test/helpers/fuzz/properties.ts):
 * never a 5xx, an answer within the bound, every error the §7 envelope with a catalog code (pages
 * answering their own documented errors excepted), and a 4xx writes nothing. `npm run fuzz` runs more.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { liveRoutes } from './helpers/routes.ts'
import { fuzzHttp } from './helpers/fuzz/run-http.ts'
import { seedFromEnv } from './helpers/fuzz/properties.ts'
import { FUZZ_ENV } from './helpers/fuzz/world.ts'

const s = await startServer(FUZZ_ENV)
t.teardown(() => s.close())

t.test('every route, every token family: no 5xx, no hang, the §7 envelope, and a 4xx writes nothing', async (t) => {
  const runs = Number(process.env.FUZZ_RUNS ?? 2)
  const tally = await fuzzHttp(s, { seed: seedFromEnv(), runs })
  t.comment(tally.summary('http'))
  t.equal(tally.sent, liveRoutes().length * runs, 'every route got its cases')
  t.ok(Object.keys(tally.byFamily).length >= 8, 'requests went out under most token families')
  for (const f of tally.failures) t.fail(f)
})
