/**
 * The site's start page (src/http/pages/home.ts) and the documentation pages (issue 20 item 7,
 * src/http/pages/docs-page.ts): the API reference rendered from the live OpenAPI document, the
 * guides under docs/, their static files, and the plain route list. A store's website: routes/website.ts.
 */
import { route, Reply, type Route } from '../route.ts'
import { fullPath } from '../server.ts'
import { ApiError } from '../../errors.ts'
import { asset } from '../pages/docs-assets.ts'
import { DOCS_HEADERS, findGuide, guideNotFoundPage, guidePage, HTML, referencePage, routeListPage, screenshot } from '../pages/docs-page.ts'
import { homeHeaders, homePage } from '../pages/home.ts'

const openapiUrl = (baseUrl: string) => `${baseUrl}/openapi.json`
/** Addresses carry a content hash (`?v=`): cache for a year. */
const IMMUTABLE = { 'Cache-Control': 'public, max-age=31536000, immutable', 'X-Content-Type-Options': 'nosniff' }

export function pageRoutes(all: () => readonly Route[]) {
  return [
    route({
      method: 'GET', path: '/', site: true, tag: 'Discovery', summary: 'Start page: links to the dashboard, the docs and the status', auth: 'none', produces: HTML, openapi: false,
      description: 'For a person who typed the server\'s address. Programs start at `{base_url}`, the discovery index; the `Link` header names the OpenAPI document (`service-desc`), the docs (`service-doc`) and `/readyz` (`status`), RFC 8631.',
      handler: ({ svc }) => new Reply(200, homePage(svc.config.baseUrl), homeHeaders(svc.config.baseUrl), HTML),
    }),
    route({
      method: 'GET', path: '/docs', site: true, tag: 'Discovery', summary: 'API reference (rendered from the live OpenAPI document) and guides', auth: 'none', produces: HTML,
      description: 'Swagger UI, served by this server from npm (no CDN), renders `{base_url}/openapi.json`; the side bar lists the guides: real-time sockets, the kitchen display, the MCP servers, webhook events and the rest of docs/.',
      handler: ({ svc }) => new Reply(200, referencePage(openapiUrl(svc.config.baseUrl)), DOCS_HEADERS, HTML),
    }),
    route({
      method: 'GET', path: '/docs/routes', site: true, tag: 'Discovery', summary: 'Plain list of every route (no JavaScript needed)', auth: 'none', produces: HTML,
      handler: ({ svc }) => new Reply(200, routeListPage(all().map((r) => ({
        tag: r.tag, method: r.method, path: r.site ? r.path : fullPath(r), summary: r.summary, auth: r.auth, ...(r.capability ? { capability: r.capability } : {}),
      })), svc.config.baseUrl, openapiUrl(svc.config.baseUrl)), DOCS_HEADERS, HTML),
    }),
    route({
      method: 'GET', path: '/docs/guides/{name}', site: true, tag: 'Discovery', summary: 'A guide from docs/, as HTML', auth: 'none', produces: HTML,
      description: '`name` is a guide\'s file name without `.md` (with it also works, so the guides\' own links resolve). Only the files of docs/ are served: a name is looked up in their list, never used as a path.',
      pageErrors: { 404: 'No guide has this name: a page saying so.' },
      handler: async ({ svc, params }) => {
        const g = findGuide(params.name ?? '')
        const url = openapiUrl(svc.config.baseUrl)
        return g ? new Reply(200, await guidePage(g, url), DOCS_HEADERS, HTML) : new Reply(404, guideNotFoundPage(url), DOCS_HEADERS, HTML)
      },
    }),
    route({
      method: 'GET', path: '/docs/guides/screenshots/{file}', site: true, tag: 'Discovery', summary: 'A screenshot shown in a guide', auth: 'none', produces: 'image/png',
      handler: ({ params }) => {
        const png = screenshot(params.file ?? '')
        if (!png) throw new ApiError('not_found', 'No such screenshot.')
        return new Reply(200, png, { 'Cache-Control': 'public, max-age=3600', 'X-Content-Type-Options': 'nosniff' }, 'image/png')
      },
    }),
    route({
      method: 'GET', path: '/docs/assets/{file}', site: true, tag: 'Discovery', summary: 'A static file of the API reference (Swagger UI from npm, its start script, styles)', auth: 'none',
      produces: 'application/octet-stream',
      description: 'JavaScript, CSS or PNG with its own `Content-Type`; only the listed files exist (anything else: 404). Cached for a year: the reference links them with a content hash.',
      handler: ({ params }) => {
        const a = asset(params.file ?? '')
        if (!a) throw new ApiError('not_found', 'No such file.')
        return new Reply(200, a.body, IMMUTABLE, a.type)
      },
    }),
  ]
}
