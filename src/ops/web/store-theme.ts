/**
 * A store's website theme, owner side (issue 15; docs/themes.md "Choosing and customising a
 * store's theme"): the choice of a builtin or uploaded custom theme, the owner's setting values,
 * and `storeThemeFor`, which the website (src/ops/web/website.ts) renders with. The choice is read
 * from the store_themes table, never from a StoreRow's `template`: the store actor holds its row
 * in memory and would hand out a stale one.
 */
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { storeOf } from '../scope.ts'
import { ApiError, type FieldErrors } from '../../errors.ts'
import type { Services } from '../../services.ts'
import type { StoreRow } from '../../storage/stores.ts'
import { readStoreTheme, storeThemeVersion, writeRenderProblems, writeStoreTheme, type StoreThemeRecord, type ThemeValues } from '../../storage/store-themes.ts'
import { verticalOf } from '../../domain/verticals.ts'
import type { CompiledTheme, ThemeFiles } from '../../themes/compile.ts'
import { renderCompiled, renderTheme, type RenderInput, type RenderResult, type SectionValues } from '../../themes/render.ts'
import type { ThemeOutline } from '../../themes/jobs.ts'
import { checkTheme, overBudget } from '../../themes/pool.ts'
import type { Problem } from '../../themes/problems.ts'
import { checkValues, resolveSettings, type SectionSchema } from '../../themes/schema.ts'
import { THEME_LIMITS } from '../../themes/reference.ts'
import { BUILTIN_THEMES, builtinTheme, DEFAULT_THEME } from '../../themes/builtin/index.ts'
import { ThemeFilesSchema } from './dev.ts'
import { named } from '../schemas/named.ts'

/**
 * What a store's pages are drawn with: a built-in theme, compiled here (the server's own code), or
 * the store's uploaded theme, which only the theme pool parses and renders (src/themes/pool.ts).
 */
export type ThemeSource =
  | { kind: 'builtin'; compiled: CompiledTheme }
  | { kind: 'custom'; key: string; files: ThemeFiles }

export interface StoreTheme {
  /** What the owner chose: a builtin theme key ('classic', 'market') or 'custom'. */
  name: string
  /** The theme to render: the chosen one, or the default builtin when the choice is broken/missing. */
  source: ThemeSource
  /** The built-in theme drawn instead when the custom theme fails to draw a page. */
  fallback: string
  /** Theme-wide settings values (layout schema) and per-section values the owner set. */
  settings: Record<string, unknown>
  sections: SectionValues
  /** Why the chosen theme is not the one rendered (empty when it is). */
  problems: Problem[]
}

export const CUSTOM = 'custom'
const TEMPLATES = [...Object.keys(BUILTIN_THEMES), CUSTOM]

/** The builtin a store falls back to: `market` for goods stores, else the platform default. */
export const defaultThemeOf = (store: Pick<StoreRow, 'store_type'>): string =>
  verticalOf(store.store_type).group === 'goods' && builtinTheme('market') ? 'market' : DEFAULT_THEME

/** What the owner chose: the row's choice, else the store's template when it names a builtin. */
export const chosenOf = (store: StoreRow, rec: StoreThemeRecord | undefined): string =>
  rec?.template ?? (Object.hasOwn(BUILTIN_THEMES, store.template) ? store.template : defaultThemeOf(store))

export const valuesOf = (rec: StoreThemeRecord | undefined, name: string): ThemeValues => rec?.values[name] ?? {}

// ---- caches: a custom theme is compiled by the theme pool, so never per request ------------------

/** Custom themes' outlines (or their compile problems) per store, keyed by the upload time. */
const outlines = new Map<number, { uploadedAt: string; result: { outline?: ThemeOutline; problems: Problem[] } }>()
/** What storeThemeFor answered per store, keyed by the store_themes row version (0: no row). */
const answers = new Map<number, { version: number; template: string; fallback: string; theme: StoreTheme }>()
/** Bounds memory when a server hosts many stores; evicting only costs a recompile. */
const CACHE_STORES = 500

function remember<K, T>(map: Map<K, T>, key: K, value: T): void {
  map.delete(key)
  map.set(key, value)
  if (map.size > CACHE_STORES) map.delete(map.keys().next().value as K)
}

/** Names one upload of one store: the pool's threads keep its compiled form under it. */
const customKey = (storeId: number, rec: StoreThemeRecord): string => `${storeId}@${rec.customUploadedAt ?? ''}`

