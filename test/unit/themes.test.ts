/**
 * The theme engine (issue 15 item 1, issue 12 item 7 validate_theme): built-in themes validate
 * with zero problems and render every page with a sample store; broken themes are reported with
 * file and line, one rule at a time; a broken theme falls back to the default theme at render.
 */
import t from 'tap'
import { builtinTheme, BUILTIN_THEMES, DEFAULT_THEME } from '../../src/themes/builtin/index.ts'
import { validateTheme } from '../../src/themes/validate.ts'
import { renderTheme } from '../../src/themes/render.ts'
import { sampleContext } from '../../src/themes/sample.ts'
import { THEME_LIMITS, THEME_TEMPLATES } from '../../src/themes/reference.ts'
import type { Problem } from '../../src/themes/problems.ts'

const classic = builtinTheme('classic')!
const edit = (path: string, change: (s: string) => string, files = classic.files) => {
  const before = files[path]!
  const after = change(before)
  if (after === before) throw new Error(`the edit of ${path} changed nothing`)
  return { ...files, [path]: after }
}
const only = (problems: Problem[], code: string) => problems.filter((p) => p.code === code)

t.test('built-in themes validate with zero problems and render every page', async (t) => {
  t.equal(DEFAULT_THEME, 'classic', 'stores.template defaults to classic')
  for (const name of Object.keys(BUILTIN_THEMES)) {
    const theme = builtinTheme(name)!
    t.same(validateTheme(theme.files), [], `${name}: no problems`)
    for (const template of THEME_TEMPLATES) {
      const r = renderTheme(theme.compiled, { template, context: sampleContext(template) })
      t.ok(r.ok, `${name}/${template} renders`)
      t.match(r.html, /^<!doctype html>/, `${name}/${template} is a page`)
      t.notMatch(r.html, /https?:\/\/(?!localhost)/, `${name}/${template}: no external assets`)
      t.match(r.html, /name="viewport"/, `${name}/${template}: phone-first viewport`)
    }
  }
})

t.test('home, menu and item show the sample store', async (t) => {
  const ctx = sampleContext('menu')
  const menu = renderTheme(classic.compiled, { template: 'menu', context: ctx }).html
  t.match(menu, 'Margherita')
  t.match(menu, '€9.50', 'money filter in the store currency')
  t.match(menu, /id="pizza"/, 'handleize for anchors')
  t.match(menu, 'Sold out', 'a sold-out item says so')
  const yen = sampleContext('menu')
  ;(yen.store as Record<string, unknown>).currency = 'JPY'
  t.match(renderTheme(classic.compiled, { template: 'menu', context: yen }).html, '¥950', 'money in the currency\'s own minor units')
  const item = renderTheme(classic.compiled, { template: 'item', context: sampleContext('item') }).html
  t.match(item, 'Large · €12.50', 'variations with their price')
  t.match(item, 'Extra cheese · +€1.50', 'extras')
  t.match(item, '<style nonce="sample-nonce">', 'inline styles carry the CSP nonce')
  const home = renderTheme(classic.compiled, { template: 'home', context: sampleContext('home') }).html
  t.match(home, 'Order ahead', 'preset blocks render when the owner set none')
  const owned = renderTheme(classic.compiled, {
    template: 'home', context: sampleContext('home'),
    sections: { hero: { settings: { subheading: 'Wood-fired since 1999', padding: 13 } }, highlights: { blocks: [{ type: 'highlight', settings: { title: 'Just one' } }] } },
    settings: { accent_color: '#003366' },
  }).html
  t.match(owned, 'Wood-fired since 1999', "the owner's section setting")
  t.match(owned, 'padding:24px', 'a value that does not fit its setting falls back to the default')
  t.match(owned, 'Just one', "the owner's blocks")
  t.notMatch(owned, 'Order ahead', 'instead of the preset ones')
  t.match(owned, '--accent:#003366', 'theme settings from the layout schema')
})

t.test('every output is escaped', async (t) => {
  const ctx = sampleContext('home')
  ;(ctx.store as Record<string, unknown>).name = '<script>alert(1)</script>'
  const html = renderTheme(classic.compiled, { template: 'home', context: ctx }).html
  t.notMatch(html, '<script>alert(1)</script>')
  t.match(html, '&lt;script&gt;alert(1)&lt;/script&gt;')
})

