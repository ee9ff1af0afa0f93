/**
 * Theme management, owner side (issue 15; docs/themes.md "Choosing and customising a store's
 * theme"): `GET/PUT /restaurants/{id}/theme`, `PUT/DELETE /restaurants/{id}/theme/custom`, and
 * `storeThemeFor`/`reportRenderProblems`, what the website renders with. Choosing a builtin keeps
 * the store's `template` in step; values are checked against the theme's schemas (bad ones: 422
 * naming the field, nothing written); an uploaded theme goes through the same validation as
 * POST /themes/validate (problems with file and line, nothing stored); size limits; another
 * owner's store is 404 and a read-only token 403; a theme that fails while rendering falls back
 * to the default theme with the problems kept for the owner. Uploads may also be zip archives.
 */
import t from 'tap'
import { crc32, deflateRawSync } from 'node:zlib'
import { startServer } from './helpers/server.ts'
import { createAccount, createOwner, createStore, isError, tokenFor } from './helpers/fixtures.ts'
import { builtinTheme } from '../src/themes/builtin/index.ts'
import { sampleContext } from '../src/themes/sample.ts'
import { THEME_LIMITS } from '../src/themes/reference.ts'
import { drawPage, reportRenderProblems, storeThemeFor, type StoreTheme } from '../src/themes/store-site.ts'
import { writeStoreTheme } from '../src/storage/store-themes.ts'
import type { StoreRow } from '../src/storage/stores.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const svc = s.app.svc
const db = svc.db

const classic = builtinTheme('classic')!
const market = builtinTheme('market')!
/** A custom theme: the classic files with a marker in the hero, so it is recognisable. */
const customFiles = (marker = 'CUSTOM-MARK'): Record<string, string> => ({
  ...classic.files,
  'sections/hero.liquid': classic.files['sections/hero.liquid']!.replace('<section', `<p>${marker}</p><section`),
})

const storeRow = (id: number) => db.prepare('SELECT * FROM stores WHERE id = ?').get(id) as StoreRow
const themeRow = (id: number) => db.prepare('SELECT * FROM store_themes WHERE store_id = ?').get(id) as Record<string, unknown> | undefined

/** The built-in theme a store's pages are drawn with, or undefined when its custom theme draws them. */
const builtinOf = (st: StoreTheme) => (st.source.kind === 'builtin' ? st.source.compiled : undefined)
/** A page as the website draws it: custom themes in the theme pool, built-ins inline. */
const draw = (st: StoreTheme, input: Parameters<typeof drawPage>[2]) => drawPage(svc, st, input)

const path = (id: number, rest = '') => `/restaurants/${id}/theme${rest}`
const get = (id: number, token: string) => s.req('GET', path(id), { token })
const put = (id: number, token: string, body: unknown) => s.req('PUT', path(id), { token, body })
const upload = (id: number, token: string, body: unknown) => s.req('PUT', path(id, '/custom'), { token, body })
const remove = (id: number, token: string) => s.req('DELETE', path(id, '/custom'), { token })

t.test('a store that never chose reads its builtin theme with the defaults', async (t) => {
  const a = createAccount(db)
  const r = await get(a.storeId, a.token)
  t.equal(r.status, 200)
  t.match(r.body, { template: 'classic', custom: null, fallback: false, problems: [] })
  t.same(r.body.builtin_themes.map((b: { key: string }) => b.key), ['classic', 'market'])
  t.match(r.body.builtin_themes[0], { key: 'classic', title: String, description: String })
  t.match(r.body.settings, { accent_color: '#a4321a', font: 'sans', corner_radius: 10 }, 'theme settings with their defaults')
  t.match(r.body.sections.hero.settings, { heading: '', subheading: 'Fresh, made to order.' }, 'section settings with their defaults')
  t.notOk(themeRow(a.storeId), 'reading writes nothing')
  const st = storeThemeFor(svc, storeRow(a.storeId))
  t.match(st, { name: 'classic', problems: [] })
  t.equal(builtinOf(st), classic.compiled)
})

