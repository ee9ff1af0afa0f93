/**
 * The store website's editor (issue 34 item 12; docs/themes.md "Editing from the dashboard"): the
 * themes a store may use with the schemas of their settings and sections (for a settings form
 * generated from them), and a preview of the store's own website drawn with a theme and values that
 * are not saved. Both read only: choosing and saving stay `PUT /restaurants/{id}/theme`
 * (src/ops/web/store-theme.ts), whose checks the preview runs first, so a value the preview refuses is
 * one saving would refuse, with the same message.
 */
import { randomBytes } from 'node:crypto'
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { storeOf } from '../scope.ts'
import { ApiError } from '../../errors.ts'
import type { Services } from '../../services.ts'
import type { StoreRow } from '../../storage/stores.ts'
import { readStoreTheme } from '../../storage/store-themes.ts'
import { admitVisitor } from '../../auth/policy.ts'
import { BUILTIN_THEMES, builtinTheme } from '../../themes/builtin/index.ts'
import { sectionPages, type ThemeFiles } from '../../themes/compile.ts'
import type { ThemeOutline } from '../../themes/jobs.ts'
import { resolveSettings, type SectionSchema } from '../../themes/schema.ts'
import type { TemplateName } from '../../themes/reference.ts'
import { draftTheme, UpdateBody } from './store-theme.ts'
import { CUSTOM, chosenOf, customOutline, drawPage, valuesOf } from '../../themes/store-site.ts'
import { sitePaths, websiteContext, type PageInput } from './website.ts'
import { EMPTY_CART } from './website-cart.ts'
import { named } from '../schemas/named.ts'

const tag = 'Restaurants'

// ---- the themes a store may use, with their schemas ---------------------------------------------------

const settingSchema = {
  type: 'object', required: ['type'], additionalProperties: true,
  description: 'One setting as its theme declares it (docs/themes.md "Setting types"): `type`, `id`, `label`, `default`, `info`, and the attributes of its type (`min`, `max`, `step`, `unit`, `options`, `placeholder`, `content`)',
  properties: { type: { type: 'string' }, id: { type: 'string' }, label: { type: 'string' }, default: {}, info: { type: 'string' } },
}
const sectionSchema = {
  type: 'object', required: ['key', 'name', 'pages', 'settings', 'blocks'],
  properties: {
    key: { type: 'string', description: 'The section\'s file name (`sections/{key}.liquid`): the key of `sections` in `PUT …/theme`' },
    name: { type: 'string', description: 'What the editor calls it (the schema\'s `name`)' },
    pages: { type: 'array', items: { type: 'string' }, description: 'Pages that draw it (`home`, `menu`, `item`, `cart`, `checkout`, `order`), or `*` when the layout does (every page); empty when no page uses it' },
    settings: { type: 'array', items: settingSchema },
    blocks: { type: 'array', items: { type: 'object', required: ['type', 'name', 'settings'], properties: { type: { type: 'string' }, name: { type: 'string' }, limit: { type: 'integer' }, settings: { type: 'array', items: settingSchema } } } },
    max_blocks: { type: 'integer' },
  },
}
export const ThemeChoiceSchema = {
  type: 'object',
  required: ['key', 'title', 'description', 'builtin', 'active', 'usable', 'problems', 'settings', 'sections', 'values'],
  properties: {
    key: { type: 'string', description: '`classic`, `market` or `custom`: the `template` of `PUT …/theme`' },
    title: { type: 'string' },
    description: { type: 'string' },
    builtin: { type: 'boolean' },
    active: { type: 'boolean', description: 'The theme the store has chosen (visitors see it unless `GET …/theme` says `fallback`)' },
    usable: { type: 'boolean', description: 'False for an uploaded theme that does not compile (see `problems`): it cannot be chosen' },
    problems: { type: 'array', items: { type: 'object' } },
    settings: { type: 'array', items: settingSchema, description: 'The theme-wide settings (the layout\'s schema)' },
    sections: { type: 'array', items: sectionSchema, description: 'Every section with a schema: header first, footer last, the rest by name' },
    values: {
      type: 'object', required: ['settings', 'sections'],
      description: 'The values saved for this theme (values are kept per theme), defaults and presets filled in: what the form starts from',
      properties: { settings: { type: 'object' }, sections: { type: 'object' } },
    },
  },
}
named('ThemeChoice', ThemeChoiceSchema)

