/**
 * Render a page of a theme (issue 15 item 1): the template with its sections, then the layout
 * around it. A broken theme never takes a store down: renderTheme falls back to the default
 * built-in theme and returns the problems, so the owner can be shown why.
 */
import { engine, SafeHtml, SECTION_REGISTER, themeContext, type SectionRuntime } from './engine.ts'
import { compileTheme, type CompiledTheme, type ThemeFiles } from './compile.ts'
import { OBJECTS, type FieldRef, type TemplateName } from './reference.ts'
import { resolveSettings, type SectionSchema } from './schema.ts'
import type { Problem } from './problems.ts'
import { builtinTheme, DEFAULT_THEME } from './builtin/index.ts'

/** The objects a page gets (reference.ts OBJECTS); absent ones become nil. */
export type ThemeContext = Partial<Record<string, unknown>>

/** Owner's values per section name: settings and, for sections with blocks, the blocks. */
export type SectionValues = Readonly<Record<string, { settings?: Record<string, unknown>; blocks?: Array<{ type: string; settings?: Record<string, unknown> }> }>>

export interface RenderInput {
  template: TemplateName
  context: ThemeContext
  sections?: SectionValues
  /** Values of the theme-wide settings (the layout's schema). */
  settings?: Record<string, unknown>
  /**
   * HTML to place in the layout instead of rendering `template` (the store website's own pages,
   * such as customer sign-in, shown inside the theme's layout; docs/website.md). Trusted markup.
   */
  content?: string
}

export interface RenderResult {
  html: string
  /** False when the requested theme was broken and the default theme rendered instead. */
  ok: boolean
  problems: Problem[]
}

/**
 * Give every field the reference declares a value (nil when absent), so strict mode reports a
 * theme's mistakes and never a store's missing optional data.
 */
function conform(value: unknown, ref: FieldRef): unknown {
  if (value === undefined || value === null) {
    if (ref.type === 'array') return []
    return null
  }
  if (ref.type === 'array' && Array.isArray(value) && ref.fields) {
    const el: FieldRef = { name: ref.name, type: 'object', description: '', fields: ref.fields }
    return value.map((x) => conform(x, el))
  }
  if (ref.type === 'object' && ref.fields && typeof value === 'object' && !Array.isArray(value)) {
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) }
    for (const f of ref.fields) out[f.name] = conform(out[f.name], f)
    return out
  }
  return value
}

function sectionObject(name: string, schema: SectionSchema | undefined, values: SectionValues[string] | undefined): Record<string, unknown> {
  const blockTypes = new Map((schema?.blocks ?? []).map((b) => [b.type, b]))
  const stored = values?.blocks ?? schema?.presets?.[0]?.blocks ?? []
  const blocks = stored
    .filter((b) => blockTypes.has(b.type))
    .slice(0, schema?.max_blocks ?? 50)
    .map((b, i) => ({ id: `${name}-${i + 1}`, type: b.type, settings: resolveSettings(blockTypes.get(b.type)!.settings, b.settings) }))
  const presetSettings = schema?.presets?.[0]?.settings
  return { id: name, settings: resolveSettings(schema?.settings, { ...presetSettings, ...values?.settings }), blocks }
}

function scopeOf(theme: CompiledTheme, input: RenderInput): Record<string, unknown> {
  const c = input.context
  const scope: Record<string, unknown> = {}
  for (const o of OBJECTS) {
    if (o.name === 'section' || o.name === 'content_for_layout' || o.name === 'settings') continue
    scope[o.name] = conform(c[o.name], o)
  }
  if (c.categories === undefined) scope.categories = (scope.menu as { categories?: unknown } | null)?.categories ?? []
  if (!scope.cart) scope.cart = conform({ lines: [], item_count: 0, subtotal: 0, discount: 0, total: 0 }, OBJECTS.find((o) => o.name === 'cart')!)
  scope.settings = resolveSettings(theme.themeSettings, input.settings)
  return scope
}

/**
 * Render a compiled theme; throws a liquidjs error (with file and line) when the theme fails.
 * `deadline` (performance.now() time) ends every render call of this page by then, instead of the
 * engine's per-call THEME_LIMITS.renderLimitMs: a theme job's budget covers the whole job (pool.ts).
 */
export function renderCompiled(theme: CompiledTheme, input: RenderInput, deadline?: number): string {
  const scope = scopeOf(theme, input)
  const runtime: SectionRuntime = {
    sections: theme.sections,
    objects: new Map([...theme.sections.keys()].map((n) => [n, sectionObject(n, theme.schemas.get(n), input.sections?.[n])])),
  }
  const run = (file: string, tpl: CompiledTheme['layout'], extra: Record<string, unknown>): string => {
    const renderLimit = deadline === undefined ? undefined : Math.max(1, deadline - performance.now())
    const ctx = themeContext({ ...scope, ...extra }, renderLimit)
    ctx.setRegister(SECTION_REGISTER, runtime)
    try {
      return engine().renderSync(tpl, ctx) as string
    } catch (err) {
      if (err && typeof err === 'object' && !('themeFile' in err)) Object.defineProperty(err, 'themeFile', { value: file })
      throw err
    }
  }
  const content = input.content ?? run(`templates/${input.template}.liquid`, theme.templates.get(input.template)!, {})
  return run('layout/theme.liquid', theme.layout, { content_for_layout: new SafeHtml(content) })
}

const describe = (err: unknown): Problem => {
  const e = err as Error & { themeFile?: string; token?: { file?: string; getPosition?: () => [number, number] } }
  const [line, column] = e.token?.getPosition?.() ?? [0, undefined]
  return {
    file: e.token?.file ?? e.themeFile ?? '',
    line,
    ...(column !== undefined ? { column } : {}),
    code: 'render_error',
    message: (e.message ?? String(err)).replace(/, (file:\S+, )?line:\d+, col:\d+$/, ''),
  }
}

/** Render and report instead of throwing: the problem names the file and line that failed. */
export function tryRender(theme: CompiledTheme, input: RenderInput, deadline?: number): { html: string } | { problem: Problem } {
  try {
    return { html: renderCompiled(theme, input, deadline) }
  } catch (err) {
    return { problem: describe(err) }
  }
}

/**
 * Render `input.template` of a theme (compiled, or files that are compiled now). A theme that does
 * not compile or fails to render falls back to the default theme with its default settings.
 */
export function renderTheme(theme: CompiledTheme | ThemeFiles, input: RenderInput): RenderResult {
  let compiled: CompiledTheme | undefined
  let problems: Problem[] = []
  if (Array.isArray((theme as CompiledTheme).layout)) compiled = theme as CompiledTheme
  else {
    const r = compileTheme(theme as ThemeFiles)
    compiled = r.theme
    problems = r.problems
  }
  if (compiled) {
    const r = tryRender(compiled, input)
    if ('html' in r) return { html: r.html, ok: true, problems: [] }
    problems = [r.problem]
  }
  const fallback = builtinTheme(DEFAULT_THEME)!
  return { html: renderCompiled(fallback.compiled, { template: input.template, context: input.context, ...(input.content !== undefined ? { content: input.content } : {}) }), ok: false, problems }
}