t.test('broken themes are reported with file and line', async (t) => {
  const cases: Array<[string, Record<string, string>, string, string, number]> = [
    ['a syntax error', edit('sections/hero.liquid', (s) => s.replace('{% endif %}', '')), 'liquid_syntax', 'sections/hero.liquid', 3],
    ['an unknown filter', edit('sections/menu.liquid', (s) => s.replace('{{ i.price | money }}', '{{ i.price | moneyz }}')), 'unknown_filter', 'sections/menu.liquid', 10],
    ['an unknown object', edit('sections/hero.liquid', (s) => s.replace('{{ menu.url }}', '{{ shop.url }}')), 'unknown_object', 'sections/hero.liquid', 4],
    ['an unknown field', edit('sections/hero.liquid', (s) => s.replace('{{ menu.url }}', '{{ menu.uri }}')), 'unknown_field', 'sections/hero.liquid', 4],
    ['an undeclared section setting', edit('sections/hero.liquid', (s) => s.replace('section.settings.button_label', 'section.settings.button_text')), 'unknown_setting', 'sections/hero.liquid', 4],
    ['an unknown tag', edit('sections/menu.liquid', (s) => `{% include "secrets" %}\n${s}`), 'unknown_tag', 'sections/menu.liquid', 1],
    ['schema JSON that does not parse', edit('sections/hero.liquid', (s) => s.replace('"name": "Hero",', '"name": "Hero",,')), 'schema_json', 'sections/hero.liquid', 10],
    ['duplicate setting ids', edit('sections/cart.liquid', (s) => s.replace('"id": "empty_text"', '"id": "title"')), 'duplicate_setting_id', 'sections/cart.liquid', 24],
    ['an unknown setting type', edit('sections/cart.liquid', (s) => s.replace('"type": "text", "id": "title"', '"type": "txt", "id": "title"')), 'unknown_setting_type', 'sections/cart.liquid', 23],
    ['a default off its range step', edit('sections/hero.liquid', (s) => s.replace('"default": 24', '"default": 25')), 'bad_default', 'sections/hero.liquid', 15],
    ['a missing section', edit('templates/home.liquid', (s) => `${s}{% section "nope" %}\n`), 'missing_section', 'templates/home.liquid', 4],
    ['a wrong field of a loop variable (found by the trial render)', edit('sections/menu.liquid', (s) => s.replace('{{ i.name }}', '{{ i.title }}')), 'render_error', 'sections/menu.liquid', 10],
  ]
  for (const [what, files, code, file, line] of cases) {
    const problems = validateTheme(files)
    const hit = only(problems, code)
    t.equal(hit.length, 1, `${what}: one ${code} (got ${JSON.stringify(problems)})`)
    t.match(hit[0], { file, line }, `${what}: ${file}:${line}`)
    t.equal(problems.length, 1, `${what}: nothing else reported`)
  }
})

t.test('structure and size limits', async (t) => {
  const { 'templates/cart.liquid': _, ...noCart } = classic.files
  t.match(validateTheme(noCart), [{ code: 'missing_file', file: 'templates/cart.liquid' }])
  t.match(validateTheme({ ...classic.files, '../package.json': '{}' }), [{ code: 'unknown_file', file: '../package.json' }])
  t.match(validateTheme(edit('layout/theme.liquid', (s) => s.replace('{{ content_for_layout }}', ''))), [{ code: 'missing_content_for_layout' }])
  t.match(validateTheme(edit('sections/hero.liquid', (s) => `{% section "menu" %}${s}`)), [{ code: 'section_not_allowed', file: 'sections/hero.liquid', line: 1 }])
  t.match(validateTheme(edit('templates/home.liquid', (s) => `${s}{% schema %}{"name":"x"}{% endschema %}`)), [{ code: 'schema_not_allowed' }])
  t.match(validateTheme(edit('sections/featured.liquid', (s) => s.replace(/\{% schema %\}[\s\S]*\{% endschema %\}/, ''))), [{ code: 'schema_missing', file: 'sections/featured.liquid' }])
  t.match(validateTheme(edit('sections/hero.liquid', (s) => s.replace('{{ menu.url }}', '{{ content_for_layout }}'))), [{ code: 'unknown_object' }], 'content_for_layout only in the layout')
  const many = Object.fromEntries(Array.from({ length: THEME_LIMITS.maxFiles + 1 }, (_, i) => [`sections/s${i}.liquid`, '']))
  t.match(validateTheme(many), [{ code: 'too_many_files' }])
  t.match(validateTheme({ ...classic.files, 'sections/big.liquid': 'x'.repeat(THEME_LIMITS.maxFileBytes + 1) }), [{ code: 'too_large', file: 'sections/big.liquid' }])
})


t.test('a theme that fails to compile or to render falls back to the default theme', async (t) => {
  const unparsable = edit('sections/hero.liquid', (s) => s.replace('{% endif %}', ''))
  const a = renderTheme(unparsable, { template: 'home', context: sampleContext('home') })
  t.equal(a.ok, false, 'not rendered with the broken theme')
  t.match(a.problems, [{ code: 'liquid_syntax', file: 'sections/hero.liquid' }], 'the owner sees why')
  t.match(a.html, 'Popular', 'the default theme rendered the page instead')

  const market = builtinTheme('market')!
  const failsAtRender = edit('sections/catalogue.liquid', (s) => s.replace('{{ p.name }}', '{{ p.title }}'), market.files)
  const b = renderTheme(failsAtRender, { template: 'menu', context: sampleContext('menu') })
  t.equal(b.ok, false)
  t.match(b.problems, [{ code: 'render_error', file: 'sections/catalogue.liquid' }])
  t.match(b.html, 'Margherita', 'the menu still shows, in the default theme')
  t.notMatch(b.html, 'All products', 'not in the broken one')
})