/** The custom theme's schemas, or its compile problems: compiled in the theme pool, on an owner's budget. */
export async function customOutline(svc: Services, storeId: number, rec: StoreThemeRecord): Promise<{ outline?: ThemeOutline; problems: Problem[] }> {
  const uploadedAt = rec.customUploadedAt ?? ''
  const hit = outlines.get(storeId)
  if (hit && hit.uploadedAt === uploadedAt) return hit.result
  const result = await checkTheme(svc.themes, 'owner', { kind: 'outline', key: customKey(storeId, rec), files: rec.customFiles ?? {} })
  // Out of time on a busy machine says nothing lasting about the theme: asked again next time.
  if (!result.problems.some((p) => p.code === 'over_budget')) remember(outlines, storeId, { uploadedAt, result })
  return result
}

/** The theme named `name` for this store, its schemas, or the problems why it cannot be used. */
async function themeNamed(svc: Services, store: StoreRow, rec: StoreThemeRecord | undefined, name: string): Promise<{ outline?: ThemeOutline; problems: Problem[] }> {
  if (name === CUSTOM) {
    if (!rec?.customFiles) return { problems: [noCustomTheme] }
    return customOutline(svc, store.id, rec)
  }
  const b = builtinTheme(name)
  return b ? { outline: b.compiled, problems: [] } : { problems: [{ file: '', line: 0, code: 'missing_file', message: `There is no builtin theme "${name}".` }] }
}

const noCustomTheme: Problem = { file: '', line: 0, code: 'missing_file', message: 'No custom theme is uploaded.' }

function build(store: StoreRow, rec: StoreThemeRecord | undefined): StoreTheme {
  const name = chosenOf(store, rec)
  const fb = defaultThemeOf(store)
  const fallback = (problems: Problem[]): StoreTheme => {
    const values = valuesOf(rec, fb)
    return { name, source: { kind: 'builtin', compiled: builtinTheme(fb)!.compiled }, fallback: fb, settings: values.settings ?? {}, sections: values.sections ?? {}, problems }
  }
  // A theme that failed while rendering stays out of service until the owner changes the theme:
  // visitors get one consistent site, and no request pays for a failing render first.
  if (rec && rec.renderProblems.length > 0 && name !== fb) return fallback(rec.renderProblems)
  let source: ThemeSource
  if (name === CUSTOM) {
    // Not compiled here: the pool compiles it with the first page, and a theme that no longer
    // compiles reports its problems like one that fails to render (out of service, owner told).
    if (!rec?.customFiles) return fallback([noCustomTheme])
    source = { kind: 'custom', key: customKey(store.id, rec), files: rec.customFiles }
  } else {
    const b = builtinTheme(name)
    if (!b) return fallback([{ file: '', line: 0, code: 'missing_file', message: `There is no builtin theme "${name}".` }])
    source = { kind: 'builtin', compiled: b.compiled }
  }
  const values = valuesOf(rec, name)
  return { name, source, fallback: fb, settings: values.settings ?? {}, sections: values.sections ?? {}, problems: [] }
}

/** The theme a store's website renders with; cheap (cached per store and version), never throws. */
export function storeThemeFor(svc: Services, store: StoreRow): StoreTheme {
  try {
    const version = storeThemeVersion(svc.db, store.id)
    const hit = answers.get(store.id)
    if (hit && hit.version === version) return hit.theme
    const rec = version === 0 ? undefined : readStoreTheme(svc.db, store.id)
    const theme = build(store, rec)
    remember(answers, store.id, { version, template: chosenOf(store, rec), fallback: defaultThemeOf(store), theme })
    return theme
  } catch (err) {
    svc.log.error({ err, storeId: store.id }, 'store theme unavailable; rendering the default theme')
    const fb = defaultThemeOf(store)
    return { name: fb, source: { kind: 'builtin', compiled: builtinTheme(fb)!.compiled }, fallback: fb, settings: {}, sections: {}, problems: [{ file: '', line: 0, code: 'render_error', message: 'The theme could not be loaded.' }] }
  }
}

const sameProblems = (a: readonly Problem[], b: readonly Problem[]) => JSON.stringify(a) === JSON.stringify(b)

/** Called by the website when rendering the chosen theme failed at render time and fell back: keep the
 *  problems so the owner sees why (GET /restaurants/{id}/theme). Deduplicated: writes only when they change. */
