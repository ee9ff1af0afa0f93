/**
 * What a store's website is drawn with (issue 15; docs/themes.md): the theme a store's pages render
 * with (`storeThemeFor`, cached per store and theme version), drawing one page with it (`drawPage`:
 * a built-in here, an uploaded theme in the theme pool, the default built-in when it fails), and
 * keeping the problems of a failed render for the owner (`reportRenderProblems`). Page rendering,
 * not an operation: the website's pages (src/http/pages/website-page.ts) and the owner's preview
 * (src/ops/web/theme-preview.ts) draw with it; the owner's choice and values are edited by the
 * operations of src/ops/web/store-theme.ts. The choice is read from the store_themes table, never
 * from a StoreRow's `template`: the store actor holds its row in memory and would hand out a stale one.
 */
import { ApiError } from '../errors.ts'
import type { Services } from '../services.ts'
import type { StoreRow } from '../storage/stores.ts'
import { readStoreTheme, storeThemeVersion, writeRenderProblems, type StoreThemeRecord, type ThemeValues } from '../storage/store-themes.ts'
import { verticalOf } from '../domain/verticals.ts'
import type { CompiledTheme, ThemeFiles } from './compile.ts'
import { renderCompiled, renderTheme, type RenderInput, type RenderResult, type SectionValues } from './render.ts'
import type { ThemeOutline } from './jobs.ts'
import { checkTheme, overBudget } from './pool.ts'
import type { Problem } from './problems.ts'
import { BUILTIN_THEMES, builtinTheme, DEFAULT_THEME } from './builtin/index.ts'

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
export const TEMPLATES = [...Object.keys(BUILTIN_THEMES), CUSTOM]

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
export const customKey = (storeId: number, rec: StoreThemeRecord): string => `${storeId}@${rec.customUploadedAt ?? ''}`

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
export async function themeNamed(svc: Services, store: StoreRow, rec: StoreThemeRecord | undefined, name: string): Promise<{ outline?: ThemeOutline; problems: Problem[] }> {
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
