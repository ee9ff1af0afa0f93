/**
 * No prototype or function reaches a theme's page (issue 31 item 4; docs/themes.md "Strict by
 * design"). Validation refuses the names that lead to them — as a field (`store.constructor`), as
 * the field of map/where/sort/sort_natural (`map: "constructor"`), as a variable name — over
 * POST /themes/validate and the upload, with file and line. And every filter of the reference,
 * given every kind of value and every such name known only at render time (which no validation can
 * see), renders nil or data: never a function's source, a prototype, or "[object …]".
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, isError } from './helpers/fixtures.ts'
import { builtinTheme } from '../src/themes/builtin/index.ts'
import { renderTheme } from '../src/themes/render.ts'
import { sampleContext } from '../src/themes/sample.ts'
import { FIELD_FILTERS, FILTERS, UNSAFE_NAMES } from '../src/themes/reference.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())

const classic = builtinTheme('classic')!
const withHome = (home: string): Record<string, string> => ({ ...classic.files, 'templates/home.liquid': home })
/** A function's source text, a prototype's or an object's default text. */
const LEAK = /function|\[object|native code|=>|\bclass\b/i
/** Each `<x-case>` of a rendered page: what one filter call printed. */
const cases = (html: string) => [...html.matchAll(/<x-case n="(\d+)">([\s\S]*?)<\/x-case>/g)].map((m) => ({ n: Number(m[1]), out: m[2]! }))

/** Values of every kind a filter may be given: lists of objects and of text, objects, text, a number, a liquidjs drop, nil. */
const INPUTS = ['menu.items', 'menu.items[0].dietary', 'menu', 'store', 'store.name', 'store.id', 'forloop', 'nil', 'empty', 'p']
/** The reserved names, and paths through them (a path through a real field: the next test). */
const NAMES = [...UNSAFE_NAMES, 'constructor.name', '__proto__.constructor', '__proto__.__proto__.toString']
/** As many arguments as the filter's syntax shows (`replace: "a", "b"` → 2). */
const arity = (syntax: string) => /\|\s*\w+:\s*(.*?)\s*\}\}$/.exec(syntax)?.[1]!.match(/"[^"]*"|'[^']*'|[^,\s]+/g)!.length ?? 0

t.test('every filter, given every kind of value and a reserved name known only at render time, prints no function, prototype or [object …]', async (t) => {
  t.ok(FILTERS.length >= 40, `${FILTERS.length} filters`)
  for (const f of FILTERS) {
    const args = Array.from({ length: Math.max(arity(f.syntax), 1) }, () => 'p').join(', ')
    const labels: string[] = []
    const lines: string[] = []
    for (const input of INPUTS) {
      for (const name of NAMES) {
        // Inside a loop, so `forloop` is a drop; the name comes from a variable, so validation cannot see it.
        lines.push(`{% assign p = ${JSON.stringify(name)} %}<x-case n="${labels.length}">{% for z in menu.items limit: 1 %}{{ ${input} | ${f.name}: ${args} }}{% endfor %}</x-case>`)
        labels.push(`{{ ${input} | ${f.name}: ${args} }} with p = "${name}"`)
      }
    }
    // renderTheme compiles the files first (every static check): ok means they passed and rendered without an error.
    const r = renderTheme(withHome(lines.join('\n')), { template: 'home', context: sampleContext('home') })
    t.ok(r.ok, `${f.name}: passes validation and renders (nil, not an error): ${JSON.stringify(r.problems)}`)
    const out = cases(r.html)
    t.equal(out.length, labels.length, `${f.name}: every case rendered`)
    t.same(out.filter((c) => LEAK.test(c.out)).map((c) => `${labels[c.n]} → ${c.out.slice(0, 80)}`), [], `${f.name}: nothing but data`)
  }
})