t.test('choosing a builtin sets the store template, also for a stale store row', async (t) => {
  const a = createAccount(db)
  const stale = storeRow(a.storeId)
  const r = await put(a.storeId, a.token, { template: 'market' })
  t.equal(r.status, 200)
  t.match(r.body, { template: 'market', fallback: false, problems: [] })
  t.ok('columns_mobile' in r.body.settings, 'the settings are those of the market theme')
  t.equal((await s.req('GET', `/restaurants/${a.storeId}`, { token: a.token })).body.template, 'market', 'GET /restaurants/{id} template in step')
  t.equal(storeRow(a.storeId).template, 'market')
  const st = storeThemeFor(svc, stale)
  t.equal(st.name, 'market', 'the choice comes from the theme table, not from a row held in memory (the store actor\'s)')
  t.equal(builtinOf(st), market.compiled)
})

t.test('settings and section values are stored per theme, merged and reset with null', async (t) => {
  const a = createAccount(db)
  const r = await put(a.storeId, a.token, {
    settings: { accent_color: '#112233', corner_radius: 4 },
    sections: { hero: { settings: { heading: 'Welcome to Ana' } }, highlights: { blocks: [{ type: 'highlight', settings: { title: 'Fresh', text: 'Daily' } }] } },
  })
  t.equal(r.status, 200)
  t.match(r.body.settings, { accent_color: '#112233', corner_radius: 4, font: 'sans' })
  t.match(r.body.sections.hero.settings, { heading: 'Welcome to Ana', subheading: 'Fresh, made to order.' })
  t.match(r.body.sections.highlights.blocks, [{ type: 'highlight', settings: { title: 'Fresh', text: 'Daily' } }])
  let st = storeThemeFor(svc, storeRow(a.storeId))
  t.same(st.settings, { accent_color: '#112233', corner_radius: 4 }, 'storeThemeFor hands the owner\'s values to the renderer')
  t.same(st.sections.hero, { settings: { heading: 'Welcome to Ana' } })
  const html = await draw(st, { template: 'home', context: sampleContext('home'), settings: st.settings, sections: st.sections })
  t.ok(html.ok, 'renders')
  t.ok(html.html.includes('Welcome to Ana'), 'the section value reaches the page')
  t.ok(html.html.includes('#112233'), 'the theme setting reaches the page')

  const merged = await put(a.storeId, a.token, { settings: { corner_radius: null, font: 'serif' }, sections: { hero: { settings: { subheading: 'Since 1990' } } } })
  t.match(merged.body.settings, { accent_color: '#112233', corner_radius: 10, font: 'serif' }, 'null puts a setting back to its default; others stay')
  t.match(merged.body.sections.hero.settings, { heading: 'Welcome to Ana', subheading: 'Since 1990' })

  await put(a.storeId, a.token, { template: 'market', settings: { accent_color: '#445566' } })
  const back = await put(a.storeId, a.token, { template: 'classic' })
  t.match(back.body.settings, { accent_color: '#112233', font: 'serif' }, 'switching back restores the classic values')
  const reset = await put(a.storeId, a.token, { sections: { hero: null } })
  t.match(reset.body.sections.hero.settings, { heading: '', subheading: 'Fresh, made to order.' }, '{section: null} resets a section')
  st = storeThemeFor(svc, storeRow(a.storeId))
  t.notOk('hero' in st.sections)
})

t.test('values the theme does not declare, or of the wrong type, are 422 naming the field; nothing is written', async (t) => {
  const a = createAccount(db)
  await put(a.storeId, a.token, { settings: { accent_color: '#000000' } })
  const before = { row: themeRow(a.storeId), template: storeRow(a.storeId).template }
  const cases: Array<[unknown, string]> = [
    [{ sections: { nope: { settings: {} } } }, 'sections.nope'],
    [{ sections: { hero: { settings: { nope: 'x' } } } }, 'sections.hero.settings.nope'],
    [{ sections: { hero: { settings: { padding: 'big' } } } }, 'sections.hero.settings.padding'],
    [{ sections: { hero: { settings: { padding: 500 } } } }, 'sections.hero.settings.padding'],
    [{ settings: { accent_color: 'red' } }, 'settings.accent_color'],
    [{ settings: { font: 'comic' } }, 'settings.font'],
    [{ settings: { nope: 1 } }, 'settings.nope'],
    [{ sections: { highlights: { blocks: [{ type: 'banner' }] } } }, 'sections.highlights.blocks.0.type'],
    [{ sections: { highlights: { blocks: [{ type: 'highlight', settings: { title: 7 } }] } } }, 'sections.highlights.blocks.0.settings.title'],
    [{ sections: { highlights: { blocks: Array.from({ length: 5 }, () => ({ type: 'highlight' })) } } }, 'sections.highlights.blocks'],
    [{ sections: { hero: { settings: { heading: 'x'.repeat(10_001) } } } }, 'sections.hero.settings.heading'],
    // Checked against the theme being chosen: `banner` is a market section, not a classic one.
    [{ template: 'market', sections: { hero: { settings: {} } } }, 'sections.hero'],
    [{ template: 'fancy' }, 'template'],
    [{ template: 'custom' }, 'template'],
  ]
  for (const [body, field] of cases) {
    const r = await put(a.storeId, a.token, body)
    isError(t, r, 422, 'validation_failed', JSON.stringify(body).slice(0, 80))
    t.ok(r.body.errors && field in r.body.errors, `names ${field}: ${JSON.stringify(r.body.errors)}`)
  }
  t.same(themeRow(a.storeId), before.row, 'the theme row is unchanged')
  t.equal(storeRow(a.storeId).template, before.template)
})

