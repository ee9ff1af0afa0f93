/**
 * docs/themes.md is the same reference the dev MCP server serves (issue 15 item 5, issue 12 item 7):
 * its reference block is exactly what src/themes/reference.ts generates, and it names every
 * object, field, filter, tag, setting type and problem code.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { DOC_PATH, END, START, referenceMarkdown } from '../../src/themes/docs.ts'
import { FILTERS, OBJECTS, SETTING_TYPES, TAGS } from '../../src/themes/reference.ts'
import { PROBLEM_CODES } from '../../src/themes/problems.ts'

const doc = readFileSync(DOC_PATH, 'utf8')

t.test('the reference block is generated from the reference structure', async (t) => {
  const block = doc.slice(doc.indexOf(START), doc.indexOf(END) + END.length)
  t.ok(block.length > 0, 'docs/themes.md has the markers')
  t.equal(block, referenceMarkdown(), 'up to date (regenerate: node --import tsx src/themes/docs.ts)')
})

t.test('docs/themes.md lists every object, field, filter, tag, setting type and problem code', async (t) => {
  for (const o of OBJECTS) {
    t.match(doc, `#### \`${o.name}\``, `object ${o.name}`)
    for (const f of o.fields ?? []) t.match(doc, `\`${o.name}${o.type === 'array' ? '[]' : ''}.${f.name}\``, `field ${o.name}.${f.name}`)
  }
  for (const f of FILTERS) t.match(doc, `| \`${f.name}\` |`, `filter ${f.name}`)
  for (const x of TAGS) t.match(doc, `| \`${x.name}\` |`, `tag ${x.name}`)
  for (const s of SETTING_TYPES) t.match(doc, `| \`${s.type}\` |`, `setting type ${s.type}`)
  for (const code of Object.keys(PROBLEM_CODES)) t.match(doc, `| \`${code}\` |`, `problem code ${code}`)
})
