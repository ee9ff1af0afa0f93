/** STYLE 5: src/domain is pure — no Node built-ins, actors, SQLite or uWS, no clock or randomness. */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const dir = fileURLToPath(new URL('../../src/domain/', import.meta.url))
const files = readdirSync(dir).filter((f) => f.endsWith('.ts'))

t.ok(files.length >= 6, `${files.length} domain modules`)
for (const f of files) {
  const src = readFileSync(dir + f, 'utf8')
  const specs = [...src.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/g), ...src.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!)
  for (const spec of specs) {
    t.ok(spec.startsWith('./') || spec === '../errors.ts', `${f} imports only domain modules and the error catalog (${spec})`)
  }
  t.notMatch(src, /\b(Date\.now|Math\.random|process\.|setTimeout|setInterval|new Date\(\))/, `${f} reads no clock, randomness or process state`)
}
