/**
 * What the HTTP front door hands a protocol it hosts on its port (the MCP servers, src/mcp), and what
 * it gets back: the door has done the request id, header checks, CORS, `Origin`, authentication, the
 * rate limit and the body limit; the protocol answers the raw body. Declared here, below both front
 * doors, so neither imports the other (app.ts wires src/mcp's endpoints into src/http/server.ts).
 */
import type { Principal } from '../auth/principals.ts'

export interface RawCall {
  principal: Principal | null
  body: Buffer
  headers: Readonly<Record<string, string>>
  requestId: string
  ip: string
  /**
   * Spend `calls` more of the caller's rate budget (the POST itself spent one): a JSON-RPC batch
   * costs one per message. Throws 429 `rate_limited`, spending nothing, when they do not all fit.
   */
  spend(calls: number): void
}

/** `body` null answers with an empty body (202 for JSON-RPC notifications). */
export interface RawReply { status: number; body: string | null; headers?: Record<string, string> }
