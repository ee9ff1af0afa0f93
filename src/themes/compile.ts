/**
 * Compile a theme (a map of path → Liquid source) into parsed templates and schemas, collecting
 * every problem a strict static check finds, with file and line (issue 15 item 1). validate.ts
 * adds a trial render; render.ts renders a compiled theme.
 */
import type { Liquid, Template, Value } from 'liquidjs'
import { engine, liquidjs } from './engine.ts'
import { FIELD_FILTERS, OBJECTS, THEME_LIMITS, THEME_TEMPLATES, UNSAFE_NAMES, type FieldRef, type TemplateName } from './reference.ts'
import { extractSchema, parseSchema, settingIds, type SectionSchema, type Setting } from './schema.ts'
import type { Problem } from './problems.ts'

/** A theme as it is uploaded or shipped: file path → content. */
export type ThemeFiles = Readonly<Record<string, string>>

export interface CompiledTheme {
  layout: Template[]
  templates: ReadonlyMap<TemplateName, Template[]>
  sections: ReadonlyMap<string, Template[]>
  schemas: ReadonlyMap<string, SectionSchema>
  /** Theme-wide settings, declared by the layout's schema. */
  themeSettings: readonly Setting[]
}

type Folder = 'layout' | 'templates' | 'sections'
const SECTION_PATH = /^sections\/([a-z0-9][a-z0-9_-]*)\.liquid$/
const TEMPLATE_PATH = /^templates\/([a-z]+)\.liquid$/
const SCRIPT_TAG = /<script\b/gi
const SECTION_TAG = /\{%-?\s*section\s+(?:"([^"]*)"|'([^']*)')\s*-?%\}/g

const lineAt = (text: string, index: number) => text.slice(0, index).split('\n').length
const byteLength = (s: string) => Buffer.byteLength(s, 'utf8')

function folderOf(path: string): Folder | null {
  if (path === 'layout/theme.liquid') return 'layout'
  const t = TEMPLATE_PATH.exec(path)
  if (t) return (THEME_TEMPLATES as readonly string[]).includes(t[1]!) ? 'templates' : null
  return SECTION_PATH.test(path) ? 'sections' : null
}

/** Size limits first, so nothing large is ever parsed. */
export function checkLimits(files: ThemeFiles): Problem[] {
  const names = Object.keys(files)
  if (names.length > THEME_LIMITS.maxFiles) return [{ file: '', line: 0, code: 'too_many_files', message: `a theme has at most ${THEME_LIMITS.maxFiles} files; this one has ${names.length}` }]
  let total = 0
  const out: Problem[] = []
  for (const name of names) {
    const content = files[name]
    if (typeof content !== 'string') { out.push({ file: name, line: 0, code: 'unknown_file', message: 'file content must be text' }); continue }
    const size = byteLength(content)
    total += size
    if (size > THEME_LIMITS.maxFileBytes) out.push({ file: name, line: 0, code: 'too_large', message: `a file has at most ${THEME_LIMITS.maxFileBytes} bytes; this one has ${size}` })
  }
  if (total > THEME_LIMITS.maxTotalBytes) out.push({ file: '', line: 0, code: 'too_large', message: `a theme has at most ${THEME_LIMITS.maxTotalBytes} bytes; this one has ${total}` })
  return out
}

/** A liquidjs parse error → a problem with the right code and position. */
function parseProblem(file: string, err: unknown): Problem {
  const e = err as Error & { token?: { getPosition?: () => [number, number] } }
  const [line, column] = e.token?.getPosition?.() ?? [0, undefined]
  const message = (e.message ?? String(err)).replace(/, (file:\S+, )?line:\d+, col:\d+$/, '')
  const code = /^undefined filter/.test(message) ? 'unknown_filter' : /^tag "[^"]*" not found/.test(message) ? 'unknown_tag' : 'liquid_syntax'
  return { file, line, ...(column !== undefined ? { column } : {}), code, message }
}

const OBJECT_BY_NAME = new Map(OBJECTS.map((o) => [o.name, o]))
const SCALAR_PROPS = new Set(['size', 'first', 'last'])

/**
 * Check one global variable path against the reference: the object exists (and may be used in
 * this folder), each known field exists, and `section.settings.x` / `settings.x` name a declared setting.
 */
