/**
 * The dev MCP server at `{site_url}/mcp/dev` (api-v1 §4.11, issue 12 item 7; docs/mcp-dev.md):
 * public, read-only help for developers and their agents. Every tool binds an operation of
 * src/ops/web/dev.ts, which the HTTP routes under /dev and /themes bind too.
 */
import * as dev from '../../ops/web/dev.ts'
import { tool, type McpServerDef } from '../tool.ts'
import { startingWith, type RunOp } from '../resources.ts'

/** The product docs' names (`README.md`, `docs/<name>.md`, `openapi.json`), as learn_platform lists them. */
const docList = async (run: RunOp): Promise<string[]> => ((await run(dev.learnPlatform, {})) as { docs: string[] }).docs
/** `docs/themes.md` is addressed as `dispatch://docs/themes.md` (one path segment). */
const docUri = (name: string): string => `dispatch://docs/${name.replace(/^docs\//, '')}`

export const devServer: McpServerDef = {
  path: '/mcp/dev',
  name: 'dev',
  title: 'Developer help',
  instructions: [
    'Help for building on this platform. Call learn_platform first: what the platform is, its API families, credentials, MCP servers and events.',
    'search_docs finds sections of the README, docs/*.md and the OpenAPI document; fetch_full_doc returns one of them whole by the path search_docs gives.',
    'list_webhook_events gives every event with the JSON Schema of its data.',
    'Store websites use Liquid themes: get_liquid_reference lists what a theme may use (strictly: anything else is an error), get_section_schema shows a built-in section\'s settings schema, validate_theme checks theme files and reports problems with file and line.',
  ].join(' '),
  auth: 'none',
  tools: [
    tool(dev.learnPlatform, { name: 'learn_platform', readOnly: true }),
    tool(dev.searchDocsOp, {
      name: 'search_docs', readOnly: true,
      inputSchema: { type: 'object', required: ['query'], properties: {
        query: { type: 'string', minLength: 1, maxLength: 200, description: 'A few keywords, e.g. "storefront order coupon".' },
        limit: { type: 'integer', minimum: 1, maximum: 20, description: 'How many results (8 by default).' },
      } },
    }),
    tool(dev.fetchDocOp, {
      name: 'fetch_full_doc', readOnly: true,
      inputSchema: { type: 'object', required: ['path'], properties: {
        path: { type: 'string', description: 'A path search_docs answered: README.md, docs/<name>.md (or just <name>), openapi.json.' },
      } },
    }),
    tool(dev.listWebhookEvents, {
      name: 'list_webhook_events', readOnly: true,
      inputSchema: { type: 'object', properties: { event: { type: 'string', description: 'One event name (e.g. "order.created") or a family wildcard ("subscription.*"); all events when absent.' } } },
    }),
    tool(dev.liquidReference, { name: 'get_liquid_reference', readOnly: true }),
    tool(dev.sectionSchema, {
      name: 'get_section_schema', readOnly: true,
      inputSchema: { type: 'object', required: ['section'], properties: {
        theme: { type: 'string', description: 'A built-in theme: "classic" (default, restaurants) or "market" (goods).' },
        section: { type: 'string', description: 'Section name: the file name under sections/ without .liquid, e.g. "hero".' },
      } },
    }),
    tool(dev.validateThemeOp, {
      name: 'validate_theme', readOnly: true,
      inputSchema: { type: 'object', required: ['files'], properties: {
        files: { type: 'object', additionalProperties: { type: 'string' }, description: 'Theme files, path → content: layout/theme.liquid, templates/{home,menu,item,cart,checkout,order}.liquid, sections/<name>.liquid. At most 200 files and 1 MB.' },
      } },
    }),
  ],
  // The docs as resources (issue 36 item 4): the same reads as search_docs / fetch_full_doc.
  resources: [{
    uriTemplate: 'dispatch://docs/{name}', name: 'doc', title: 'A product doc', mimeType: 'text/markdown',
    description: 'One whole doc: README.md, a docs page by file name (themes.md) or openapi.json. As fetch_full_doc.',
    op: dev.fetchDocOp, input: (vars) => ({ path: vars.name }), text: (doc) => (doc as { content: string }).content,
    list: async (run) => (await docList(run)).map((name) => ({ uri: docUri(name), name, title: name, mimeType: name.endsWith('.json') ? 'application/json' : 'text/markdown' })),
  }],
  completions: {
    name: async (run, value) => startingWith((await docList(run)).map((n) => n.replace(/^docs\//, '')), value),
  },
}