t.test('a valid custom theme is stored, selected on request, and rendered', async (t) => {
  const a = createAccount(db)
  const r = await upload(a.storeId, a.token, { files: customFiles() })
  t.equal(r.status, 200)
  t.match(r.body, { template: 'classic', custom: { file_count: Object.keys(classic.files).length, uploaded_at: String, valid: true, problems: [] } },
    'uploading keeps the current choice')
  t.equal(builtinOf(storeThemeFor(svc, storeRow(a.storeId))), classic.compiled)

  const chosen = await put(a.storeId, a.token, { template: 'custom', sections: { hero: { settings: { heading: 'Mine' } } } })
  t.equal(chosen.status, 200)
  t.match(chosen.body, { template: 'custom', fallback: false, problems: [] })
  t.equal(storeRow(a.storeId).template, 'custom')
  const st = storeThemeFor(svc, storeRow(a.storeId))
  t.equal(st.name, 'custom')
  t.equal(st.source.kind, 'custom', 'drawn by the theme pool')
  t.equal(storeThemeFor(svc, storeRow(a.storeId)), st, 'read once, then cached')
  const html = await draw(st, { template: 'home', context: sampleContext('home'), sections: st.sections, settings: st.settings })
  t.ok(html.ok)
  t.ok(html.html.includes('CUSTOM-MARK') && html.html.includes('Mine'), 'the custom files and the owner\'s values render')

  const again = await upload(a.storeId, a.token, { files: customFiles('SECOND-MARK') })
  t.equal(again.status, 200)
  const next = storeThemeFor(svc, storeRow(a.storeId))
  t.not(next.source, st.source, 'a new upload is a new theme')
  t.ok((await draw(next, { template: 'home', context: sampleContext('home') })).html.includes('SECOND-MARK'), 'a store using custom shows the new upload at once')

  const b = createAccount(db)
  const activated = await upload(b.storeId, b.token, { files: customFiles(), activate: true })
  t.match(activated.body, { template: 'custom', custom: { valid: true } }, '`activate: true` selects it in the same call')
  t.equal(storeRow(b.storeId).template, 'custom')
})

t.test('a broken custom theme is 422 theme_invalid with file and line; nothing is stored', async (t) => {
  const a = createAccount(db)
  await upload(a.storeId, a.token, { files: customFiles() })
  const before = themeRow(a.storeId)
  const files = customFiles()
  files['sections/hero.liquid'] = `<div>\n{{ store.nope }}\n</div>\n` + files['sections/hero.liquid']
  files['templates/menu.liquid'] = '{% if %}'
  const r = await upload(a.storeId, a.token, { files })
  isError(t, r, 422, 'theme_invalid')
  const problems = r.body.details.problems as Array<{ file: string; line: number; code: string; message: string }>
  t.ok(problems.some((p) => p.file === 'sections/hero.liquid' && p.line === 2 && p.code === 'unknown_field'), `hero line 2: ${JSON.stringify(problems)}`)
  t.ok(problems.some((p) => p.file === 'templates/menu.liquid' && p.line === 1 && p.code === 'liquid_syntax'))
  const validated = await s.req('POST', '/themes/validate', { body: { files } })
  t.same(validated.body.problems, problems, 'the same problems as POST /themes/validate')
  t.same(themeRow(a.storeId), before, 'the previous upload stays, untouched')

  const missing = await upload(a.storeId, a.token, { files: { 'layout/theme.liquid': '{{ content_for_layout }}', 'assets/x.js': 'alert(1)' } })
  isError(t, missing, 422, 'theme_invalid')
  t.ok(missing.body.details.problems.some((p: { code: string; file: string }) => p.code === 'unknown_file' && p.file === 'assets/x.js'))
  t.ok(missing.body.details.problems.some((p: { code: string }) => p.code === 'missing_file'))
  t.same(themeRow(a.storeId), before)
})

