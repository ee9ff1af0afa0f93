/**
 * Who may open an MCP server at all (docs/mcp.md, docs/mcp-storefront.md; issue 33 item 2): each
 * server's admission is an operation the endpoint runs through the one pipeline before any message
 * (src/mcp/endpoints.ts), so the policy decides the credential (src/auth/policy.ts: an app token's
 * `mcp:use` scope, the storefront token's `agent` scope) and the operation wrapper the plan feature
 * (`mcp`), as for every other operation. They are not in `ALL_OPS`: no route binds them.
 */
import { defineOp } from '../op.ts'

const tag = 'MCP'

export const adminAdmission = defineOp({
  id: 'mcp.admin.admit', tag, summary: 'Open the admin MCP server (owner tokens; app tokens granted mcp:use; the plan\'s mcp feature)',
  access: { owner: 'any', appScope: 'mcp:use' }, feature: 'mcp', scope: [], output: { type: 'null' },
  run: () => null,
})

export const storefrontAdmission = defineOp({
  id: 'mcp.storefront.admit', tag, summary: 'Open the storefront MCP server (storefront tokens with the agent scope)',
  access: { storefront: 'agent' }, scope: [], output: { type: 'null' },
  run: () => null,
})
