/**
 * The MCP servers as addresses on the HTTP port (Streamable HTTP, MCP 2025-06-18 "Transports"):
 * the HTTP front door authenticates, rate-limits, checks `Origin` and the body limit, then hands
 * the raw body here as a `RawCall` (src/net/raw-call.ts; app.ts wires it, the shape matches
 * src/http/server.ts `RawEndpoint` without either front door importing the other). Answers are single JSON documents, never SSE streams.
 */
import type { Principal } from '../auth/principals.ts'
import type { Services } from '../services.ts'
import { INVALID_REQUEST, McpServer, PARSE_ERROR, PROTOCOL_VERSIONS, UNSUPPORTED_PROTOCOL_VERSION, type CallContext } from './protocol.ts'
import { MCP_SERVERS } from './servers/index.ts'
import { invoke } from '../ops/invoke.ts'
import { rawNumericIds, stringifyAnswer } from './raw-ids.ts'
import type { McpServerDef } from './tool.ts'
import { challengeParams } from '../ops/apps/protected-resources.ts'
import { ApiError } from '../errors.ts'
import { API_REALM, bearerChallenge } from '../net/respond.ts'
import type { RawCall, RawReply } from '../net/raw-call.ts'

/** Messages in one JSON-RPC batch (docs/mcp.md "Limits"); more is refused whole with -32600. */
export const MAX_BATCH = 20
export interface McpEndpoint {
  path: McpServerDef['path']
  auth: McpServerDef['auth']
  /** Its 401 challenges' `resource_metadata` and `scope` (src/ops/apps/protected-resources.ts). */
  challenge?: Record<string, string>
  server: McpServer
  handle(call: RawCall): Promise<RawReply>
}

const rpcError = (code: number, message: string): string => JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } })

export function mcpEndpoints(svc: Services, defs: readonly McpServerDef[] = MCP_SERVERS): McpEndpoint[] {
  return defs.map((def) => {
    const server = new McpServer(def)
    const challenge = challengeParams(svc.config.siteUrl, def.path)
    return {
      path: def.path,
      auth: def.auth,
      ...(challenge ? { challenge } : {}),
      server,
      async handle(call: RawCall): Promise<RawReply> {
        // Server-level admission (the admin server's plan feature, the storefront agent scope):
        // an ApiError here is the HTTP error envelope, as for a bad credential.
        if (def.admission) {
          await invoke(def.admission, { svc, principal: call.principal, ids: {}, where: 'arguments', read: () => undefined, requestId: call.requestId, ip: call.ip })
            .catch((e: unknown) => { throw scopeChallenge(e, call.principal, svc, def.path) })
        }
        // MCP 2025-06-18 "Protocol Version Header": an unsupported version is a 400 (any of the five is fine).
        const version = call.headers['mcp-protocol-version']
        if (version !== undefined && !(PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
          return { status: 400, body: rpcError(INVALID_REQUEST, `Unsupported MCP-Protocol-Version ${version}; this server speaks ${PROTOCOL_VERSIONS.join(', ')}.`) }
        }
        const text = call.body.toString('utf8')
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          return { status: 400, body: rpcError(PARSE_ERROR, 'Parse error: the body is not JSON.') }
        }
        const ctx: CallContext = { svc, principal: call.principal, requestId: call.requestId, ip: call.ip, ...(version !== undefined ? { headerVersion: version } : {}) }
        // Numeric ids are echoed as written (JSON-RPC 2.0 §4), not as JSON.parse rounded them.
        const rawIds = rawNumericIds(text)
        if (Array.isArray(parsed)) {
          // JSON-RPC batch (2024-11-05, 2025-03-26): one answer per request, 202 when all were notifications.
          if (parsed.length === 0) return { status: 400, body: rpcError(INVALID_REQUEST, 'Invalid Request: an empty batch.') }
          if (parsed.length > MAX_BATCH) return { status: 400, body: rpcError(INVALID_REQUEST, `Invalid Request: a batch holds at most ${MAX_BATCH} messages; this one has ${parsed.length}.`) }
          // Every message costs what a POST of its own would (the POST paid for the first).
          call.spend(parsed.length - 1)
          const answers: string[] = []
          for (const [i, m] of parsed.entries()) {
            const a = await server.answer(m, ctx)
            if (a) answers.push(stringifyAnswer(a, rawIds[i]))
          }
          return answers.length ? { status: 200, body: `[${answers.join(',')}]` } : { status: 202, body: null }
        }
        const answer = await server.answer(parsed, ctx)
        if (!answer) return { status: 202, body: null }
        // A message that is not a request at all is a 400; every other answer, errors included, is a 200 (JSON-RPC over HTTP).
        // So is a 2026-07-28 request naming a version this server does not speak (-32022).
        const status = 'error' in answer && (answer.error.code === INVALID_REQUEST || answer.error.code === UNSUPPORTED_PROTOCOL_VERSION) ? 400 : 200
        return { status, body: stringifyAnswer(answer, rawIds[0]) }
      },
    }
  })
}

/**
 * An app token refused for lack of `mcp:use` (the policy's rule, src/auth/policy.ts): its 403 carries
 * RFC 6750 §3.1 `insufficient_scope`, naming the scopes to ask for and where to learn how
 * (MCP 2025-11-25 "Scope Challenge Handling"). Any other refusal goes on as it is.
 */
function scopeChallenge(e: unknown, principal: Principal | null, svc: Services, path: string): unknown {
  if (!(e instanceof ApiError) || e.status !== 403 || principal?.kind !== 'owner' || !principal.app || principal.app.scopes.includes('mcp:use')) return e
  const params = challengeParams(svc.config.siteUrl, path) ?? {}
  const scope = [...new Set(['mcp:use', ...principal.app.scopes])].join(' ')
  return new ApiError(e.code, e.message, undefined,
    { ...e.headers, 'WWW-Authenticate': bearerChallenge(API_REALM, false, { error: 'insufficient_scope', scope, resource_metadata: params.resource_metadata ?? '' }) }, e.details)
}