t.test('size limits: per file and file count are 422, a body over the server limit 413', async (t) => {
  const a = createAccount(db)
  const big = { ...customFiles(), 'sections/big.liquid': `{% schema %}{"name": "Big"}{% endschema %}<p>${'x'.repeat(THEME_LIMITS.maxFileBytes)}</p>` }
  const r1 = await upload(a.storeId, a.token, { files: big })
  isError(t, r1, 422, 'theme_invalid', 'a file over maxFileBytes')
  t.ok(r1.body.details.problems.some((p: { code: string; file: string }) => p.code === 'too_large' && p.file === 'sections/big.liquid'))
  const many = { ...customFiles(), ...Object.fromEntries(Array.from({ length: THEME_LIMITS.maxFiles }, (_, i) => [`sections/s${i}.liquid`, '{% schema %}{"name": "S"}{% endschema %}'])) }
  const r2 = await upload(a.storeId, a.token, { files: many })
  isError(t, r2, 422, 'validation_failed', 'more than maxFiles files')
  const huge = { ...customFiles(), ...Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`sections/h${i}.liquid`, 'y'.repeat(250_000)])) }
  const r3 = await upload(a.storeId, a.token, { files: huge })
  isError(t, r3, 413, 'payload_too_large', 'a body over BODY_LIMIT_BYTES')
  t.notOk(themeRow(a.storeId), 'nothing stored')
})

t.test('another owner\'s store is 404; capabilities restaurants:read and restaurants:write', async (t) => {
  const a = createAccount(db)
  const b = createAccount(db)
  isError(t, await get(a.storeId, b.token), 404, 'not_found', 'GET another owner\'s')
  isError(t, await put(a.storeId, b.token, { template: 'market' }), 404, 'not_found', 'PUT another owner\'s')
  isError(t, await upload(a.storeId, b.token, { files: customFiles() }), 404, 'not_found', 'upload to another owner\'s')
  isError(t, await remove(a.storeId, b.token), 404, 'not_found', 'DELETE another owner\'s')
  t.notOk(themeRow(a.storeId))

  const reader = tokenFor(db, a.ownerId, ['restaurants:read'])
  t.equal((await get(a.storeId, reader)).status, 200, 'restaurants:read reads')
  isError(t, await put(a.storeId, reader, { template: 'market' }), 403, 'forbidden', 'PUT with a read-only token')
  isError(t, await upload(a.storeId, reader, { files: customFiles() }), 403, 'forbidden', 'upload with a read-only token')
  isError(t, await remove(a.storeId, reader), 403, 'forbidden', 'DELETE with a read-only token')
  isError(t, await get(a.storeId, tokenFor(db, a.ownerId, ['orders:read'])), 403, 'forbidden', 'GET without restaurants:read')
  t.notOk(themeRow(a.storeId))
})

t.test('deleting the custom theme goes back to the default builtin for the store type', async (t) => {
  const a = createAccount(db)
  await upload(a.storeId, a.token, { files: customFiles(), activate: true })
  const r = await remove(a.storeId, a.token)
  t.equal(r.status, 200)
  t.match(r.body, { template: 'classic', custom: null, fallback: false })
  t.equal(storeRow(a.storeId).template, 'classic')
  t.equal(builtinOf(storeThemeFor(svc, storeRow(a.storeId))), classic.compiled)
  t.equal((await remove(a.storeId, a.token)).status, 200, 'removing when there is none changes nothing')

  const owner = createOwner(db)
  const token = tokenFor(db, owner, ['*'])
  const shop = createStore(db, owner, { type: 'retail' })
  await upload(shop.id, token, { files: customFiles(), activate: true })
  t.match((await remove(shop.id, token)).body, { template: 'market', custom: null }, 'a goods store goes back to market')
  t.equal(storeRow(shop.id).template, 'market')

  await upload(a.storeId, a.token, { files: customFiles() })
  await put(a.storeId, a.token, { template: 'market' })
  t.match((await remove(a.storeId, a.token)).body, { template: 'market', custom: null }, 'a store not using custom keeps its choice')
})