export function reportRenderProblems(svc: Services, storeId: number, problems: Problem[]): void {
  if (problems.length === 0) return
  const hit = answers.get(storeId)
  if (hit && sameProblems(hit.theme.problems, problems)) return
  const version = hit?.version ?? storeThemeVersion(svc.db, storeId)
  const stored = version === 0 ? undefined : readStoreTheme(svc.db, storeId)
  if (stored && sameProblems(stored.renderProblems, problems)) return
  const template = hit?.template ?? stored?.template ?? DEFAULT_THEME
  // Out of service at once (the same version, so the next storeThemeFor answers the fallback
  // before the write commits); the committed row then says the same.
  if (hit && hit.template !== hit.fallback) {
    remember(answers, storeId, { ...hit, theme: { ...hit.theme, source: { kind: 'builtin', compiled: builtinTheme(hit.fallback)!.compiled }, settings: {}, sections: {}, problems } })
  }
  svc.committer.write((db) => writeRenderProblems(db, storeId, version, template, problems))
    .catch((err: unknown) => svc.log.warn({ err, storeId }, 'could not record theme render problems'))
}

// ---- the owner's view -------------------------------------------------------------------------------

const problemSchema = {
  type: 'object', required: ['file', 'line', 'code', 'message'],
  properties: { file: { type: 'string' }, line: { type: 'integer' }, column: { type: 'integer' }, code: { type: 'string' }, message: { type: 'string' } },
}
export const StoreThemeSchema = {
  type: 'object',
  required: ['template', 'builtin_themes', 'settings', 'sections', 'custom', 'fallback', 'problems'],
  properties: {
    template: { type: 'string', enum: TEMPLATES, description: 'The chosen theme: a builtin key or `custom` (also the store\'s `template`)' },
    builtin_themes: { type: 'array', items: { type: 'object', required: ['key', 'title', 'description'], properties: { key: { type: 'string' }, title: { type: 'string' }, description: { type: 'string' } } } },
    settings: { type: 'object', description: 'Theme-wide setting values of the chosen theme (its layout schema), defaults filled in' },
    sections: { type: 'object', description: 'Per section of the chosen theme: `{settings, blocks}`, defaults and presets filled in' },
    custom: {
      type: ['object', 'null'], description: 'The uploaded custom theme, or null',
      properties: { file_count: { type: 'integer' }, uploaded_at: { type: 'string', format: 'date-time' }, valid: { type: 'boolean' }, problems: { type: 'array', items: problemSchema } },
    },
    fallback: { type: 'boolean', description: 'True when visitors see the default builtin theme instead of the chosen one (see `problems`)' },
    problems: { type: 'array', items: problemSchema, description: 'Why the chosen theme is not the one rendered: compile problems, or what failed at render time (file and line)' },
  },
}
named('StoreTheme', StoreThemeSchema)

function sectionView(schema: SectionSchema, values: NonNullable<ThemeValues['sections']>[string] | undefined) {
  const preset = schema.presets?.[0]
  return {
    settings: resolveSettings(schema.settings, { ...preset?.settings, ...values?.settings }),
    blocks: values?.blocks ?? preset?.blocks ?? [],
  }
}

/** The owner's view of a store's theme (GET /restaurants/{id}/theme). */
export async function themeView(svc: Services, store: StoreRow) {
  const rec = readStoreTheme(svc.db, store.id)
  const name = chosenOf(store, rec)
  const values = valuesOf(rec, name)
  const t = await themeNamed(svc, store, rec, name)
  const shown = storeThemeFor(svc, store)
  const custom = rec?.customFiles ? await customOutline(svc, store.id, rec) : undefined
  // Pages fall back when the choice is out of service, or is a custom theme that does not compile.
  const failing = shown.problems.length ? shown.problems : name === CUSTOM && !t.outline ? t.problems : []
  return {
    template: name,
    builtin_themes: Object.entries(BUILTIN_THEMES).map(([key, b]) => ({ key, title: b.title, description: b.description })),
    settings: t.outline ? resolveSettings(t.outline.themeSettings, values.settings) : values.settings ?? {},
    sections: t.outline ? Object.fromEntries([...t.outline.schemas].map(([n, s]) => [n, sectionView(s, values.sections?.[n])])) : values.sections ?? {},
    custom: rec?.customFiles && custom
      ? { file_count: Object.keys(rec.customFiles).length, uploaded_at: rec.customUploadedAt, valid: custom.problems.length === 0, problems: custom.problems }
      : null,
    fallback: failing.length > 0,
    // The default theme itself failing is shown too, though there is nothing to fall back from.
    problems: failing.length ? failing : rec?.renderProblems ?? [],
  }
}