function checkPath(file: string, folder: Folder, segments: readonly unknown[], line: number, column: number, declared: { section?: Set<string>; theme: Set<string> }): Problem | null {
  const root = String(segments[0])
  const obj = OBJECT_BY_NAME.get(root)
  const at = { file, line, column }
  if (!obj) return { ...at, code: 'unknown_object', message: `unknown object "${root}"; objects: ${OBJECTS.map((o) => o.name).join(', ')}` }
  if (obj.only && !obj.only.includes(folder)) return { ...at, code: 'unknown_object', message: `"${root}" is available in ${obj.only.join(', ')} files only` }
  const settingsOf = root === 'settings' ? declared.theme : root === 'section' && segments[1] === 'settings' ? declared.section : undefined
  if (settingsOf) {
    const key = root === 'settings' ? segments[1] : segments[2]
    if (typeof key === 'string' && !settingsOf.has(key)) return { ...at, code: 'unknown_setting', message: `${root === 'settings' ? 'the theme (layout schema)' : 'the section schema'} declares no setting "${key}"` }
    return null
  }
  let ref: FieldRef = obj
  for (let i = 1; i < segments.length; i++) {
    const seg = segments[i]
    if (typeof seg !== 'string' && typeof seg !== 'number') return null // dynamic key: checked at render
    if (ref.type === 'array') {
      if (typeof seg === 'number' || seg === 'first' || seg === 'last') {
        if (!ref.fields) return null
        ref = { name: `${ref.name}[]`, type: 'object', description: '', fields: ref.fields }
        continue
      }
      if (seg === 'size') return null
      return { ...at, code: 'unknown_field', message: `"${segments.slice(0, i).join('.')}" is a list: use an index, first, last or size, not "${seg}"` }
    }
    if (ref.type === 'object') {
      if (!ref.fields) return null
      const next = ref.fields.find((x) => x.name === seg)
      if (!next) return { ...at, code: 'unknown_field', message: `${segments.slice(0, i).join('.')} has no field "${seg}"; fields: ${ref.fields.map((x) => x.name).join(', ')}` }
      ref = next
      continue
    }
    if (typeof seg === 'string' && SCALAR_PROPS.has(seg)) return null
    return { ...at, code: 'unknown_field', message: `${segments.slice(0, i).join('.')} is a ${ref.type}: it has no field "${String(seg)}"` }
  }
  return null
}

const UNSAFE: ReadonlySet<string> = new Set(UNSAFE_NAMES)
const unsafeWhy = 'JavaScript\'s prototype and built-in method names (constructor, __proto__, prototype, toString, …: docs/themes.md "Reserved names") are never store data'
/** The first UNSAFE_NAMES name among the segments of a path, if any. */
const unsafeIn = (segments: readonly unknown[]): string | undefined => segments.find((s): s is string => typeof s === 'string' && UNSAFE.has(s))

/** Every filter applied in parsed templates: outputs and tag values, nested blocks included. */
function* filtersOf(templates: readonly Template[]): Generator<Value['filters'][number]> {
  const L = liquidjs()
  for (const t of templates) {
    for (const arg of t.arguments?.() ?? []) if (arg instanceof L.Value) yield* arg.filters
    if (t.children) yield* filtersOf(L.toValueSync(t.children(false, true)))
  }
}

/**
 * Names that would reach prototypes (issue 31 item 4; the engine reads them as nil anyway, this says
 * where): a path segment (`forloop.toString`, `x["__proto__"]`; a global one also fails checkPath),
 * a variable named so (`{% assign __proto__ = … %}`), and the literal field of a FIELD_FILTERS filter
 * (`map: "constructor"`, `where: "a.__proto__"`), whatever the value it is applied to.
 */