t.test('a theme that fails while rendering falls back to the default theme, and the owner sees why', async (t) => {
  const a = createAccount(db)
  // Passes validation (the sample store is not called "Boom"), fails for a store that is.
  const files = customFiles()
  files['templates/home.liquid'] = `{% assign parts = store.name | split: "Boom" %}{% if parts.size > 1 %}{{ parts.nothing_here }}{% endif %}\n` + files['templates/home.liquid']
  t.equal((await upload(a.storeId, a.token, { files, activate: true })).status, 200)
  const st = storeThemeFor(svc, storeRow(a.storeId))
  t.match(st, { name: 'custom', problems: [] })

  const context = { ...sampleContext('home'), store: { ...(sampleContext('home').store as object), name: 'Big Boom Bar' } }
  const r = await draw(st, { template: 'home', context })
  t.equal(r.ok, false, 'the render failed and fell back')
  reportRenderProblems(svc, a.storeId, r.problems)
  const now = storeThemeFor(svc, storeRow(a.storeId))
  t.equal(builtinOf(now), classic.compiled, 'the next request gets the default theme at once')
  t.match(now, { name: 'custom', problems: [{ file: 'templates/home.liquid', line: 1, code: 'render_error', message: /parts\.nothing_here/ }] })

  svc.committer.flush()
  const version = themeRow(a.storeId)!.version
  const view = await get(a.storeId, a.token)
  t.match(view.body, { template: 'custom', fallback: true, custom: { valid: true }, problems: [{ file: 'templates/home.liquid', line: 1, code: 'render_error' }] })
  reportRenderProblems(svc, a.storeId, r.problems)
  svc.committer.flush()
  t.equal(themeRow(a.storeId)!.version, version, 'the same problems again write nothing')
  t.equal(builtinOf(storeThemeFor(svc, storeRow(a.storeId))), classic.compiled, 'still the fallback after the write (read back from the table)')

  const again = await put(a.storeId, a.token, { template: 'custom' })
  t.match(again.body, { template: 'custom', fallback: false, problems: [] }, 'an owner change puts the theme back in service')
  t.equal(storeThemeFor(svc, storeRow(a.storeId)).source.kind, 'custom')
})

t.test('a stored custom theme that no longer compiles falls back with its problems', async (t) => {
  const a = createAccount(db)
  // As if the reference changed after the upload: written past the upload validation.
  await svc.committer.write((d) => writeStoreTheme(d, a.storeId, 'classic', { template: 'custom', customFiles: { ...customFiles(), 'templates/cart.liquid': '{{ store.gone }}' } }))
  const view = await get(a.storeId, a.token)
  t.match(view.body, { template: 'custom', fallback: true, custom: { valid: false, problems: [{ file: 'templates/cart.liquid' }] } }, 'the owner sees it before any visitor')
  // Compiled by the theme pool with the first page: drawn by the default theme, the problems reported.
  const drawn = await draw(storeThemeFor(svc, storeRow(a.storeId)), { template: 'home', context: sampleContext('home') })
  t.equal(drawn.ok, false)
  t.match(drawn.problems, [{ file: 'templates/cart.liquid', line: 1, code: 'unknown_field' }])
  reportRenderProblems(svc, a.storeId, drawn.problems)
  const st = storeThemeFor(svc, storeRow(a.storeId))
  t.equal(builtinOf(st), classic.compiled)
  t.match(st.problems, [{ file: 'templates/cart.liquid', line: 1, code: 'unknown_field' }])
  t.match(view.body, { template: 'custom', fallback: true, custom: { valid: false, problems: [{ file: 'templates/cart.liquid' }] } })
  t.ok(view.body.problems.length > 0)
})