/**
 * Draw a page with a store's theme. A custom theme is drawn by the theme pool on a page's budget;
 * when it fails the store's default built-in theme draws the page instead and the problems come
 * back for reportRenderProblems. A pool too busy to take the page (or a thread that failed) is not
 * the theme's fault: the built-in draws this page and nothing is reported. `caller` is the pool's
 * class: a visitor's page, or an owner's preview (which takes the owners' share, not the visitors').
 */
export async function drawPage(svc: Services, theme: StoreTheme, input: RenderInput, caller: 'page' | 'owner' = 'page'): Promise<RenderResult> {
  const { source } = theme
  if (source.kind === 'builtin') return renderTheme(source.compiled, input)
  const outcome = await svc.themes.run(caller, { kind: 'render', key: source.key, files: source.files, input })
    // A pool too busy for a visitor's page: the built-in draws it. An owner is told to retry (503), as for every owner job.
    .catch((err: unknown) => { if (err instanceof ApiError && caller === 'page') return null; throw err })
  if (outcome?.ok && 'html' in outcome.value) return { html: outcome.value.html, ok: true, problems: [] }
  const instead = renderCompiled(builtinTheme(theme.fallback)!.compiled, { template: input.template, context: input.context, ...(input.content !== undefined ? { content: input.content } : {}) })
  if (outcome === null) return { html: instead, ok: true, problems: [] }
  if (outcome.ok) return { html: instead, ok: false, problems: (outcome.value as { problems: Problem[] }).problems }
  if (outcome.reason === 'failed') return { html: instead, ok: true, problems: [] }
  return { html: instead, ok: false, problems: [overBudget(outcome.reason, caller, svc.themes.budgets[caller])] }
}

// ---- input ------------------------------------------------------------------------------------------

/** Setting id → value; null (on PUT) puts a setting back to its default. */
const Values = v.record(v.pipe(v.string(), v.maxLength(100)), v.unknown())
const Block = v.strictObject({ type: v.pipe(v.string(), v.maxLength(100)), settings: v.optional(Values) })
const SectionInput = v.nullable(v.strictObject({ settings: v.optional(Values), blocks: v.optional(v.pipe(v.array(Block), v.maxLength(50))) }))
export const UpdateBody = v.object({
  template: v.optional(v.picklist(TEMPLATES, `Use one of ${TEMPLATES.join(', ')}.`)),
  settings: v.optional(Values),
  sections: v.optional(v.record(v.pipe(v.string(), v.maxLength(100)), SectionInput)),
})
export type Update = v.InferOutput<typeof UpdateBody>

/** Text settings are shown on a page: a bound keeps one value from bloating every page. */
const MAX_TEXT = 10_000

function check(errors: FieldErrors, at: string, schema: { name: string; settings?: SectionSchema['settings'] }, values: Record<string, unknown> | undefined, allowNull: boolean): void {
  const given = Object.fromEntries(Object.entries(values ?? {}).filter(([, x]) => !(allowNull && x === null)))
  for (const p of checkValues({ name: schema.name, ...(schema.settings ? { settings: schema.settings } : {}) }, given)) (errors[`${at}.${p.id}`] ??= []).push(p.message)
  for (const [id, x] of Object.entries(given)) if (typeof x === 'string' && x.length > MAX_TEXT) (errors[`${at}.${id}`] ??= []).push(`must be at most ${MAX_TEXT} characters`)
}

/** Owner values against a theme's schemas (docs/themes.md "Section schemas"); errors keyed by field path. */
function checkUpdate(theme: ThemeOutline, input: Update): FieldErrors {
  const errors: FieldErrors = {}
  check(errors, 'settings', { name: 'theme', settings: [...theme.themeSettings] }, input.settings, true)
  for (const [name, sec] of Object.entries(input.sections ?? {})) {
    const schema = theme.schemas.get(name)
    if (!schema) { errors[`sections.${name}`] = [`the theme has no section "${name}"; sections: ${[...theme.schemas.keys()].join(', ')}`]; continue }
    if (!sec) continue
    check(errors, `sections.${name}.settings`, schema, sec.settings, true)
    if (!sec.blocks) continue
    if (schema.max_blocks !== undefined && sec.blocks.length > schema.max_blocks) errors[`sections.${name}.blocks`] = [`at most ${schema.max_blocks} blocks`]
    const types = new Map((schema.blocks ?? []).map((b) => [b.type, b]))
    sec.blocks.forEach((b, i) => {
      const bt = types.get(b.type)
      if (!bt) { errors[`sections.${name}.blocks.${i}.type`] = [`no block type "${b.type}"; types: ${[...types.keys()].join(', ') || 'none'}`]; return }
      if (bt.limit !== undefined && sec.blocks!.filter((x) => x.type === b.type).length > bt.limit) errors[`sections.${name}.blocks`] ??= [`at most ${bt.limit} blocks of type "${b.type}"`]
      check(errors, `sections.${name}.blocks.${i}.settings`, bt, b.settings, false)
    })
  }
  return errors
}

