/**
 * The one Liquid engine of store themes (issue 15 item 1): liquidjs 10, strict about unknown
 * filters and variables, every output HTML-escaped, no file system (templates come only from the
 * theme's own files held in memory), and liquidjs' DoS limits on parse size, render time and
 * allocation. Its filters and tags are exactly the reference's (reference.ts): every other
 * built-in is removed, so strict parsing rejects it.
 *
 * liquidjs (about 50 ms to load) is loaded when the first theme is compiled or rendered, not at
 * start: it is CommonJS, so it is required synchronously then (`liquidjs()`), and the engine and its
 * tag classes are built on that first use (`engine()`).
 */
import { createRequire } from 'node:module'
import type { Liquid, Context, Emitter, TagToken, TopLevelToken, Template, FilterImplOptions } from 'liquidjs'
import { FILTERS, TAGS, THEME_LIMITS, UNSAFE_NAMES } from './reference.ts'

/** HTML the engine made itself (the rendered template given to the layout): output as it is. */
export class SafeHtml {
  constructor(readonly html: string) {}
  toString(): string { return this.html }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ENTITIES[c]!)

/** Applied to every `{{ }}` output (liquidjs `outputEscape`). A function is never output (its source text): nil. */
function escapeOutput(v: unknown): string {
  if (v instanceof SafeHtml) return v.html
  if (v === null || v === undefined || typeof v === 'function') return ''
  return escapeHtml(typeof v === 'object' ? JSON.stringify(v) : String(v))
}

/** What the `section` tag needs at render time: the theme's parsed sections and their values. */
export interface SectionRuntime {
  /** Section name → parsed template. */
  sections: ReadonlyMap<string, Template[]>
  /** Section name → the `section` object (id, settings resolved over defaults, blocks). */
  objects: ReadonlyMap<string, Record<string, unknown>>
}

export const SECTION_REGISTER = 'store-theme-sections'

let liquidModule: typeof import('liquidjs') | null = null
/** The liquidjs module, loaded on first use. */
export const liquidjs = (): typeof import('liquidjs') => (liquidModule ??= createRequire(import.meta.url)('liquidjs') as typeof import('liquidjs'))

/** The two tags of our own; classes made on first use, as their base class comes from liquidjs. */
function ownTags({ Tag }: typeof import('liquidjs')) {
  /** `{% section "name" %}`: renders sections/name.liquid with `section` set (names are literals, so they validate statically). */
  class SectionTag extends Tag {
    readonly section: string
    constructor(token: TagToken, remain: TopLevelToken[], liquid: Liquid) {
      super(token, remain, liquid)
      const m = /^\s*(?:"([a-z0-9][a-z0-9_-]*)"|'([a-z0-9][a-z0-9_-]*)')\s*$/.exec(token.args)
      if (!m) throw new Error('section needs a quoted section name, e.g. {% section "hero" %}')
      this.section = (m[1] ?? m[2])!
    }

    * render(ctx: Context, emitter: Emitter): Generator<unknown, void, unknown> {
      const rt = ctx.getRegister<SectionRuntime | undefined>(SECTION_REGISTER)
      const tpl = rt?.sections.get(this.section)
      if (!rt || !tpl) throw new Error(`section "${this.section}" does not exist (sections/${this.section}.liquid)`)
      ctx.push({ section: rt.objects.get(this.section) ?? { id: this.section, settings: {}, blocks: [] } })
      try {
        yield this.liquid.renderer.renderTemplates(tpl, ctx, emitter)
      } catch (err) {
        // Render errors of liquidjs carry a line but not always the file: name the section.
        if (err && typeof err === 'object' && !('themeFile' in err)) Object.defineProperty(err, 'themeFile', { value: `sections/${this.section}.liquid` })
        throw err
      } finally {
        ctx.pop()
      }
    }
  }

  /** `{% schema %}…{% endschema %}`: data for the settings editor (schema.ts reads it), renders nothing. */
  class SchemaTag extends Tag {
    constructor(token: TagToken, remain: TopLevelToken[], liquid: Liquid) {
      super(token, remain, liquid)
      while (remain.length) {
        const t = remain.shift()!
        if ((t as TagToken).name === 'endschema') return
      }
      throw new Error(`tag ${token.getText()} not closed`)
    }

    render(): void {}
  }
  return { SectionTag, SchemaTag }
}

