/**
 * The store_themes table (migration 012; docs/themes.md "Choosing and customising a store's
 * theme"): a store's theme choice, the owner's values per theme, the uploaded custom theme and
 * the render problems the website reported. The only SQL of theme management.
 */
import type { Db } from './db.ts'
import { nowIso, stmt } from './db.ts'
import type { Problem } from '../themes/problems.ts'
import type { ThemeFiles } from '../themes/compile.ts'

/** The owner's values for one theme: theme-wide settings and per-section settings and blocks. */
export interface ThemeValues {
  settings?: Record<string, unknown>
  sections?: Record<string, { settings?: Record<string, unknown>; blocks?: Array<{ type: string; settings?: Record<string, unknown> }> }>
}

export interface StoreThemeRow {
  id: number
  store_id: number
  template: string
  theme_values: string
  custom_files: string | null
  custom_uploaded_at: string | null
  render_problems: string
  version: number
  updated_at: string
}

/** The row as the operations use it (JSON columns parsed). */
export interface StoreThemeRecord {
  storeId: number
  template: string
  values: Record<string, ThemeValues>
  customFiles: ThemeFiles | null
  customUploadedAt: string | null
  renderProblems: Problem[]
  version: number
}

const parse = <T>(text: string | null, empty: T): T => {
  if (text === null) return empty
  try { return JSON.parse(text) as T } catch { return empty }
}

function record(row: StoreThemeRow): StoreThemeRecord {
  return {
    storeId: row.store_id,
    template: row.template,
    values: parse(row.theme_values, {}),
    customFiles: parse<ThemeFiles | null>(row.custom_files, null),
    customUploadedAt: row.custom_uploaded_at,
    renderProblems: parse(row.render_problems, []),
    version: row.version,
  }
}

/** A store's theme row, or undefined when the owner never changed the theme. */
export function readStoreTheme(db: Db, storeId: number): StoreThemeRecord | undefined {
  const row = stmt<[number], StoreThemeRow>(db, 'SELECT * FROM store_themes WHERE store_id = ?').get(storeId)
  return row && record(row)
}

/** The row's version only (0 without a row): the per-request cache check of storeThemeFor. */
export function storeThemeVersion(db: Db, storeId: number): number {
  return (stmt<[number], number>(db, 'SELECT version FROM store_themes WHERE store_id = ?').pluck().get(storeId)) ?? 0
}

/** What an owner change sets; keys left out stay. Every owner change clears the render problems. */
export interface StoreThemeChange {
  template?: string
  values?: Record<string, ThemeValues>
  /** New custom files (with the upload time), or null to remove the custom theme. */
  customFiles?: ThemeFiles | null
}

/**
 * Apply an owner change, creating the row on first use (`fallbackTemplate`: the store's current
 * template), and keep `stores.template` equal to the choice (api-v1 §2.2 `template`). Returns the
 * row as written.
 */
export function writeStoreTheme(db: Db, storeId: number, fallbackTemplate: string, change: StoreThemeChange): StoreThemeRecord {
  const now = nowIso()
  const cur = readStoreTheme(db, storeId)
  const template = change.template ?? cur?.template ?? fallbackTemplate
  const values = JSON.stringify(change.values ?? cur?.values ?? {})
  const files = change.customFiles === undefined ? (cur?.customFiles ?? null) : change.customFiles
  const uploadedAt = change.customFiles === undefined ? (cur?.customUploadedAt ?? null) : change.customFiles === null ? null : now
  stmt(db, `INSERT INTO store_themes (store_id, template, theme_values, custom_files, custom_uploaded_at, render_problems, version, updated_at)
    VALUES (?, ?, ?, ?, ?, '[]', 1, ?)
    ON CONFLICT (store_id) DO UPDATE SET template = excluded.template, theme_values = excluded.theme_values,
      custom_files = excluded.custom_files, custom_uploaded_at = excluded.custom_uploaded_at, render_problems = '[]',
      version = store_themes.version + 1, updated_at = excluded.updated_at`)
    .run(storeId, template, values, files === null ? null : JSON.stringify(files), uploadedAt, now)
  stmt(db, 'UPDATE stores SET template = ? WHERE id = ?').run(template, storeId)
  return readStoreTheme(db, storeId)!
}

/**
 * Record the problems the website met rendering version `version` of the store's theme (0: the
 * store has no row yet; one is made with `template`); false when the row moved on meanwhile (an
 * owner change) or already holds exactly these problems.
 */
export function writeRenderProblems(db: Db, storeId: number, version: number, template: string, problems: readonly Problem[]): boolean {
  const text = JSON.stringify(problems)
  const now = nowIso()
  if (version === 0) {
    return stmt(db, `INSERT INTO store_themes (store_id, template, render_problems, version, updated_at) VALUES (?, ?, ?, 1, ?)
      ON CONFLICT (store_id) DO NOTHING`).run(storeId, template, text, now).changes === 1
  }
  return stmt(db, `UPDATE store_themes SET render_problems = ?, version = version + 1, updated_at = ?
    WHERE store_id = ? AND version = ? AND render_problems <> ?`).run(text, now, storeId, version, text).changes === 1
}
