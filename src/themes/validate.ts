/**
 * validateTheme (issue 12 item 7 `validate_theme`, issue 15 uploads): the strict static checks of
 * compile.ts, then — only when those pass — a trial render of every template with a sample store,
 * which finds what static checks cannot (a field of a loop variable that does not exist).
 */
import { compileTheme, sortProblems, type CompileResult, type ThemeFiles } from './compile.ts'
import { tryRender } from './render.ts'
import { THEME_TEMPLATES } from './reference.ts'
import { sampleContext } from './sample.ts'
import type { Problem } from './problems.ts'

export function validateTheme(files: ThemeFiles, deadline?: number): Problem[] {
  return validateCompiled(compileTheme(files), deadline)
}

/** The trial renders of a compile result; `deadline` (performance.now() time) bounds them all together. */
export function validateCompiled({ problems, theme }: CompileResult, deadline?: number): Problem[] {
  if (!theme) return problems
  const out: Problem[] = []
  for (const template of THEME_TEMPLATES) {
    const r = tryRender(theme, { template, context: sampleContext(template) }, deadline)
    if ('problem' in r && !out.some((p) => p.file === r.problem.file && p.line === r.problem.line && p.message === r.problem.message)) out.push(r.problem)
  }
  return sortProblems(out)
}