const currencyFormat = new Map<string, Intl.NumberFormat>()
/** Minor units → text in the currency's own decimals (EUR 1250 → €12.50, JPY 1250 → ¥1,250). */
function formatMoney(minor: unknown, currency: unknown, withCurrency: boolean): string {
  const n = typeof minor === 'number' ? minor : Number(minor)
  if (!Number.isFinite(n)) return ''
  const cur = typeof currency === 'string' && /^[A-Z]{3}$/.test(currency) ? currency : 'EUR'
  const key = `${cur}:${withCurrency}`
  let fmt = currencyFormat.get(key)
  if (!fmt) {
    let digits = 2
    try { digits = new Intl.NumberFormat('en', { style: 'currency', currency: cur }).resolvedOptions().maximumFractionDigits ?? 2 } catch { /* unknown code: two decimals */ }
    fmt = withCurrency
      ? new Intl.NumberFormat('en', { style: 'currency', currency: cur, minimumFractionDigits: digits, maximumFractionDigits: digits })
      : new Intl.NumberFormat('en', { minimumFractionDigits: digits, maximumFractionDigits: digits, useGrouping: false })
    currencyFormat.set(key, fmt)
  }
  return fmt.format(n / 10 ** fmt.resolvedOptions().maximumFractionDigits!)
}

const UNSAFE: ReadonlySet<string> = new Set(UNSAFE_NAMES)
/** A prototype object (`X.prototype`): its `constructor` points back at it. */
function isPrototype(v: object): boolean {
  const c: unknown = Object.hasOwn(v, 'constructor') ? (v as { constructor: unknown }).constructor : undefined
  return typeof c === 'function' && c.prototype === v
}

/**
 * The context every theme renders in (issue 31 item 4). Every property read of a render goes through
 * `readProperty` — variable paths, and the fields `map`, `sort`, `sort_natural` and `where` read from
 * each element (through the context, or a context it spawns) — so this is the one place that keeps
 * prototypes and functions out: an UNSAFE_NAMES key reads nil, and so does a value that is a
 * function (not called either) or a prototype. liquidjs' `ownPropertyOnly` already hides inherited
 * members of plain data, but not of its own drops (`forloop.toString`), and it calls whatever
 * function it finds.
 * Nil is null, not undefined: a name only known at render time (`map: some_variable`) gives an
 * empty value, not strict mode's "undefined variable" (validation refuses the literal names).
 */
function themeContextClass(L: typeof import('liquidjs')) {
  return class ThemeContext extends L.Context {
    override readProperty(obj: Parameters<Context['readProperty']>[0], key: Parameters<Context['readProperty']>[1]): unknown {
      const k: unknown = L.toValue(key)
      if (typeof k === 'string' && UNSAFE.has(k)) return null
      // A function in the data is not called (liquidjs calls what it finds; only its drops have methods).
      if (obj !== null && typeof obj === 'object' && !(obj instanceof L.Drop) && (typeof k === 'string' || typeof k === 'number') &&
        Object.hasOwn(obj, k) && typeof (obj as Record<string | number, unknown>)[k] === 'function') return null
      const v: unknown = super.readProperty(obj, key)
      if (typeof v === 'function' || (v !== null && typeof v === 'object' && isPrototype(v))) return null
      return v
    }

    /** `where` evaluates its field in a spawned context: the same reads there. */
    override spawn(scope = {}): Context {
      return Object.setPrototypeOf(super.spawn(scope), ThemeContext.prototype) as Context
    }
  }
}

let contextClass: ReturnType<typeof themeContextClass> | null = null
/**
 * A render context of the theme engine over `scope` (render.ts renders every page in one);
 * `renderLimitMs` replaces the engine's per-call render limit (a theme job's remaining budget).
 */
export function themeContext(scope: Record<string, unknown>, renderLimitMs?: number): Context {
  const liquid = engine()
  contextClass ??= themeContextClass(liquidjs())
  return new contextClass(scope, liquid.options, { sync: true, ...(renderLimitMs === undefined ? {} : { renderLimit: renderLimitMs }) }, { liquid })
}

