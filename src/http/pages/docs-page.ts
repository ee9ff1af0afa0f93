/**
 * The documentation pages (issue 20 item 7): the API reference (Swagger UI rendering the live
 * OpenAPI document), the guides under docs/ rendered with `marked`, and the plain route list.
 * Everything is served by this server: a strict CSP allows scripts, styles and fetches from this
 * origin only.
 */
import { readdirSync, readFileSync } from 'node:fs'
import type { Marked } from 'marked'
import { esc } from '../html.ts'
import { assetUrl } from './docs-assets.ts'
import { ROOT_URL } from '../../root.ts'

export const HTML = 'text/html; charset=utf-8'

/** No inline script or style at all: the reference's own code is a file of this origin (docs-assets.ts). */
export const DOCS_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'same-origin',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-cache',
}

const DOCS_DIR = new URL('docs/', ROOT_URL)
const GUIDE_NAME = /^[a-z0-9][a-z0-9-]*$/

export interface Guide { name: string; title: string }

let guideList: Guide[] | null = null
/** The guides: docs/*.md with plain names, read once. The request never names a path, only one of these. */
export function guides(): Guide[] {
  if (guideList) return guideList
  let files: string[] = []
  try { files = readdirSync(DOCS_DIR) } catch { files = [] }
  guideList = files
    .filter((f) => f.endsWith('.md') && GUIDE_NAME.test(f.slice(0, -3)))
    .map((f) => {
      const text = readFileSync(new URL(f, DOCS_DIR), 'utf8')
      return { name: f.slice(0, -3), title: /^#\s+(.+)$/m.exec(text)?.[1]?.trim() ?? f.slice(0, -3) }
    })
    .sort((a, b) => a.name.localeCompare(b.name))
  return guideList
}

/** `name` or `name.md` of a listed guide, else undefined. */
export const findGuide = (name: string): Guide | undefined => guides().find((g) => g.name === name.replace(/\.md$/, ''))

/** marked is loaded by the first guide asked for, not at start (every server and test process would pay ~10 ms). */
let marked: Promise<Marked> | null = null
const markdown = (): Promise<Marked> => (marked ??= import('marked').then((m) => new m.Marked({ gfm: true, async: false })))
const rendered = new Map<string, string>()
async function guideHtml(g: Guide): Promise<string> {
  let html = rendered.get(g.name)
  if (html === undefined) {
    html = scrollable((await markdown()).parse(readFileSync(new URL(`${g.name}.md`, DOCS_DIR), 'utf8')) as string, g.title)
    rendered.set(g.name, html)
  }
  return html
}

/**
 * Each table in a box that scrolls sideways on a narrow screen, reachable by keyboard and named, and
 * each code block reachable too (issue 34 item 9: a keyboard cannot scroll a region it cannot focus).
 */
function scrollable(html: string, title: string): string {
  let n = 0
  return html.replace(/<table>/g, () => `<div class="scroll" tabindex="0" role="region" aria-label="${esc(title)}: table ${++n}"><table>`).replace(/<\/table>/g, '</table></div>').replace(/<pre>/g, '<pre tabindex="0">')
}

/** Sections of the side bar: sockets, MCP servers and webhook events first, then every other guide. */
function sections(): Array<[string, Guide[]]> {
  const all = guides()
  const pick = (test: (g: Guide) => boolean) => all.filter(test)
  const realtime = pick((g) => g.name === 'realtime' || g.name === 'kds')
  const mcp = pick((g) => g.name === 'mcp' || g.name.startsWith('mcp-'))
  const hooks = pick((g) => g.name === 'webhooks')
  const used = new Set([...realtime, ...mcp, ...hooks])
  return [['Real-time sockets', realtime], ['MCP servers', mcp], ['Webhook events', hooks], ['Guides', all.filter((g) => !used.has(g))]]
}

function shell(opts: { title: string; current: string; openapiUrl: string; head?: string; body: string; scripts?: string[] }): string {
  const link = (href: string, label: string) => `<a href="${esc(href)}"${href === opts.current ? ' aria-current="page"' : ''}>${esc(label)}</a>`
  const nav = sections().filter(([, gs]) => gs.length > 0).map(([title, gs]) =>
    `<h2>${esc(title)}</h2><ul>${gs.map((g) => `<li>${link(`/docs/guides/${g.name}`, g.title)}</li>`).join('')}</ul>`).join('')
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(opts.title)}</title>
<link rel="icon" href="${assetUrl('favicon-32x32.png')}">${opts.head ?? ''}<link rel="stylesheet" href="${assetUrl('docs.css')}"></head>
<body><header class="top"><strong>Dispatch API</strong>${link('/docs', 'API reference')}${link('/docs/guides/webhooks', 'Webhooks')}${link('/docs/guides/realtime', 'Sockets')}${link('/docs/guides/mcp', 'MCP')}${link('/docs/routes', 'All routes')}<a href="${esc(opts.openapiUrl)}">OpenAPI 3.1 (JSON)</a></header>
<div class="layout"><nav class="side" aria-label="Guides"><ul><li>${link('/docs', 'API reference')}</li><li>${link('/docs/routes', 'All routes')}</li></ul>${nav}</nav>
<main>${opts.body}</main></div>${(opts.scripts ?? []).map((s) => `<script src="${esc(s)}"></script>`).join('')}</body></html>`
}

/** `/docs`: the reference, rendered in the browser from the live document. */
export function referencePage(openapiUrl: string): string {
  return shell({
    title: 'Dispatch API reference', current: '/docs', openapiUrl,
    head: `<link rel="stylesheet" href="${assetUrl('swagger-ui.css')}">`,
    body: `<div id="swagger-ui" data-openapi="${esc(openapiUrl)}"><p class="muted">Loading the API reference… (it needs JavaScript; the <a href="/docs/routes">route list</a> does not)</p></div>`,
    scripts: [assetUrl('swagger-ui-bundle.js'), assetUrl('docs-init.js')],
  })
}

export async function guidePage(g: Guide, openapiUrl: string): Promise<string> {
  return shell({ title: `${g.title} · Dispatch docs`, current: `/docs/guides/${g.name}`, openapiUrl, body: `<article class="guide">${await guideHtml(g)}</article>` })
}

export function guideNotFoundPage(openapiUrl: string): string {
  return shell({ title: 'No such guide · Dispatch docs', current: '', openapiUrl, body: '<article class="guide"><h1>No such guide</h1><p>Pick one from the list.</p></article>' })
}

/** The plain list of every route, by tag (works without JavaScript). */
export function routeListPage(rows: Array<{ tag: string; method: string; path: string; summary: string; auth: string; capability?: string }>, baseUrl: string, openapiUrl: string): string {
  const byTag = new Map<string, typeof rows>()
  for (const r of rows) byTag.set(r.tag, [...(byTag.get(r.tag) ?? []), r])
  const tables = [...byTag].sort(([a], [b]) => a.localeCompare(b)).map(([tag, rs]) =>
    `<h2>${esc(tag)}</h2><div class="scroll" tabindex="0" role="region" aria-label="${esc(tag)} routes"><table class="routes">${rs.map((r) => `<tr><td><code>${esc(r.method)}</code></td><td><code>${esc(r.path)}</code></td><td>${esc(r.summary)}</td><td class="muted">${esc(r.auth)}${r.capability ? ` · ${esc(r.capability)}` : ''}</td></tr>`).join('')}</table></div>`).join('')
  return shell({
    title: 'Dispatch API routes', current: '/docs/routes', openapiUrl,
    body: `<article class="guide"><h1>Dispatch API v1: all routes</h1><p class="muted">Base URL <code>${esc(baseUrl)}</code> · errors are <code>{message, code, errors?}</code></p>${tables}</article>`,
  })
}

const SHOTS_DIR = new URL('screenshots/', DOCS_DIR)
let shots: Set<string> | null = null
/** A screenshot the guides show (docs/screenshots/*.png), by listed name only. */
export function screenshot(name: string): Buffer | undefined {
  if (!shots) {
    try { shots = new Set(readdirSync(SHOTS_DIR).filter((f) => /^[a-z0-9][a-z0-9-]*\.png$/.test(f))) } catch { shots = new Set() }
  }
  return shots.has(name) ? readFileSync(new URL(name, SHOTS_DIR)) : undefined
}
