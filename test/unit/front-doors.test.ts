/**
 * Front doors are bindings (ARCHITECTURE "The shape"; STYLE habit 1): nothing under src/http, src/ws
 * or src/mcp prepares SQL or writes through the committer, and no front door imports another.
 * Operations, actors, storage, auth and the domain never import a front door. (Lint holds the
 * import rules too; this test also holds the SQL rule, which no lint rule expresses.)
 */
import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join, relative } from 'node:path'

const root = fileURLToPath(new URL('../../src/', import.meta.url))
const FRONT_DOORS = ['http', 'ws', 'mcp']
const BELOW = ['ops', 'actors', 'storage', 'domain', 'auth', 'net']

function filesUnder(dir: string): string[] {
  let out: string[] = []
  let names: string[]
  try { names = readdirSync(dir) } catch { return out }
  for (const name of names) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out = out.concat(filesUnder(p))
    else if (p.endsWith('.ts')) out.push(p)
  }
  return out
}

/** Top-level src folder an import specifier of `file` lands in, if it is a relative import. */
function targetFolder(file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null
  const rel = relative(root, join(file, '..', spec))
  return rel.startsWith('..') ? null : rel.split('/')[0]!
}

const importsOf = (src: string) =>
  [...src.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/g), ...src.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!)

t.test('front doors hold no SQL and no committer writes', async (t) => {
  const files = FRONT_DOORS.flatMap((d) => filesUnder(join(root, d)))
  t.ok(files.length > 10, `${files.length} front-door modules`)
  for (const f of files) {
    const src = readFileSync(f, 'utf8')
    t.notMatch(src, /\.prepare\s*[<(]/, `${relative(root, f)} prepares no SQL (move it to src/storage)`)
    t.notMatch(src, /committer\.write\s*\(/, `${relative(root, f)} writes nothing through the committer (an operation or actor does)`)
  }
})

t.test('no front door imports another; layers below import no front door', async (t) => {
  for (const d of [...FRONT_DOORS, ...BELOW]) {
    for (const f of filesUnder(join(root, d))) {
      for (const spec of importsOf(readFileSync(f, 'utf8'))) {
        const to = targetFolder(f, spec)
        if (!to || to === d || !FRONT_DOORS.includes(to)) continue
        t.fail(`${relative(root, f)} imports the ${to} front door (${spec})`)
      }
    }
  }
  t.pass('checked')
})

/** Relative imports of a module that bring values (an `import type` brings none), with their specifiers. */
const valueImportsOf = (src: string) =>
  [...src.matchAll(/(?:^|\n)\s*(import|export)\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]/g)].filter((m) => !m[2]).map((m) => m[3]!)

t.test('front doors read and write through the operations: no value of src/storage or src/actors (issue 33 item 3)', async (t) => {
  let checked = 0
  for (const d of FRONT_DOORS) {
    for (const f of filesUnder(join(root, d))) {
      for (const spec of valueImportsOf(readFileSync(f, 'utf8'))) {
        const to = targetFolder(f, spec)
        checked++
        if (to === 'storage' || to === 'actors') t.fail(`${relative(root, f)} imports ${spec}: bind to an operation (src/ops) instead`)
      }
    }
  }
  t.ok(checked > 100, `${checked} value imports of front-door modules checked`)
})

t.test('nothing imports a page module but the routes that serve it and other pages (issue 33 item 3)', async (t) => {
  const pages = join(root, 'http', 'pages')
  const mayImport = (f: string) => f.startsWith(join(root, 'http', 'routes')) || f.startsWith(pages) || f.startsWith(join(root, 'browser'))
  for (const f of filesUnder(root)) {
    if (mayImport(f)) continue
    for (const spec of importsOf(readFileSync(f, 'utf8'))) {
      if (spec.startsWith('.') && join(f, '..', spec).startsWith(pages)) t.fail(`${relative(root, f)} imports the page module ${spec}`)
    }
  }
  t.pass('checked')
})
