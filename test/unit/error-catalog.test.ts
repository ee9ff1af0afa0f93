/** The error catalog (src/errors.ts) and its documentation (docs/errors.md) name the same codes with the same statuses. */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { ERROR_CATALOG } from '../../src/errors.ts'

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8')
const rows = new Map([...doc.matchAll(/^\| (\d{3}) \| `(\w+)` \|/gm)].map((m) => [m[2]!, Number(m[1])]))

for (const [code, { status }] of Object.entries(ERROR_CATALOG)) {
  t.equal(rows.get(code), status, `docs/errors.md documents ${code} as ${status}`)
}
for (const code of rows.keys()) t.ok(code in ERROR_CATALOG, `${code} in docs/errors.md is a catalog code`)
