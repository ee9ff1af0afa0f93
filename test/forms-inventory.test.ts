/**
 * docs/forms.md is the inventory of every form the server serves and the Chromium tests that submit
 * it, accepted and refused (issue 33 item 5). This holds it to the code: every source file with forms
 * has as many rows as forms (`<form` in pages and themes, `h('form'` in the dashboard's script), no
 * row names a file without them, and every test a row names exists and drives a browser.
 */
import t from 'tap'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { ROOT } from './helpers/process.ts'

const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
  e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)])

const FORM = /<form\b|\bh\('form'/g
const inCode = new Map<string, number>()
for (const f of walk(join(ROOT, 'src'))) {
  if (!/\.(ts|html|liquid)$/.test(f)) continue
  const n = (readFileSync(f, 'utf8').match(FORM) ?? []).length
  if (n > 0) inCode.set(relative(ROOT, f), n)
}

const doc = readFileSync(join(ROOT, 'docs', 'forms.md'), 'utf8')
const rows = doc.split('\n').filter((l) => /^\| .* \| src\//.test(l)).map((l) => l.split('|').map((c) => c.trim()))
const inDoc = new Map<string, number>()
for (const r of rows) inDoc.set(r[2]!, (inDoc.get(r[2]!) ?? 0) + 1)

t.test('every form in the code has its row, and every row its form', async (t) => {
  t.ok(inCode.size >= 15, `forms found in ${inCode.size} files`)
  for (const [file, n] of inCode) t.equal(inDoc.get(file) ?? 0, n, `${file}: ${n} form(s) in the code, as many rows`)
  for (const file of inDoc.keys()) t.ok(inCode.has(file), `${file}: named in docs/forms.md and holds forms`)
})

t.test('every test named is there and drives Chromium', async (t) => {
  const legend = /\*\*(\w+)\*\*\s+([\w-]+)/g
  const tests = new Map([...doc.matchAll(legend)].map((m) => [m[1]!, `test/${m[2]!}.test.ts`]))
  t.ok(tests.size >= 8, 'the legend names the test files')
  for (const [abbr, file] of tests) {
    t.ok(existsSync(join(ROOT, file)), `${abbr}: ${file} exists`)
    t.match(readFileSync(join(ROOT, file), 'utf8'), /browserFor|launchChromium|browserAndServer|dashboardForms/, `${file} runs Chromium`)
  }
  for (const r of rows) {
    for (const cell of [r[3]!, r[4]!]) {
      for (const abbr of cell.match(/\b[A-Z]{2}\b/g) ?? []) t.ok(tests.has(abbr), `${r[1]}: ${abbr} is in the legend`)
    }
    t.ok(r[3]!.length > 0 && r[4]!.length > 0, `${r[1]}: accepted and refused are both said`)
  }
})