/** Merge checked input into the stored values: settings key by key (null: back to the default), blocks replaced. */
function merge(cur: ThemeValues, input: Update): ThemeValues {
  const patch = (base: Record<string, unknown> | undefined, p: Record<string, unknown> | undefined) => {
    const out = { ...base }
    for (const [k, x] of Object.entries(p ?? {})) if (x === null) delete out[k]; else out[k] = x
    return out
  }
  const sections = { ...cur.sections }
  for (const [name, sec] of Object.entries(input.sections ?? {})) {
    if (sec === null) { delete sections[name]; continue }
    const was = sections[name] ?? {}
    sections[name] = { settings: patch(was.settings, sec.settings), ...(sec.blocks ?? was.blocks ? { blocks: sec.blocks ?? was.blocks } : {}) }
  }
  return { settings: patch(cur.settings, input.settings), sections }
}

const invalid = (errors: FieldErrors) => new ApiError('validation_failed', undefined, errors)

/**
 * What saving `input` would make of the store's theme, checked as `PUT …/theme` checks it (422
 * naming the field, before anything is written): the theme named (or chosen), its record, and the
 * theme visitors would see with the values merged in. The update writes it; the preview draws it.
 */
export async function draftTheme(svc: Services, store: StoreRow, input: Update): Promise<{ rec: StoreThemeRecord | undefined; name: string; theme: StoreTheme }> {
  const rec = readStoreTheme(svc.db, store.id)
  const name = input.template ?? chosenOf(store, rec)
  const t = await themeNamed(svc, store, rec, name)
  if (!t.outline) {
    throw invalid({ template: [name === CUSTOM ? 'Upload a valid custom theme first (PUT /restaurants/{id}/theme/custom).' : `The theme "${name}" cannot be used.`] })
  }
  const errors = checkUpdate(t.outline, input)
  if (Object.keys(errors).length) throw invalid(errors)
  const values = merge(valuesOf(rec, name), input)
  const source: ThemeSource = name === CUSTOM
    ? { kind: 'custom', key: customKey(store.id, rec!), files: rec!.customFiles! }
    : { kind: 'builtin', compiled: builtinTheme(name)!.compiled }
  return { rec, name, theme: { name, source, fallback: defaultThemeOf(store), settings: values.settings ?? {}, sections: values.sections ?? {}, problems: [] } }
}

// ---- operations -------------------------------------------------------------------------------------

const tag = 'Restaurants'

export const getStoreTheme = defineOp({
  id: 'stores.theme.get', tag, summary: 'The store\'s website theme: the choice, setting values, the custom theme and why it falls back',
  description: 'Builtin themes to choose from, the chosen theme\'s settings and section values (defaults filled in), the uploaded custom theme if any, and `fallback`/`problems` when visitors see the default theme instead (docs/themes.md "Choosing and customising a store\'s theme").',
  access: { owner: 'restaurants:read' }, scope: ['store'], output: StoreThemeSchema,
  run: (ctx) => themeView(ctx.svc, storeOf(ctx)),
})