/**
 * A value as a filter of text reads it (issue 31 item 4): a data object is its JSON, as `{{ }}`
 * prints it, never the "[object Object]" of its prototype's `toString`; a list gives each element
 * so; a drop (`forloop`) is its own text, and other objects (a date) stay what the filter expects.
 */
function asText(v: unknown): unknown {
  const x = liquidjs().toValue(v)
  if (Array.isArray(x)) return x.map(asText)
  if (x === null || typeof x !== 'object') return x
  const proto: unknown = Object.getPrototypeOf(x)
  return proto === Object.prototype || proto === null ? JSON.stringify(x) : x
}
const text = (v: unknown): string => String(asText(v) ?? '')

type FilterThis = { context: Context }
const STORE_FILTERS: Record<string, FilterImplOptions> = {
  money(this: FilterThis, v: unknown) { return formatMoney(v, this.context.getSync(['store', 'currency']), true) },
  money_without_currency(this: FilterThis, v: unknown) { return formatMoney(v, this.context.getSync(['store', 'currency']), false) },
  handleize(v: unknown) { return text(v).toLowerCase().normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') },
  pluralize(v: unknown, one: unknown, many: unknown) { return Number(v) === 1 ? text(one) : text(many) },
  json(v: unknown) { return JSON.stringify(v ?? null) },
}

function buildEngine(): Liquid {
  const L = liquidjs()
  const { SectionTag, SchemaTag } = ownTags(L)
  const liquid = new L.Liquid({
    strictFilters: true,
    strictVariables: true,
    // An undefined value in `if`/`unless` or `| default` is false/nil rather than an error: themes
    // test optional fields that way. Everywhere else an unknown variable is an error.
    lenientIf: true,
    ownPropertyOnly: true,
    // `date` formats a time in the offset it was written with: the server hands themes the store's
    // times in the store's time zone (`store.next_opening`), never in the server's own.
    preserveTimezones: true,
    outputEscape: escapeOutput,
    // An empty in-memory map: no template may ever reach the file system.
    templates: {},
    parseLimit: THEME_LIMITS.parseLimit,
    renderLimit: THEME_LIMITS.renderLimitMs,
    memoryLimit: THEME_LIMITS.memoryLimit,
    cache: false,
  })
  const allowedFilters = new Set(FILTERS.filter((x) => x.kind === 'liquid').map((x) => x.name))
  for (const name of Object.keys(liquid.filters)) if (!allowedFilters.has(name)) delete liquid.filters[name]
  // `escape` as the last filter is the author escaping on purpose: do not escape the result twice.
  for (const name of ['escape', 'escape_once']) {
    const impl = liquid.filters[name]
    const handler = typeof impl === 'function' ? impl : impl!.handler
    liquid.registerFilter(name, { handler, raw: true })
  }
  // Filters of text (and `join`, text of a list's elements) get objects as their JSON (asText); a
  // list given to an `array_or_string` filter stays a list.
  for (const f of FILTERS) {
    const list = f.input === 'array_or_string'
    if (f.kind !== 'liquid' || !(list || f.input === 'string' || f.input === 'datetime' || f.name === 'join')) continue
    const impl = liquid.filters[f.name]!
    const handler = typeof impl === 'function' ? impl : impl.handler
    liquid.registerFilter(f.name, {
      handler(this: ThisParameterType<typeof handler>, v: unknown, ...args: unknown[]) { return handler.call(this, list && Array.isArray(v) ? v : asText(v), ...args.map(asText)) },
      raw: typeof impl !== 'function' && impl.raw === true,
    })
  }
  for (const [name, impl] of Object.entries(STORE_FILTERS)) liquid.registerFilter(name, impl)
  const allowedTags = new Set([...TAGS.filter((x) => x.kind === 'liquid').map((x) => x.name), '#'])
  for (const name of Object.keys(liquid.tags)) if (!allowedTags.has(name)) delete liquid.tags[name]
  liquid.registerTag('section', SectionTag)
  liquid.registerTag('schema', SchemaTag)
  return liquid
}

let shared: Liquid | null = null
/** The shared engine, built on first use: stateless between renders (per-render state travels in the context's registers). */
export const engine = (): Liquid => (shared ??= buildEngine())
