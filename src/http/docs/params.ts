/**
 * Query parameters as a client must send them (issue 20 item 7). A query string is text, so the
 * input schemas parse strings (`page` is a string with a digits-only pattern, `active` one of
 * `0|1|true|false`); the document shows the value's real type: integer, boolean.
 */
import type { JsonSchema } from '../route.ts'

/** A pattern that accepts only digit strings: `^[1-9]\d{0,6}$`, `^([1-9]|1\d|20)$`. */
const DIGITS_ONLY = /^\^(?:\[[0-9-]+\]|\\d|\{\d+(?:,\d+)?\}|[0-9]|[()|])+\$$/
const BOOLEAN_WORDS = new Set(['0', '1', 'true', 'false'])

/** The schema of one query parameter, typed for the client. */
export function queryParamSchema(s: JsonSchema): JsonSchema {
  const alts = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined
  if (alts?.length) {
    // `v.union([number, digits-string])`: the number branch is what the client means.
    const typed = alts.find((a) => a.type === 'integer' || a.type === 'number' || a.type === 'array' || a.type === 'boolean')
    if (typed && alts.every((a) => a.type === typed.type || a.type === 'string')) {
      const { pattern: _pattern, ...clean } = typed
      return { ...clean, ...('default' in s ? { default: s.default } : {}), ...(s.description ? { description: s.description } : {}) }
    }
  }
  if (s.type === 'string' && typeof s.pattern === 'string' && DIGITS_ONLY.test(s.pattern)) {
    const { pattern: _pattern, type: _type, ...rest } = s
    const out: JsonSchema = { ...rest, type: 'integer' }
    if (/^\^\(?\[1-9\]/.test(s.pattern)) out.minimum = 1
    // `^[1-9]\d{0,N}$`: at most N+1 digits.
    const n = /^\^\[1-9\]\\d\{0,(\d+)\}\$$/.exec(s.pattern)
    if (n && Number(n[1]) < 15) out.maximum = 10 ** (Number(n[1]) + 1) - 1
    const r = /^\^\(\[1-9\]\|(?:\[1-(\d)\]|(\d))\\d\|(\d+)\)\$$/.exec(s.pattern)
    if (r) out.maximum = Number(r[3])
    return out
  }
  if (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.every((x) => BOOLEAN_WORDS.has(String(x)))) {
    const { enum: _enum, type: _type, ...rest } = s
    return { ...rest, type: 'boolean', description: `${s.description ? `${String(s.description)} ` : ''}Send \`true\`/\`false\` (or \`1\`/\`0\`).` }
  }
  return s
}
