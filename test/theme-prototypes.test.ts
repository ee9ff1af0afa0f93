/**
 * No prototype or function reaches a theme's page (issue 31 item 4; docs/themes.md "Strict by
 * design"). Validation refuses the names that lead to them — as a field (`store.constructor`), as
 * the field of map/where/sort/sort_natural (`map: "constructor"`), as a variable name — over
 * POST /themes/validate and the upload, with file and line.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, isError } from './helpers/fixtures.ts'
import { builtinTheme } from '../src/themes/builtin/index.ts'
import { FIELD_FILTERS, UNSAFE_NAMES } from '../src/themes/reference.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())

const classic = builtinTheme('classic')!
const withHome = (home: string): Record<string, string> => ({ ...classic.files, 'templates/home.liquid': home })

t.test('the reserved names cover every member JavaScript gives every object', async (t) => {
  for (const name of [...Object.getOwnPropertyNames(Object.prototype), 'prototype']) t.ok(UNSAFE_NAMES.includes(name), name)
})

const problemsOf = async (home: string) => {
  const r = await s.req('POST', '/themes/validate', { body: { files: withHome(home) } })
  t.equal(r.status, 200)
  return r.body as { valid: boolean; problems: Array<{ file: string; line: number; column?: number; code: string; message: string }> }
}

t.test('POST /themes/validate (no auth) refuses a reserved name with file, line and column, like store.constructor', async (t) => {
  const map = await problemsOf('<p>\n{{ menu.items | map: "constructor" }}</p>')
  t.equal(map.valid, false, 'the issue\'s example: map: "constructor"')
  t.match(map.problems, [{ file: 'templates/home.liquid', line: 2, column: 22, code: 'unknown_field', message: /map: "constructor" names no field/ }])
  t.equal(map.problems.length, 1)
  const field = await problemsOf('{{ store.constructor }}\n{{ store["__proto__"] }}')
  t.match(field.problems, [{ line: 1, code: 'unknown_field', message: /"constructor" is not a field/ }, { line: 2, code: 'unknown_field', message: /"__proto__"/ }], 'the same code as a field')
  for (const f of FIELD_FILTERS) {
    for (const name of ['constructor', '__proto__', 'prototype', 'toString', 'name.constructor', 'a["__proto__"]']) {
      const r = await problemsOf(`{% assign xs = menu.items | ${f}: ${JSON.stringify(name)} %}{{ xs | size }}`)
      t.match(r.problems, [{ file: 'templates/home.liquid', line: 1, code: 'unknown_field', message: `${f}: "${name}" names no field` }], `${f}: "${name}"`)
    }
  }
  const local = await problemsOf('{% for x in menu.items %}\n{{ forloop.toString }}{{ x.valueOf }}{% endfor %}\n{% increment __proto__ %}{% assign constructor = 1 %}')
  t.match(local.problems, [
    { line: 2, code: 'unknown_field', message: /"toString" is not a field/ },
    { line: 2, code: 'unknown_field', message: /"valueOf" is not a field/ },
    { line: 3, code: 'liquid_syntax', message: /"__proto__" cannot be a variable name/ },
    { line: 3, code: 'liquid_syntax', message: /"constructor" cannot be a variable name/ },
  ], 'a loop\'s drop and the theme\'s own variables too')
  t.same((await problemsOf('{{ menu.items | map: "name" | join: ", " }}{{ menu.items | sort: "price" | where: "available" | size }}')).problems, [], 'real fields pass')
})

t.test('an upload with a reserved name is refused', async (t) => {
  const a = createAccount(s.app.svc.db)
  const refused = await s.req('PUT', `/restaurants/${a.storeId}/theme/custom`, { token: a.token, body: { files: withHome('{{ menu.items | map: "constructor" }}') } })
  isError(t, refused, 422, 'theme_invalid')
  t.match(refused.body.details.problems, [{ file: 'templates/home.liquid', line: 1, code: 'unknown_field' }])

})