/** A zip archive of `files` (APPNOTE.TXT §4.3): deflated unless `stored`; `prefix` puts them in a folder. */
function zipOf(files: Record<string, string | Buffer>, opts: { prefix?: string; stored?: boolean } = {}): Buffer {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const [path, content] of Object.entries(files)) {
    const name = Buffer.from((opts.prefix ?? '') + path)
    const data = Buffer.isBuffer(content) ? content : Buffer.from(content)
    const packed = opts.stored ? data : deflateRawSync(data)
    const head = Buffer.alloc(30)
    head.writeUInt32LE(0x04034b50, 0); head.writeUInt16LE(20, 4); head.writeUInt16LE(opts.stored ? 0 : 8, 8)
    head.writeUInt32LE(crc32(data), 14); head.writeUInt32LE(packed.length, 18); head.writeUInt32LE(data.length, 22); head.writeUInt16LE(name.length, 26)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(20, 4); central.writeUInt16LE(20, 6); central.writeUInt16LE(opts.stored ? 0 : 8, 10)
    central.writeUInt32LE(crc32(data), 16); central.writeUInt32LE(packed.length, 20); central.writeUInt32LE(data.length, 24); central.writeUInt16LE(name.length, 28)
    central.writeUInt32LE(offset, 42)
    locals.push(head, name, packed)
    centrals.push(central, name)
    offset += head.length + name.length + packed.length
  }
  const dir = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0); end.writeUInt16LE(Object.keys(files).length, 8); end.writeUInt16LE(Object.keys(files).length, 10)
  end.writeUInt32LE(dir.length, 12); end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, dir, end])
}

const uploadZip = (id: number, token: string, zip: Buffer) =>
  s.req('PUT', path(id, '/custom'), { token, raw: zip, headers: { 'content-type': 'application/zip' } })

t.test('a custom theme may be uploaded as a zip archive, checked the same way', async (t) => {
  const a = createAccount(db)
  const r = await uploadZip(a.storeId, a.token, zipOf(customFiles('ZIP-MARK'), { prefix: 'my-theme/' }))
  t.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300))
  t.match(r.body, { template: 'classic', custom: { file_count: Object.keys(classic.files).length, valid: true } }, 'one top-level folder is removed')
  await put(a.storeId, a.token, { template: 'custom' })
  t.ok((await draw(storeThemeFor(svc, storeRow(a.storeId)), { template: 'home', context: sampleContext('home') })).html.includes('ZIP-MARK'))
  t.equal((await uploadZip(a.storeId, a.token, zipOf(customFiles('STORED-MARK'), { stored: true }))).status, 200, 'stored (not deflated) entries too')

  const before = themeRow(a.storeId)
  const broken = customFiles()
  broken['templates/menu.liquid'] = '{% if %}'
  const bad = await uploadZip(a.storeId, a.token, zipOf(broken))
  isError(t, bad, 422, 'theme_invalid', 'a broken theme in a zip')
  t.match(bad.body.details.problems, [{ file: 'templates/menu.liquid', line: 1, code: 'liquid_syntax' }])
  // Highly compressible: a small archive that would inflate past the per-file limit.
  const bomb = await uploadZip(a.storeId, a.token, zipOf({ ...customFiles(), 'sections/bomb.liquid': 'x'.repeat(THEME_LIMITS.maxFileBytes + 1) }))
  isError(t, bomb, 422, 'validation_failed', 'an entry over the per-file limit')
  t.ok(bomb.body.errors.files[0].includes('sections/bomb.liquid'))
  isError(t, await uploadZip(a.storeId, a.token, Buffer.from('not a zip at all, just some text to fill the buffer')), 422, 'validation_failed', 'not a zip')
  isError(t, await uploadZip(a.storeId, a.token, zipOf({ 'layout/theme.liquid': Buffer.from([0xff, 0xfe, 0x00]) })), 422, 'validation_failed', 'a file that is not UTF-8')
  isError(t, await s.req('PUT', path(a.storeId, '/custom'), { token: a.token, raw: zipOf(customFiles()), headers: { 'content-type': 'application/x-tar' } }), 415, 'unsupported_media_type', 'another archive type')
  t.same(themeRow(a.storeId), before, 'nothing stored by any refusal')
})

t.test('OpenAPI documents the theme routes, the zip body included', async (t) => {
  const doc = (await s.req('GET', '/openapi.json')).body
  const theme = doc.paths['/restaurants/{id}/theme']
  t.match(theme.get, { 'x-operation': 'stores.theme.get', 'x-required-capability': 'restaurants:read' })
  t.match(theme.put, { 'x-operation': 'stores.theme.update', 'x-required-capability': 'restaurants:write' })
  const custom = doc.paths['/restaurants/{id}/theme/custom']
  t.ok(custom.put.requestBody.content['application/json'] && custom.put.requestBody.content['application/zip'], 'JSON and zip bodies')
  t.match(custom.delete, { 'x-operation': 'stores.theme.custom.delete' })
})
