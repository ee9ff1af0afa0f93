/**
 * The official MCP SDK client against a test server, as real agents connect (issue 12 item 1):
 * `connectMcp(server, '/mcp', { authorization: 'Bearer …' })` → a connected Client. Close it with
 * `client.close()` (t.teardown). `callTool` answers the raw result; `toolJson` parses its text.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import type { TestServer } from './server.ts'

export { Client }

export async function connectMcp(server: Pick<TestServer, 'site'>, path: string, headers: Record<string, string> = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(server.site + path), { requestInit: { headers } })
  const client = new Client({ name: 'dispatch-tests', version: '1.0.0' })
  await client.connect(transport)
  return client
}

/** Owner/customer bearer header. */
export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

export interface ToolOutcome { isError: boolean; json: any; raw: any }

/** Call a tool and parse the JSON text it answered (the API error body when `isError`). */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolOutcome> {
  const raw = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ type: string; text?: string }> }
  const text = raw.content.find((c) => c.type === 'text')?.text
  return { isError: raw.isError === true, json: text === undefined ? undefined : JSON.parse(text), raw }
}

/** A raw JSON-RPC POST (for what the SDK client never sends: bad JSON, unknown methods, GET). */
export async function rawMcp(server: Pick<TestServer, 'site'>, path: string, body: string, headers: Record<string, string> = {}, method = 'POST'): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const r = await fetch(server.site + path, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    ...(method === 'GET' || method === 'HEAD' ? {} : { body }),
  })
  const text = await r.text()
  let json: unknown
  try { json = text ? JSON.parse(text) : undefined } catch { json = undefined }
  return { status: r.status, headers: r.headers, text, json }
}

/** The JSON-RPC error a call fails with in the SDK client (e.g. -32602 for arguments that do not validate). */
export async function rpcError(p: Promise<unknown>): Promise<McpError> {
  try {
    await p
  } catch (err) {
    if (err instanceof McpError) return err
    throw err
  }
  throw new Error('expected a JSON-RPC error')
}
