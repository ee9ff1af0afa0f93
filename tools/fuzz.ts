/**
 * `npm run fuzz -- --runs N [--seed S] [--only <substring>] [--http] [--ws] [--mcp]` (issue 21 item 1):
 * the fuzzers of test/fuzz-*.test.ts with more cases. Prints requests per token family, outcomes by
 * status class and every failure with its seed and reproduction; exit 1 on any failure.
 */
import { parseArgs } from 'node:util'
import { startServer } from '../test/helpers/server.ts'
import { fuzzHttp } from '../test/helpers/fuzz/run-http.ts'
import { fuzzWs } from '../test/helpers/fuzz/run-ws.ts'
import { fuzzMcp } from '../test/helpers/fuzz/run-mcp.ts'
import { DEFAULT_SEED, Tally } from '../test/helpers/fuzz/properties.ts'
import { FUZZ_ENV } from '../test/helpers/fuzz/world.ts'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '100' },
    seed: { type: 'string' },
    only: { type: 'string' },
    http: { type: 'boolean' }, ws: { type: 'boolean' }, mcp: { type: 'boolean' },
  },
})
const runs = Number(values.runs)
const seed = values.seed !== undefined ? Number(values.seed) : process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : DEFAULT_SEED
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed)) {
  console.error('usage: npm run fuzz -- --runs N [--seed S] [--only <route substring>] [--http] [--ws] [--mcp]')
  process.exit(2)
}
const all = !values.http && !values.ws && !values.mcp
const opts = { seed, runs, only: values.only }
const started = Date.now()
console.log(`fuzz: seed ${seed}, ${runs} runs per subject${values.only ? `, only "${values.only}"` : ''}`)

const s = await startServer(FUZZ_ENV)
const tallies: Array<[string, Tally]> = []
try {
  if (all || values.http) tallies.push(['http', await fuzzHttp(s, opts)])
  if (all || values.ws) tallies.push(['ws', await fuzzWs(s, opts)])
  if (all || values.mcp) tallies.push(['mcp', await fuzzMcp(s, opts)])
} finally {
  await s.close()
}
let failed = 0
for (const [name, t] of tallies) {
  for (const f of t.failures) console.log(`FAIL ${f}`)
  failed += t.failures.length
  console.log(t.summary(name))
}
console.log(`${tallies.reduce((n, [, t]) => n + t.sent, 0)} requests/frames/calls in ${((Date.now() - started) / 1000).toFixed(1)} s; ${failed} failures${failed ? ` (seed ${seed})` : ''}`)
process.exit(failed ? 1 : 0)