const ORDER: Record<string, number> = { header: -1, footer: 1 }
const byPlace = ([a]: [string, unknown], [b]: [string, unknown]) => (ORDER[a] ?? 0) - (ORDER[b] ?? 0) || a.localeCompare(b)

function sectionValues(schema: SectionSchema, saved: { settings?: Record<string, unknown>; blocks?: Array<{ type: string; settings?: Record<string, unknown> }> } | undefined) {
  const preset = schema.presets?.[0]
  const types = new Map((schema.blocks ?? []).map((b) => [b.type, b]))
  const blocks = (saved?.blocks ?? preset?.blocks ?? []).filter((b) => types.has(b.type))
  return {
    settings: resolveSettings(schema.settings, { ...preset?.settings, ...saved?.settings }),
    blocks: blocks.map((b) => ({ type: b.type, settings: resolveSettings(types.get(b.type)!.settings, b.settings) })),
  }
}

function choice(key: string, meta: { title: string; description: string }, outline: ThemeOutline | undefined, files: ThemeFiles, active: boolean, saved: ReturnType<typeof valuesOf>, problems: unknown[]) {
  const pages = sectionPages(files)
  const sections = outline ? [...outline.schemas].sort(byPlace) : []
  return {
    key, ...meta, builtin: key !== CUSTOM, active, usable: outline !== undefined, problems,
    settings: outline ? [...outline.themeSettings] : [],
    sections: sections.map(([name, s]) => ({
      key: name, name: s.name, pages: pages.get(name) ?? [], settings: s.settings ?? [],
      blocks: (s.blocks ?? []).map((b) => ({ type: b.type, name: b.name, settings: b.settings ?? [], ...(b.limit !== undefined ? { limit: b.limit } : {}) })),
      ...(s.max_blocks !== undefined ? { max_blocks: s.max_blocks } : {}),
    })),
    values: {
      settings: outline ? resolveSettings(outline.themeSettings, saved.settings) : {},
      sections: Object.fromEntries(sections.map(([name, s]) => [name, sectionValues(s, saved.sections?.[name])])),
    },
  }
}

/** Every theme the store may use: the built-in ones, then its uploaded theme when it has one. */
export async function themeChoices(svc: Services, store: StoreRow) {
  const rec = readStoreTheme(svc.db, store.id)
  const chosen = chosenOf(store, rec)
  const out = Object.entries(BUILTIN_THEMES).map(([key, meta]) => {
    const b = builtinTheme(key)!
    return choice(key, meta, b.compiled, b.files, chosen === key, valuesOf(rec, key), [])
  })
  if (rec?.customFiles) {
    const c = await customOutline(svc, store.id, rec)
    const files = Object.keys(rec.customFiles).length
    out.push(choice(CUSTOM, { title: 'Your theme', description: `Uploaded ${rec.customUploadedAt ?? ''}: ${files} file${files === 1 ? '' : 's'}.` }, c.outline, rec.customFiles, chosen === CUSTOM, valuesOf(rec, CUSTOM), c.problems))
  }
  return { data: out }
}

export const listStoreThemes = defineOp({
  id: 'stores.themes.list', tag, summary: 'The themes the store may use, with their settings and section schemas and the values saved for each',
  description: 'For a settings editor generated from the schemas (docs/themes.md "Editing from the dashboard"): every built-in theme and the store\'s uploaded theme (if any), each with its theme-wide settings, its sections (schema, blocks, which pages draw them) and the values saved for it with defaults and presets filled in. Values are kept per theme, so each theme\'s are its own. Change them with `PUT …/theme`; see them before saving with `POST …/theme/preview`.',
  access: { owner: 'restaurants:read' }, scope: ['store'],
  output: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: ThemeChoiceSchema } } },
  run: (ctx) => themeChoices(ctx.svc, storeOf(ctx)),
})

// ---- the preview ---------------------------------------------------------------------------------------