t.test('the field filters and paths read a reserved name as nil, also through a real field; real fields still work', async (t) => {
  const names = [...UNSAFE_NAMES, 'name.constructor', 'name.__proto__.toString', 'variations.constructor']
  const lines = ['<x-case n="0">{{ menu.items | map: "name" | join: "," }}:{{ menu.items | where: "available" | size }}</x-case>']
  for (const name of names) {
    lines.push(`{% assign p = ${JSON.stringify(name)} %}<x-case n="${lines.length}">{{ menu.items | map: p | compact | size }}:{{ menu.items | where: p | size }}:` +
      '{{ menu.items | sort: p | map: "name" | join: "," }}:{{ menu.items | sort_natural: p | map: "name" | join: "," }}:' +
      // One key in brackets, not a path: the reserved names themselves.
      `${name.includes('.') ? '' : '{% for x in menu.items limit: 1 %}{{ forloop[p] }}{{ x[p] }}{{ store[p] }}{{ menu.items[p] }}{% endfor %}'}</x-case>`)
  }
  const r = renderTheme(withHome(lines.join('\n')), { template: 'home', context: sampleContext('home') })
  t.ok(r.ok, JSON.stringify(r.problems))
  const [real, ...rest] = cases(r.html)
  const all = 'Margherita,Diavola,Lemonade,Olive oil 500 ml'
  t.equal(real!.out, `${all}:3`)
  for (const c of rest) t.equal(c.out, `0:0:${all}:${all}:`, `${names[c.n - 1]}: map gives nil, where keeps nothing, the sorts keep the order, a path reads nil`)
})

t.test('a function in the data never prints (its source is not text)', async (t) => {
  const ctx = sampleContext('home')
  const fn = function secret() { return 'SECRET-SOURCE' }
  ;(ctx.store as Record<string, unknown>).name = fn
  ;((ctx.menu as { items: Array<Record<string, unknown>> }).items[0]!).name = fn
  const r = renderTheme(withHome('<x-case n="0">{{ store.name }}|{{ menu.items | map: "name" | first }}|{{ menu.items | sort: "name" | size }}|{{ store | json }}</x-case>'),
    { template: 'home', context: ctx })
  t.ok(r.ok, JSON.stringify(r.problems))
  const [c] = cases(r.html)
  t.notMatch(c!.out, /SECRET-SOURCE|secret|function/, c!.out)
  t.match(c!.out, /^\|\|4\|/, 'nil where the function was')
})

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

t.test('an upload with a reserved name is refused; one that names it only at render time stores and serves a page without it', async (t) => {
  const a = createAccount(s.app.svc.db)
  const refused = await s.req('PUT', `/restaurants/${a.storeId}/theme/custom`, { token: a.token, body: { files: withHome('{{ menu.items | map: "constructor" }}') } })
  isError(t, refused, 422, 'theme_invalid')
  t.match(refused.body.details.problems, [{ file: 'templates/home.liquid', line: 1, code: 'unknown_field' }])

  const home = ['<p>PROTO-MARK</p>', ...NAMES.map((name, n) => `{% assign p = ${JSON.stringify(name)} %}<x-case n="${n}">${FIELD_FILTERS.map((f) => `{{ menu.items | ${f}: p | json }}`).join('')}{{ store | map: p }}{{ menu.items | join: p | upcase }}</x-case>`)]
  const stored = await s.req('PUT', `/restaurants/${a.storeId}/theme/custom`, { token: a.token, body: { files: withHome(home.join('\n')), activate: true } })
  t.equal(stored.status, 200, JSON.stringify(stored.body).slice(0, 300))
  const page = await fetch(`${s.site}/s/${a.slug}`)
  t.equal(page.status, 200)
  const html = await page.text()
  t.match(html, 'PROTO-MARK', 'the custom theme rendered the page (not the fallback)')
  const out = cases(html)
  t.equal(out.length, NAMES.length)
  t.same(out.filter((c) => LEAK.test(c.out)).map((c) => `${NAMES[c.n]}: ${c.out.slice(0, 80)}`), [], 'no function, prototype or [object …] in the served page')
})
