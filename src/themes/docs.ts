/**
 * The reference part of docs/themes.md, generated from reference.ts so the doc and the dev MCP
 * server's `get_liquid_reference` can never disagree (test/unit/themes-doc.test.ts checks it).
 * Regenerate: `node --import tsx src/themes/docs.ts` rewrites the block between the markers.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { FIELD_FILTERS, FILTERS, OBJECTS, SETTING_TYPES, TAGS, THEME_LIMITS, UNSAFE_NAMES, type FieldRef } from './reference.ts'
import { PROBLEM_CODES } from './problems.ts'
import { ROOT_URL } from '../root.ts'

export const START = '<!-- reference:start (generated from src/themes/reference.ts; run `node --import tsx src/themes/docs.ts`) -->'
export const END = '<!-- reference:end -->'

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ')
const typeOf = (f: FieldRef) => `${f.type}${f.nullable ? ' or nil' : ''}`

function fieldRows(fields: readonly FieldRef[], prefix: string): string[] {
  const rows: string[] = []
  for (const f of fields) {
    rows.push(`| \`${prefix}${f.name}\` | ${typeOf(f)} | ${cell(f.description)} |`)
    if (f.fields) rows.push(...fieldRows(f.fields, `${prefix}${f.name}${f.type === 'array' ? '[]' : ''}.`))
  }
  return rows
}

export function referenceMarkdown(): string {
  const out: string[] = [START, '', '### Objects', '']
  for (const o of OBJECTS) {
    out.push(`#### \`${o.name}\``, '', `${o.description} (${typeOf(o)}). Available: ${o.availability}.`, '')
    if (o.fields) out.push('| field | type | meaning |', '|---|---|---|', ...fieldRows(o.fields, `${o.name}${o.type === 'array' ? '[]' : ''}.`), '')
  }
  out.push('### Filters', '', '| filter | kind | syntax | what it does |', '|---|---|---|---|')
  for (const f of FILTERS) out.push(`| \`${f.name}\` | ${f.kind} | \`${cell(f.syntax)}\` | ${cell(f.description)} |`)
  out.push('', '### Reserved names', '', `Never a field, the field of ${FIELD_FILTERS.map((f) => `\`${f}\``).join(', ')}, or a variable name (validation: \`unknown_field\`, ` +
    'or `liquid_syntax` for a variable); read at render time, for instance from a variable, they are nil: ' + `${UNSAFE_NAMES.map((n) => `\`${n}\``).join(', ')}.`)
  out.push('', '### Tags', '', '| tag | kind | syntax | what it does |', '|---|---|---|---|')
  for (const x of TAGS) out.push(`| \`${x.name}\` | ${x.kind} | \`${cell(x.syntax)}\` | ${cell(x.description)} |`)
  out.push('', '### Setting types', '', '| type | value | extra attributes | meaning |', '|---|---|---|---|')
  for (const s of SETTING_TYPES) out.push(`| \`${s.type}\` | ${s.value ?? '—'} | ${s.attributes.map((a) => `\`${a}\``).join(', ') || '—'} | ${cell(s.description)} |`)
  out.push('', '### Problem codes', '', '| code | meaning |', '|---|---|')
  for (const [code, meaning] of Object.entries(PROBLEM_CODES)) out.push(`| \`${code}\` | ${cell(meaning)} |`)
  out.push('', '### Limits', '', '| limit | value |', '|---|---|')
  for (const [k, v] of Object.entries(THEME_LIMITS)) out.push(`| \`${k}\` | ${v} |`)
  out.push('', END)
  return out.join('\n')
}

export const DOC_PATH = fileURLToPath(new URL('docs/themes.md', ROOT_URL))

/** Replace the generated block of docs/themes.md. */
export function regenerate(): void {
  const doc = readFileSync(DOC_PATH, 'utf8')
  const a = doc.indexOf(START.slice(0, 24))
  const b = doc.indexOf(END)
  if (a < 0 || b < 0) throw new Error('docs/themes.md lacks the reference markers')
  writeFileSync(DOC_PATH, doc.slice(0, a) + referenceMarkdown() + doc.slice(b + END.length))
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) regenerate()