/** The website's pages a preview can draw (the order page needs an order). */
export const PREVIEW_PAGES = ['home', 'menu', 'item', 'cart', 'checkout'] as const

const PreviewBody = v.object({
  ...UpdateBody.entries,
  page: v.optional(v.picklist(PREVIEW_PAGES, `Use one of ${PREVIEW_PAGES.join(', ')}.`), 'home'),
  item_id: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
})

export const PreviewSchema = {
  type: 'object', required: ['html', 'style_nonce', 'template', 'page', 'fallback', 'problems'],
  properties: {
    html: { type: 'string', description: 'The page as the store\'s website would draw it once these values are saved (for a guest with an empty cart)' },
    style_nonce: { type: 'string', description: 'The nonce of the page\'s `<style>` tags: a page showing `html` allows `style-src \'nonce-…\'`' },
    template: { type: 'string', description: 'The theme drawn' },
    page: { type: 'string', enum: [...PREVIEW_PAGES] },
    fallback: { type: 'boolean', description: 'True when the uploaded theme failed to draw this page and the default built-in theme drew it instead (see `problems`)' },
    problems: { type: 'array', items: { type: 'object' } },
  },
}
named('ThemePreview', PreviewSchema)

const TEMPLATE: Record<(typeof PREVIEW_PAGES)[number], TemplateName> = { home: 'home', menu: 'menu', item: 'item', cart: 'cart', checkout: 'checkout' }

export const previewStoreTheme = defineOp({
  id: 'stores.theme.preview', tag, summary: 'Draw a page of the store\'s website with a theme and values that are not saved',
  description: 'Body: what `PUT …/theme` takes (`template`, `settings`, `sections`), checked the same way (422 `validation_failed` naming the field, e.g. `sections.hero.settings.padding`), plus `page` (`home`, `menu`, `item`, `cart`, `checkout`; default `home`) and `item_id` for the item page (default: the first item). Answers the page as visitors would see it once saved, merged over the values saved for that theme; nothing is written, published or recorded (an uploaded theme that fails here is not taken out of service). The dashboard shows it in a frame through its own address, `POST {site_url}/dashboard/stores/{id}/theme-preview` (docs/themes.md "Editing from the dashboard").',
  access: { owner: 'restaurants:read', session: true }, scope: ['store'], input: PreviewBody, output: PreviewSchema,
  run: async (ctx, { page, item_id, ...update }) => {
    const { svc } = ctx
    const store = storeOf(ctx)
    const { name, theme } = await draftTheme(svc, store, update)
    const paths = sitePaths(svc, store)
    let itemId: number | undefined
    let title = store.title
    if (page === 'item') {
      const items = svc.stores.menu(store.id).items
      const item = item_id === undefined ? items[0] : items.find((i) => i.id === item_id)
      if (!item) throw new ApiError('validation_failed', undefined, { item_id: [item_id === undefined ? 'The menu has no items yet.' : 'This item is not on the store\'s menu.'] })
      itemId = item.id
      title = item.name
    } else if (page !== 'home') title = page[0]!.toUpperCase() + page.slice(1)
    const nonce = randomBytes(16).toString('base64')
    const input: PageInput = {
      template: TEMPLATE[page], pageType: page, title, nonce,
      path: page === 'item' ? paths.item(itemId!) : page === 'home' ? paths.home : paths[page],
      ...(itemId !== undefined ? { itemId } : {}),
    }
    // A guest with an empty cart: the owner's own cookies and sign-ins are not the visitor's.
    const visitor = { guest: admitVisitor(svc, store), csrf: 'preview', cart: EMPTY_CART, customer: null }
    const context = websiteContext(svc, store, visitor, input)
    // Drawn like a page of the site, on the owners' share of the theme pool (a preview never takes a
    // visitor's place); a failure is shown to the owner here, never recorded.
    const r = await drawPage(svc, theme, { template: input.template, context, sections: theme.sections, settings: theme.settings }, 'owner')
    return { html: r.html, style_nonce: nonce, template: name, page, fallback: !r.ok, problems: r.problems }
  },
})

export const themeEditorOps = [listStoreThemes, previewStoreTheme]
