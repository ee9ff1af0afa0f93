/** What theme validation reports (validate_theme, uploads, the render fallback): where, which rule, why. */
export interface Problem {
  /** Theme file path, e.g. `sections/hero.liquid`; `''` for the theme as a whole. */
  file: string
  /** 1-based line; 0 when the problem concerns the whole file or theme. */
  line: number
  column?: number
  /** Stable code (docs/themes.md lists them). */
  code: ProblemCode
  message: string
}

export type ProblemCode =
  | 'too_many_files' | 'too_large' | 'unknown_file' | 'missing_file'
  | 'liquid_syntax' | 'unknown_filter' | 'unknown_tag' | 'unknown_object' | 'unknown_field' | 'unknown_setting'
  | 'schema_json' | 'schema_invalid' | 'schema_missing' | 'schema_not_allowed' | 'unknown_setting_type' | 'duplicate_setting_id' | 'bad_default'
  | 'missing_section' | 'section_not_allowed' | 'missing_content_for_layout' | 'render_error' | 'over_budget' | 'script_not_allowed'

/** Every problem code with its meaning (docs/themes.md; the doc test checks they match). */
export const PROBLEM_CODES: Readonly<Record<ProblemCode, string>> = {
  too_many_files: 'more files than a theme may have',
  too_large: 'a file or the whole theme is larger than allowed',
  unknown_file: 'a path outside the theme structure (layout/theme.liquid, templates/<page>.liquid, sections/<name>.liquid)',
  missing_file: 'a required file (the layout or a page template) is absent',
  liquid_syntax: 'Liquid that does not parse (unclosed tag, bad expression, …)',
  unknown_filter: 'a filter the reference does not list',
  unknown_tag: 'a tag the reference does not list',
  unknown_object: 'a variable that is neither in the reference nor assigned in the file',
  unknown_field: 'a field an object of the reference does not have',
  unknown_setting: '`section.settings.x` or `settings.x` where the schema declares no setting `x`',
  schema_json: 'the {% schema %} is not valid JSON',
  schema_invalid: 'the schema breaks a rule of the schema convention (missing name or label, bad options, unknown key, …)',
  schema_missing: 'a section without a {% schema %}',
  schema_not_allowed: 'a {% schema %} in a template (only sections and the layout declare settings)',
  unknown_setting_type: 'a setting whose type the reference does not list',
  duplicate_setting_id: 'two settings with one id in a schema (or in one block type)',
  bad_default: 'a setting default that does not fit its type (or range, or options)',
  missing_section: '{% section "x" %} where sections/x.liquid does not exist',
  section_not_allowed: 'a {% section %} tag inside a section',
  missing_content_for_layout: 'the layout never outputs {{ content_for_layout }}',
  render_error: 'rendering with a sample store failed (e.g. a field of a loop variable that does not exist)',
  script_not_allowed: 'a <script> tag: themes run no scripts (the store website adds its own)',
  over_budget: 'checking or rendering the theme took more time or memory than its budget allows (docs/themes.md "Budgets: the theme pool")',
}
