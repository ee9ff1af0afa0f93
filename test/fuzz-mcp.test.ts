/**
 * Fuzzing every tool of every MCP server (issue 21 item 1; docs/mcp.md): arguments generated from
 * each tool's `inputSchema` as `tools/list` gives it, valid and mutated, plus malformed calls.
 * Properties (test/helpers/fuzz/run-mcp.ts): never a 5xx or -32603, bad arguments are -32602 or an
 * `isError` result with a catalog code, a refused call writes nothing. Seeded (FUZZ_SEED);
 * `npm run fuzz -- --mcp` runs more.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { fuzzMcp, MCP_SERVERS } from './helpers/fuzz/run-mcp.ts'
import { seedFromEnv } from './helpers/fuzz/properties.ts'
import { FUZZ_ENV } from './helpers/fuzz/world.ts'

const s = await startServer(FUZZ_ENV)
t.teardown(() => s.close())

t.test('every MCP tool: no internal errors, refusals as -32602 or isError, nothing written by a refusal', async (t) => {
  const tally = await fuzzMcp(s, { seed: seedFromEnv(), runs: Number(process.env.FUZZ_RUNS ?? 4) })
  t.comment(tally.summary('mcp'))
  for (const m of MCP_SERVERS) t.ok((tally.byFamily[m.path] ?? 0) > 0, `${m.path}: calls sent`)
  for (const f of tally.failures) t.fail(f)
})
