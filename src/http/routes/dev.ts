/**
 * Developer routes (issue 12 item 7, issue 15): HTTP bindings of the public developer operations
 * (src/ops/web/dev.ts), which the dev MCP server binds too. The docs index searches the OpenAPI
 * document, which only the route table can build: this module hands the builder down to it.
 */
import { bind } from '../bind.ts'
import type { Route } from '../route.ts'
import { buildOpenApi } from '../openapi.ts'
import * as dev from '../../ops/web/dev.ts'
import { registerOpenApiSource } from '../../ops/web/dev-docs.ts'

export function devRoutes(all: () => readonly Route[]) {
  registerOpenApiSource((config) => buildOpenApi(all(), config))
  return [
    bind(dev.learnPlatform, { method: 'GET', path: '/dev/platform', auth: 'none' }),
    bind(dev.searchDocsOp, { method: 'GET', path: '/dev/docs/search', auth: 'none' }),
    bind(dev.fetchDocOp, { method: 'GET', path: '/dev/docs/fetch', auth: 'none' }),
    bind(dev.listWebhookEvents, { method: 'GET', path: '/dev/webhook-events', auth: 'none' }),
    bind(dev.liquidReference, { method: 'GET', path: '/themes/liquid-reference', auth: 'none' }),
    bind(dev.sectionSchema, { method: 'GET', path: '/themes/section-schema', auth: 'none' }),
    bind(dev.validateThemeOp, { method: 'POST', path: '/themes/validate', auth: 'none' }),
  ]
}
