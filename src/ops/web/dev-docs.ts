/**
 * The product's own documentation as the dev MCP server searches and serves it (issue 12 item 7):
 * README.md, docs/*.md and the live OpenAPI document. Built lazily once per process; markdown is
 * chunked by heading and the OpenAPI document by operation, then ranked with BM25. Only this
 * allow-list can be fetched: a name is looked up, never joined onto a path, so `../x` is just
 * an unknown name.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../../config.ts'
import { ROOT } from '../../root.ts'


/** The OpenAPI document comes from the route table (a front door): the HTTP layer registers its builder. */
let openApiSource: ((config: Config) => Record<string, unknown>) | null = null
export function registerOpenApiSource(build: (config: Config) => Record<string, unknown>): void {
  openApiSource = build
}

export interface Doc { path: string; title: string; content: string }
interface Chunk { path: string; heading: string; text: string; terms: Map<string, number>; length: number }
interface Index { docs: Map<string, Doc>; chunks: Chunk[]; df: Map<string, number>; avgLength: number }

const tokenize = (s: string): string[] => s.toLowerCase().match(/[a-z0-9_]{2,}/g) ?? []

function chunkMarkdown(path: string, content: string): Array<{ heading: string; text: string }> {
  const out: Array<{ heading: string; text: string }> = []
  let heading = path
  let lines: string[] = []
  let inFence = false
  const flush = () => { if (lines.join('').trim()) out.push({ heading, text: lines.join('\n').trim() }); lines = [] }
  for (const line of content.split('\n')) {
    if (/^(```|~~~)/.test(line)) inFence = !inFence
    const h = !inFence && /^#{1,4}\s+(.*)$/.exec(line)
    if (h) { flush(); heading = h[1]!.trim() } else lines.push(line)
  }
  flush()
  return out
}

function chunkOpenApi(doc: Record<string, unknown>): Array<{ heading: string; text: string }> {
  const out: Array<{ heading: string; text: string }> = []
  const paths = (doc.paths ?? {}) as Record<string, Record<string, Record<string, unknown>>>
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (typeof op !== 'object' || op === null) continue
      const body = JSON.stringify({ parameters: op.parameters, requestBody: op.requestBody })
      const fields = [...new Set(body.match(/"([a-z_]{3,})":/g) ?? [])].map((x) => x.slice(1, -2)).join(' ')
      out.push({
        heading: `${method.toUpperCase()} ${path}`,
        text: [op.summary, op.description, `operation ${String(op.operationId ?? '')}`, `tags ${((op.tags as string[]) ?? []).join(' ')}`, `fields ${fields}`].filter(Boolean).join('\n'),
      })
    }
  }
  return out
}

function markdownTitle(path: string, content: string): string {
  return /^#\s+(.*)$/m.exec(content)?.[1]?.trim() ?? path
}

let index: Index | null = null

function build(config: Config): Index {
  const docs = new Map<string, Doc>()
  const add = (path: string, content: string, title = markdownTitle(path, content)) => docs.set(path, { path, title, content })
  try { add('README.md', readFileSync(join(ROOT, 'README.md'), 'utf8')) } catch { /* a checkout without a README still serves docs/ */ }
  for (const name of readdirSync(join(ROOT, 'docs')).filter((n) => n.endsWith('.md')).sort()) {
    add(`docs/${name}`, readFileSync(join(ROOT, 'docs', name), 'utf8'))
  }
  let openapi: Record<string, unknown> | null = null
  if (openApiSource) {
    openapi = openApiSource(config)
    add('openapi.json', JSON.stringify(openapi, null, 2), 'OpenAPI 3.1 document of the HTTP API')
  }
  const chunks: Chunk[] = []
  const df = new Map<string, number>()
  const push = (path: string, heading: string, text: string) => {
    const terms = new Map<string, number>()
    // The heading counts twice: a section named after the query is the best answer.
    const words = [...tokenize(heading), ...tokenize(heading), ...tokenize(text)]
    for (const w of words) terms.set(w, (terms.get(w) ?? 0) + 1)
    for (const w of terms.keys()) df.set(w, (df.get(w) ?? 0) + 1)
    chunks.push({ path, heading, text, terms, length: words.length })
  }
  for (const d of docs.values()) {
    if (d.path === 'openapi.json') continue
    for (const c of chunkMarkdown(d.path, d.content)) push(d.path, c.heading, c.text)
  }
  if (openapi) for (const c of chunkOpenApi(openapi)) push('openapi.json', c.heading, c.text)
  const avgLength = chunks.reduce((s, c) => s + c.length, 0) / Math.max(1, chunks.length)
  return { docs, chunks, df, avgLength }
}

const indexOf = (config: Config): Index => (index ??= build(config))

export interface SearchHit { path: string; heading: string; snippet: string; score: number }

function snippetOf(text: string, terms: string[]): string {
  const lower = text.toLowerCase()
  const positions = terms.map((t) => lower.indexOf(t)).filter((i) => i >= 0)
  const at = positions.length ? Math.min(...positions) : 0
  const start = Math.max(0, at - 80)
  return (start > 0 ? '…' : '') + text.slice(start, start + 320).replace(/\s+/g, ' ').trim() + (start + 320 < text.length ? '…' : '')
}

/** BM25 (k1 1.2, b 0.75) over heading chunks. */
export function searchDocs(config: Config, query: string, limit: number): SearchHit[] {
  const ix = indexOf(config)
  const terms = [...new Set(tokenize(query))]
  if (terms.length === 0) return []
  const n = ix.chunks.length
  const scored: SearchHit[] = []
  for (const c of ix.chunks) {
    let score = 0
    for (const t of terms) {
      const tf = c.terms.get(t)
      if (!tf) continue
      const df = ix.df.get(t) ?? 0
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5))
      score += idf * (tf * 2.2) / (tf + 1.2 * (0.25 + 0.75 * c.length / ix.avgLength))
    }
    if (score > 0) scored.push({ path: c.path, heading: c.heading, snippet: snippetOf(c.text, terms), score: Math.round(score * 1000) / 1000 })
  }
  return scored.sort((a, b) => b.score - a.score).slice(0, limit)
}

/** The names `fetchDoc` accepts. */
export const docNames = (config: Config): string[] => [...indexOf(config).docs.keys()]

/** A whole doc by its name (`README.md`, `docs/themes.md`, `themes.md`, `themes`, `openapi.json`); undefined when not on the list. */
export function fetchDoc(config: Config, name: string): Doc | undefined {
  const docs = indexOf(config).docs
  const n = name.trim()
  return docs.get(n) ?? docs.get(`docs/${n}`) ?? docs.get(`docs/${n}.md`)
}
