/** The MCP servers mounted on the HTTP port (api-v1 §4.11); each file exports its definition. */
import type { McpServerDef } from '../tool.ts'
import { adminServer } from './admin.ts'
import { storefrontServer } from './storefront.ts'
import { customerServer } from './customer.ts'
import { catalogServer } from './catalog.ts'
import { devServer } from './dev.ts'

export const MCP_SERVERS: McpServerDef[] = [
  adminServer,
  storefrontServer,
  customerServer,
  catalogServer,
  devServer,
]
