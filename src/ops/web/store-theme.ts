/**
 * A store's website theme, owner side (issue 15; docs/themes.md "Choosing and customising a
 * store's theme"): the operations that choose a builtin or uploaded custom theme and set the
 * owner's values, and the owner's view of them. What the pages are drawn with, and the drawing,
 * is page rendering: src/themes/store-site.ts.
 */
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { storeOf } from '../scope.ts'
import { ApiError, type FieldErrors } from '../../errors.ts'
import type { Services } from '../../services.ts'
import type { StoreRow } from '../../storage/stores.ts'
import { readStoreTheme, writeStoreTheme, type StoreThemeRecord, type ThemeValues } from '../../storage/store-themes.ts'
import { checkValues, resolveSettings, type SectionSchema } from '../../themes/schema.ts'
import { THEME_LIMITS } from '../../themes/reference.ts'
import { BUILTIN_THEMES, builtinTheme } from '../../themes/builtin/index.ts'
import { CUSTOM, TEMPLATES, chosenOf, customKey, customOutline, defaultThemeOf, storeThemeFor, themeNamed, valuesOf, type StoreTheme, type ThemeSource } from '../../themes/store-site.ts'
import type { ThemeOutline } from '../../themes/jobs.ts'
import type { Problem } from '../../themes/problems.ts'
import type { ThemeFiles } from '../../themes/compile.ts'
import { checkTheme } from '../../themes/pool.ts'
import { ThemeFilesSchema } from './dev.ts'
import { named } from '../schemas/named.ts'

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
