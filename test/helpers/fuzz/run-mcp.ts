/**
 * The MCP fuzz run (issue 21 item 1), shared by test/fuzz-mcp.test.ts and `npm run fuzz`: for every
 * tool of every MCP server (as `tools/list` shows it to the server's own credential), arguments
 * generated from its `inputSchema`, valid and mutated, plus malformed calls, sent as raw JSON-RPC
 * POSTs. Properties: never a 5xx, never -32603; a refusal is -32602 (or another protocol error for
 * a malformed call) or a result with `isError: true` holding the §7 envelope with a catalog code;
 * and a refused call writes nothing.
 */
import fc from 'fast-check'
import type { TestServer } from '../server.ts'
import { validOf, type Schema } from './arbitraries.ts'
import { nearMiss, oddValue } from './mutations.ts'
import { ANSWER_BOUND_MS, envelopeProblem, Snapshots, subSeed, Tally } from './properties.ts'
import { buildWorld, type Family, type World } from './world.ts'
import type { RunOptions } from './run-http.ts'
import { ERROR_CATALOG } from '../../../src/errors.ts'

export const MCP_SERVERS: Array<{ path: string; family: Family }> = [
  { path: '/mcp', family: 'owner' },
  { path: '/mcp/storefront', family: 'storefront' },
  { path: '/mcp/customer', family: 'customer' },
  { path: '/mcp/catalog', family: 'none' },
  { path: '/mcp/dev', family: 'none' },
]

/** Protocol errors a malformed call may get; -32603 (internal error) is always a failure. */
const PROTOCOL_CODES = new Set([-32700, -32600, -32601, -32602])

interface Tool { name: string; inputSchema: Schema }

async function rpc(s: TestServer, path: string, headers: Record<string, string>, body: string) {
  const res = await fetch(s.site + path, {
    method: 'POST', body, signal: AbortSignal.timeout(ANSWER_BOUND_MS),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
  })
  const text = await res.text()
  let json: any
  try { json = text ? JSON.parse(text) : undefined } catch { json = undefined }
  return { status: res.status, text, json }
}

export async function fuzzMcp(s: TestServer, opts: RunOptions, tally = new Tally()): Promise<Tally> {
  const snaps = new Snapshots(s.dbPath)
  let w = await buildWorld(s)
  try {
    for (const server of MCP_SERVERS) {
      const tools = (await rpc(s, server.path, w.headers[server.family], JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))).json?.result?.tools as Tool[] | undefined
      if (!tools?.length) { tally.failures.push(`mcp ${server.path}: tools/list answered no tools to its ${server.family} credential`); continue }
      for (const tool of tools) {
        const subject = `mcp ${server.path} ${tool.name}`
        if (opts.only && !subject.includes(opts.only)) continue
        const seed = subSeed(opts.seed, subject)
        for (const c of fc.sample(callCases(tool, w), { seed, numRuns: opts.runs })) {
          const problem = await callAndCheck(s, snaps, server.path, w.headers[server.family], c, tally)
          if (problem) tally.failures.push(`seed ${opts.seed} (tool seed ${seed}) ${subject}: ${problem}\n  [${c.kind}] curl -X POST ${s.site}${server.path} -H 'content-type: application/json' --data-raw ${JSON.stringify(c.body.length > 600 ? `${c.body.slice(0, 600)}…(${c.body.length} chars)` : c.body)}`)
        }
        // A valid call may have deleted part of the world (delete_item, ...): start the next tool from a whole one.
        if (/delete|cancel|revoke|logout|remove/.test(tool.name)) w = await buildWorld(s)
      }
    }
  } finally {
    snaps.close()
  }
  return tally
}

interface CallCase { kind: string; body: string }

function callCases(tool: Tool, w: World): fc.Arbitrary<CallCase> {
  const valid = validOf(tool.inputSchema, w.hints)
  const call = (kind: string) => (args: unknown) => ({ kind, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: tool.name, arguments: args } }) ?? '' })
  return fc.oneof(
    { arbitrary: valid.map(call('valid')), weight: 4 },
    { arbitrary: nearMiss(valid).map(call('near-miss')), weight: 6 },
    { arbitrary: oddValue.map(call('odd-arguments')), weight: 1 },
    {
      arbitrary: fc.constantFrom(
        { kind: 'malformed', body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${tool.name}","arguments":` },
        { kind: 'malformed', body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: tool.name + '\u0000' } }) },
        { kind: 'malformed', body: JSON.stringify({ jsonrpc: '2.0', id: { x: 1 }, method: 'tools/call', params: { name: tool.name, arguments: {} } }) },
        { kind: 'malformed', body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool.name, arguments: [] } }, 5]) },
        { kind: 'malformed', body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: [tool.name] }) },
      ),
      weight: 1,
    },
  )
}

async function callAndCheck(s: TestServer, snaps: Snapshots, path: string, headers: Record<string, string>, c: CallCase, tally: Tally): Promise<string | null> {
  const before = snaps.take()
  let a: Awaited<ReturnType<typeof rpc>>
  try {
    a = await rpc(s, path, headers, c.body)
  } catch (err) {
    tally.count(path, c.kind, 'no-answer')
    return `no answer: ${(err as Error).message}`
  }
  const answers: any[] = Array.isArray(a.json) ? a.json : a.json === undefined ? [] : [a.json]
  const outcome = a.status >= 500 ? `http ${a.status}` : answers.some((x) => x?.error) ? `rpc ${answers.find((x) => x?.error).error.code}` : answers.some((x) => x?.result?.isError) ? 'isError' : a.status === 200 ? 'ok' : `http ${a.status}`
  tally.count(path, c.kind, outcome)
  if (a.status >= 500) return `HTTP ${a.status}: ${a.text.slice(0, 300)}`
  if (a.status >= 400 && !answers.length) return envelopeProblem(a.status, 'application/json', a.text)
  let refused = false
  for (const x of answers) {
    if (x?.error) {
      refused = true
      if (!PROTOCOL_CODES.has(x.error.code)) return `JSON-RPC error ${x.error.code}: ${JSON.stringify(x.error).slice(0, 300)}`
      if (x.error.code !== -32602 && c.kind !== 'malformed') return `arguments refused with ${x.error.code} instead of -32602: ${JSON.stringify(x.error).slice(0, 300)}`
    } else if (x?.result?.isError) {
      refused = true
      const text = x.result.content?.find((p: any) => p.type === 'text')?.text ?? ''
      let body: any
      try { body = JSON.parse(text) } catch { return `isError result whose text is not JSON: ${text.slice(0, 200)}` }
      const status = typeof body?.reason === 'string' ? (ERROR_CATALOG as Record<string, { status: number } | undefined>)[body.reason]?.status : undefined
      if (status === undefined) return `isError result without a catalog code: ${text.slice(0, 300)}`
      const shape = envelopeProblem(status, 'application/json', text)
      if (shape) return `isError result: ${shape}`
      if (status >= 500) return `isError result with ${body.reason}: ${text.slice(0, 300)}`
    }
  }
  if (!refused) {
    await snaps.settle()
    return null
  }
  const written = Snapshots.diff(before, snaps.take())
  return written.length ? `refused but wrote: ${written.join('; ')}` : null
}
