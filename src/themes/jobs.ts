/**
 * What the theme pool's worker threads do (src/themes/pool.ts, docs/themes.md "Budgets: the theme pool"): every
 * parse and render of a theme that is not built in — an owner's upload, a developer's
 * `validate_theme`, a store website page drawn with a custom theme — runs here, never on the
 * server's event loop. Compiling a 1 MB theme takes most of a second and a hostile template can
 * loop for as long as the engine lets it; here that costs a worker's time, bounded by the job's
 * budget, not every tenant's requests.
 *
 * Plain functions over structured-clone data, so a unit test can run them without a thread.
 */
import { compileTheme, type CompileResult, type ThemeFiles } from './compile.ts'
import { tryRender, type RenderInput } from './render.ts'
import { validateCompiled } from './validate.ts'
import type { Problem } from './problems.ts'
import type { SectionSchema, Setting } from './schema.ts'

/** What the owner's settings editor needs of a theme: its schemas (a CompiledTheme has them too). */
export interface ThemeOutline {
  themeSettings: readonly Setting[]
  schemas: ReadonlyMap<string, SectionSchema>
}

/**
 * One job. `key` names a stored theme (store and upload time): the worker keeps its compiled form,
 * so rendering the pages of one store compiles its theme once. `budgetMs` is set by the pool from the
 * caller's class; the job's trial or page renders stop when it is spent.
 */
export type ThemeJob =
  | { kind: 'validate'; files: ThemeFiles; budgetMs: number }
  | { kind: 'outline'; key: string; files: ThemeFiles; budgetMs: number }
  | { kind: 'render'; key: string; files: ThemeFiles; input: RenderInput; budgetMs: number }

export interface ThemeJobResults {
  /** Every problem (static, then trial renders); the outline when there are none. */
  validate: { problems: Problem[]; outline?: ThemeOutline }
  /** Static problems only (the upload's trial renders already passed); the outline when there are none. */
  outline: { problems: Problem[]; outline?: ThemeOutline }
  /** The page, or why the theme could not draw it (the caller falls back to a built-in theme). */
  render: { html: string } | { problems: Problem[] }
}

/** Compiled stored themes by key, least recently used first; evicting costs only a recompile. */
const compiled = new Map<string, CompileResult>()
const KEEP = 32

function compiledFor(key: string, files: ThemeFiles): CompileResult {
  let c = compiled.get(key)
  if (c) compiled.delete(key)
  else c = compileTheme(files)
  compiled.set(key, c)
  if (compiled.size > KEEP) compiled.delete(compiled.keys().next().value!)
  return c
}

const outlineOf = (c: CompileResult): ThemeOutline | undefined =>
  c.theme ? { themeSettings: c.theme.themeSettings, schemas: c.theme.schemas } : undefined

export function runThemeJob(job: ThemeJob): ThemeJobResults[ThemeJob['kind']] {
  const deadline = performance.now() + job.budgetMs
  switch (job.kind) {
    case 'validate': {
      const c = compileTheme(job.files)
      const problems = validateCompiled(c, deadline)
      return problems.length ? { problems } : { problems, ...(c.theme ? { outline: outlineOf(c)! } : {}) }
    }
    case 'outline': {
      const c = compiledFor(job.key, job.files)
      return { problems: c.problems, ...(c.theme ? { outline: outlineOf(c)! } : {}) }
    }
    case 'render': {
      const c = compiledFor(job.key, job.files)
      if (!c.theme) return { problems: c.problems }
      const r = tryRender(c.theme, job.input, deadline)
      return 'html' in r ? r : { problems: [r.problem] }
    }
  }
}