export const updateStoreTheme = defineOp({
  id: 'stores.theme.update', tag, summary: 'Choose the theme and set its settings and section values',
  description: 'Body: any of `template` (`classic`, `market` or `custom`; `custom` needs a valid uploaded custom theme), `settings` (theme-wide, `{id: value}`), `sections` (`{name: {settings?, blocks?: [{type, settings?}]}}`, or `{name: null}` to reset a section). Values are checked against the schemas of the theme chosen (or being chosen): an unknown section or setting, or a value of the wrong type, is 422 `validation_failed` naming the field, and nothing changes. Settings merge key by key (null: back to the default); `blocks` replace the list. Values are kept per theme, so switching back restores them.',
  access: { owner: 'restaurants:write' }, scope: ['store'], input: UpdateBody, output: StoreThemeSchema,
  run: async (ctx, input) => {
    const store = storeOf(ctx)
    const { rec, name } = await draftTheme(ctx.svc, store, input)
    const uploadedAt = rec?.customUploadedAt ?? null
    await ctx.svc.committer.write((db) => {
      // Merged against the row as it is now, in the transaction, so concurrent updates keep each other's keys.
      const now = readStoreTheme(db, store.id)
      if (name === CUSTOM && (now?.customUploadedAt ?? null) !== uploadedAt) throw new ApiError('conflict', 'The custom theme changed meanwhile; try again.')
      const values = { ...now?.values, [name]: merge(valuesOf(now, name), input) }
      return writeStoreTheme(db, store.id, chosenOf(store, now), { template: name, values })
    })
    return themeView(ctx.svc, store)
  },
})

/** `errors` of a refused upload: keyed by the file's path in `files` (`files` for the theme as a whole). */
function problemsByFile(problems: Problem[]): FieldErrors {
  const errors: FieldErrors = {}
  for (const p of problems) (errors[p.file ? `files.${p.file}` : 'files'] ??= []).push(p.line ? `line ${p.line}: ${p.message}` : p.message)
  return errors
}

const UploadBody = v.object({
  files: ThemeFilesSchema,
  activate: v.optional(v.boolean(), false),
})

export const uploadCustomTheme = defineOp({
  id: 'stores.theme.custom.upload', tag, summary: 'Upload the store\'s custom theme (validated; stored only when it has no problems)',
  description: `Body \`{files: {path: text}, activate?}\`: layout/theme.liquid, templates/<page>.liquid, sections/<name>.liquid; at most ${THEME_LIMITS.maxFiles} files, ${THEME_LIMITS.maxFileBytes} bytes per file, ${THEME_LIMITS.maxTotalBytes} bytes in all. Checked by the same validation as POST /themes/validate: any problem is 422 \`theme_invalid\` with \`details.problems\` [{file, line, column?, code, message}] and nothing is stored. Or send the same files as a zip archive with \`Content-Type: application/zip\` (one top-level folder is allowed; a zip never activates). A valid theme replaces the previous upload; the store keeps its current choice unless \`activate\` is true (or it already uses \`custom\`, which then shows the new upload).`,
  access: { owner: 'restaurants:write' }, scope: ['store'], input: UploadBody, output: StoreThemeSchema,
  run: async (ctx, { files, activate }) => {
    const store = storeOf(ctx)
    // Parsed and trial-rendered in the theme pool, on an owner's budget (docs/themes.md "Limits").
    const { problems } = await checkTheme(ctx.svc.themes, 'owner', { kind: 'validate', files: files as ThemeFiles })
    if (problems.length) {
      throw new ApiError('theme_invalid', `The theme has ${problems.length} problem${problems.length === 1 ? '' : 's'}; nothing was stored.`, problemsByFile(problems), undefined, { problems })
    }
    await ctx.svc.committer.write((db) => {
      const now = readStoreTheme(db, store.id)
      return writeStoreTheme(db, store.id, chosenOf(store, now), { customFiles: files, ...(activate ? { template: CUSTOM } : {}) })
    })
    return themeView(ctx.svc, store)
  },
})

export const deleteCustomTheme = defineOp({
  id: 'stores.theme.custom.delete', tag, summary: 'Remove the store\'s custom theme',
  description: 'Removes the uploaded files and their setting values. A store that used `custom` goes back to the default builtin theme for its type (`market` for goods stores, else `classic`). Answers the theme as it is now; removing when there is none changes nothing.',
  access: { owner: 'restaurants:write' }, scope: ['store'], output: StoreThemeSchema,
  run: async (ctx) => {
    const store = storeOf(ctx)
    await ctx.svc.committer.write((db) => {
      const now = readStoreTheme(db, store.id)
      if (!now?.customFiles) return now
      const { [CUSTOM]: _dropped, ...values } = now.values
      return writeStoreTheme(db, store.id, now.template, { customFiles: null, values, ...(now.template === CUSTOM ? { template: defaultThemeOf(store) } : {}) })
    })
    return themeView(ctx.svc, store)
  },
})

export const storeThemeOps = [getStoreTheme, updateStoreTheme, uploadCustomTheme, deleteCustomTheme]