function checkUnsafe(file: string, tpl: Template[], analysis: ReturnType<Liquid['analyzeSync']>, out: Problem[]): void {
  for (const v of Object.values(analysis.variables).flat()) {
    const name = unsafeIn(v.toArray())
    if (name !== undefined) out.push({ file, line: v.location.row, column: v.location.col, code: 'unknown_field', message: `"${name}" is not a field: ${unsafeWhy}` })
  }
  for (const v of Object.values(analysis.locals).flat()) {
    const name = unsafeIn(v.toArray())
    if (name !== undefined) out.push({ file, line: v.location.row, column: v.location.col, code: 'liquid_syntax', message: `"${name}" cannot be a variable name: ${unsafeWhy}` })
  }
  const { TypeGuards } = liquidjs()
  for (const filter of filtersOf(tpl)) {
    const arg = filter.args[0]
    if (!FIELD_FILTERS.includes(filter.name) || !arg || !TypeGuards.isQuotedToken(arg)) continue
    const name = unsafeIn(arg.content.split(/[.[\]'"\s]+/))
    if (name === undefined) continue
    const [line, column] = arg.getPosition()
    out.push({ file, line, column, code: 'unknown_field', message: `${filter.name}: "${arg.content}" names no field: ${unsafeWhy}` })
  }
}

/** Static variable check of one parsed file. */
function checkVariables(file: string, folder: Folder, tpl: Template[], declared: { section?: Set<string>; theme: Set<string> }, out: Problem[]): void {
  let analysis
  try {
    analysis = engine().analyzeSync(tpl, { partials: false })
  } catch (err) {
    out.push({ file, line: 0, code: 'liquid_syntax', message: `could not analyse: ${(err as Error).message}` })
    return
  }
  checkUnsafe(file, tpl, analysis, out)
  for (const vars of Object.values(analysis.globals)) {
    for (const v of vars) {
      const segments = v.toArray()
      if (unsafeIn(segments) !== undefined) continue // reported once, by checkUnsafe
      const p = checkPath(file, folder, segments, v.location.row, v.location.col, declared)
      if (p) out.push(p)
    }
  }
}

export interface CompileResult {
  problems: Problem[]
  /** Present when there are no problems. */
  theme?: CompiledTheme
}

export function compileTheme(files: ThemeFiles): CompileResult {
  const problems = checkLimits(files)
  if (problems.length) return { problems }
  const parsed = new Map<string, Template[]>()
  const schemas = new Map<string, SectionSchema>()
  let themeSettings: Setting[] = []
  const sources = Object.entries(files).sort(([a], [b]) => a.localeCompare(b))
  for (const [path, src] of sources) {
    const folder = folderOf(path)
    if (!folder) {
      problems.push({ file: path, line: 0, code: 'unknown_file', message: `not a theme file; a theme has ${'layout/theme.liquid'}, templates/{${THEME_TEMPLATES.join(',')}}.liquid and sections/<name>.liquid` })
      continue
    }
    try {
      parsed.set(path, engine().parse(src, path))
    } catch (err) {
      problems.push(parseProblem(path, err))
    }
    const raw = extractSchema(src)
    if (folder === 'templates' && raw) problems.push({ file: path, line: raw.line, code: 'schema_not_allowed', message: 'templates declare no schema: put settings in a section' })
    if (folder === 'sections') {
      const name = SECTION_PATH.exec(path)![1]!
      if (!raw) problems.push({ file: path, line: 0, code: 'schema_missing', message: 'a section declares its settings in a {% schema %} tag (at least {"name": "…"})' })
      else {
        const schema = parseSchema(path, raw, problems)
        if (schema) schemas.set(name, schema)
      }
    }
    if (folder === 'layout' && raw) {
      const schema = parseSchema(path, raw, problems)
      if (schema) themeSettings = schema.settings ?? []
    }
  }
  for (const required of ['layout/theme.liquid', ...THEME_TEMPLATES.map((t) => `templates/${t}.liquid`)]) {
    if (!Object.hasOwn(files, required)) problems.push({ file: required, line: 0, code: 'missing_file', message: `a theme needs ${required}` })
  }
  // Section references: present, and only from templates and the layout (sections do not nest).
  for (const [path, src] of sources) {
    const folder = folderOf(path)
    if (!folder) continue
    for (const m of src.matchAll(SECTION_TAG)) {
      const name = m[1] ?? m[2] ?? ''
      const line = lineAt(src, m.index)
      if (folder === 'sections') problems.push({ file: path, line, code: 'section_not_allowed', message: 'a section cannot contain {% section %}' })
      else if (!Object.hasOwn(files, `sections/${name}.liquid`)) problems.push({ file: path, line, code: 'missing_section', message: `section "${name}" does not exist (sections/${name}.liquid)` })
    }
  }
  const themeIds = settingIds(themeSettings)
  for (const [path, tpl] of parsed) {
    const folder = folderOf(path)!
    const section = folder === 'sections' ? schemas.get(SECTION_PATH.exec(path)![1]!) : undefined
    checkVariables(path, folder, tpl, { theme: themeIds, ...(section ? { section: settingIds(section.settings) } : {}) }, problems)
  }
  // Theme pages run no scripts of their own: the store website's pages share the origin of the
  // owners' dashboard, and the page's script nonce is never given to a theme (docs/themes.md).
  for (const [path, src] of sources) {
    if (!folderOf(path)) continue
    for (const m of src.matchAll(SCRIPT_TAG)) problems.push({ file: path, line: lineAt(src, m.index), code: 'script_not_allowed', message: 'themes run no scripts: remove the <script> tag (the store website adds its own)' })
  }
  const layoutSrc = files['layout/theme.liquid']
  if (typeof layoutSrc === 'string' && !/\{\{-?\s*content_for_layout\s*-?\}\}/.test(layoutSrc)) {
    problems.push({ file: 'layout/theme.liquid', line: 0, code: 'missing_content_for_layout', message: 'the layout must output {{ content_for_layout }}' })
  }
  if (problems.length) return { problems: sortProblems(problems) }
  const sections = new Map<string, Template[]>()
  for (const [path, tpl] of parsed) {
    const m = SECTION_PATH.exec(path)
    if (m) sections.set(m[1]!, tpl)
  }
  return {
    problems: [],
    theme: {
      layout: parsed.get('layout/theme.liquid')!,
      templates: new Map(THEME_TEMPLATES.map((t) => [t, parsed.get(`templates/${t}.liquid`)!])),
      sections,
      schemas,
      themeSettings,
    },
  }
}

export const sortProblems = (ps: Problem[]): Problem[] =>
  ps.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || (a.column ?? 0) - (b.column ?? 0))

/**
 * Where each section is drawn: the pages (template names) whose template names it, or `*` when the
 * layout does (every page). For the settings editor, which shows a section on a page that has it.
 */
export function sectionPages(files: ThemeFiles): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const [path, src] of Object.entries(files)) {
    const page = path === 'layout/theme.liquid' ? '*' : TEMPLATE_PATH.exec(path)?.[1]
    if (!page || typeof src !== 'string') continue
    for (const m of src.matchAll(SECTION_TAG)) {
      const name = m[1] ?? m[2] ?? ''
      const pages = out.get(name) ?? out.set(name, []).get(name)!
      if (!pages.includes(page)) pages.push(page)
    }
  }
  return out
}
