/**
 * The Liquid reference of store themes (issue 15 item 1): every object, field, filter, tag and
 * section setting type a theme may use. ONE structure drives the engine's allow-lists
 * (engine.ts), the strict validation (validate.ts), the dev MCP server's `get_liquid_reference`
 * and docs/themes.md (a unit test checks the doc lists all of it).
 */

/** A value type as a theme sees it. Money is integer minor units: format it with `| money`. */
export type FieldType = 'string' | 'integer' | 'number' | 'money' | 'boolean' | 'url' | 'datetime' | 'object' | 'array' | 'html'

export interface FieldRef {
  name: string
  type: FieldType
  description: string
  /** Fields of an object, or of each element of an array. Absent: the value has no checked shape. */
  fields?: readonly FieldRef[]
  /** True when the value may be nil (absent on this page, or not set). */
  nullable?: boolean
}

export interface ObjectRef extends FieldRef {
  /** Where the object is set; elsewhere it is nil (still defined, so strict mode accepts it). */
  availability: string
  /** Only in these files (by folder); absent: everywhere. */
  only?: readonly ('layout' | 'templates' | 'sections')[]
}

/** What a filter is applied to: the first word of its syntax (`{{ string | upcase }}`). */
const FILTER_INPUTS = ['string', 'number', 'money', 'datetime', 'array', 'array_or_string', 'value'] as const
export type FilterInput = (typeof FILTER_INPUTS)[number]

export interface FilterRef {
  name: string
  /** `liquid`: a standard Liquid filter (liquidjs built-in); `store`: added by this platform. */
  kind: 'liquid' | 'store'
  /** What it takes; a filter of text (`string`, `datetime`, `array_or_string`) gets an object as its JSON (engine.ts). */
  input: FilterInput
  syntax: string
  description: string
}

export interface TagRef {
  name: string
  kind: 'liquid' | 'store'
  syntax: string
  description: string
}

export interface SettingTypeRef {
  type: string
  description: string
  /** The JSON type of `default` and of the stored value; null: the setting holds no value. */
  value: 'string' | 'number' | 'boolean' | null
  /** Extra attributes the setting takes besides `type`, `id`, `label`, `default`, `info`. */
  attributes: readonly string[]
}

const f = (name: string, type: FieldType, description: string, extra: Partial<FieldRef> = {}): FieldRef => ({ name, type, description, ...extra })

const VARIATION = [
  f('id', 'integer', 'variation id'),
  f('name', 'string', 'e.g. "Large"'),
  f('price', 'money', 'price of the item with this variation, minor units'),
]
const EXTRA = [
  f('id', 'integer', 'extra id'),
  f('name', 'string', 'e.g. "Extra cheese"'),
  f('price', 'money', 'added price, minor units'),
]

/** Fields of a menu item, in `item`, `menu.items`, `category.items` and search results. */
export const ITEM_FIELDS: readonly FieldRef[] = [
  f('id', 'integer', 'item id'),
  f('name', 'string', 'item name'),
  f('description', 'string', 'description; empty string when none'),
  f('price', 'money', 'base price, minor units'),
  f('url', 'url', 'address of the item page'),
  f('image_url', 'url', 'the item\'s photo (at most 1200 px) when one was uploaded, else its first image address; nil when neither', { nullable: true }),
  f('thumb_url', 'url', 'the uploaded photo\'s 400 px thumbnail, or nil (served by this server: allowed by the page\'s img-src)', { nullable: true }),
  f('category_id', 'integer', 'its category, or nil', { nullable: true }),
  f('available', 'boolean', 'false while sold out (cannot be added to the cart)'),
  f('dietary', 'array', 'dietary flags, e.g. ["vegan", "gluten_free"] (restaurants)'),
  f('attributes', 'object', 'goods fields of goods stores (brand, size, …); empty for restaurants'),
  f('variations', 'array', 'choices of which one is picked (sizes, …)', { fields: VARIATION }),
  f('extras', 'array', 'optional add-ons', { fields: EXTRA }),
]

const CATEGORY_FIELDS: readonly FieldRef[] = [
  f('id', 'integer', 'category id'),
  f('name', 'string', 'category name'),
  f('url', 'url', 'address of the category on the menu page'),
  f('items', 'array', 'the category\'s items, in menu order', { fields: ITEM_FIELDS }),
]

const LINE_FIELDS: readonly FieldRef[] = [
  f('item_id', 'integer', 'the menu item'),
  f('name', 'string', 'item name'),
  f('quantity', 'integer', 'how many'),
  f('variation', 'string', 'chosen variation name, or nil', { nullable: true }),
  f('extras', 'array', 'names of the chosen extras'),
  f('unit_price', 'money', 'price of one, with variation and extras, minor units'),
  f('line_total', 'money', 'unit_price × quantity, minor units'),
]

const HOURS_FIELDS: readonly FieldRef[] = [
  f('day', 'string', 'mon … sun'),
  f('opens', 'string', '"HH:MM" local time'),
  f('closes', 'string', '"HH:MM" local time'),
]

const WEEK_FIELDS: readonly FieldRef[] = [
  f('day', 'string', 'mon … sun'),
  f('closed', 'boolean', 'closed all day'),
  f('all_day', 'boolean', 'open around the clock (00:00–24:00)'),
  f('text', 'string', '"Closed", "Open 24 hours" or the intervals, e.g. "09:00–14:00, 17:00–22:00"'),
]

const MODE_FIELDS: readonly FieldRef[] = [
  f('value', 'string', 'the mode, as posted in the checkout\'s `type` field, e.g. "delivery"'),
  f('label', 'string', 'its name for people, e.g. "On table"'),
  f('pay_note', 'string', 'where an order in this mode is paid, e.g. "Pay the driver when your order arrives."'),
  f('needs_table', 'boolean', 'the table-number field belongs to this mode'),
  f('needs_address', 'boolean', 'the delivery-address fields belong to this mode'),
]

export const OBJECTS: readonly ObjectRef[] = [
  {
    ...f('store', 'object', 'the store whose website this is', {
      fields: [
        f('id', 'integer', 'store id'),
        f('name', 'string', 'store name'),
        f('slug', 'string', 'the store\'s address name'),
        f('url', 'url', 'the store website\'s home address'),
        f('store_type', 'string', '"restaurant" or a goods type ("grocery", "retail", …)'),
        f('currency', 'string', 'ISO 4217 code, e.g. "EUR"'),
        f('city', 'string', 'city, or nil', { nullable: true }),
        f('address', 'string', 'street address, or nil', { nullable: true }),
        f('phone', 'string', 'public phone, or nil', { nullable: true }),
        f('is_open', 'boolean', 'open for orders now (hours, holidays, accepting-orders switch)'),
        f('next_opening', 'datetime', 'when it opens next while closed, else nil', { nullable: true }),
        f('hours', 'array', 'weekly opening hours', { fields: HOURS_FIELDS }),
        f('week', 'array', 'the week Monday first, closed days included (nil: no hours set, always open)', { fields: WEEK_FIELDS }),
        f('fulfillment_modes', 'array', 'modes this visitor may order in now, e.g. ["takeaway", "on-table"] for a guest; a signed-in customer also gets "delivery" and the store\'s other modes'),
        f('modes', 'array', 'the same modes with the checkout\'s words for each', { fields: MODE_FIELDS }),
        f('default_mode', 'string', 'the mode a checkout starts with: delivery when this visitor may order it, else takeaway, else the first needing no table; nil when there is none', { nullable: true }),
        f('account_url', 'url', 'the customer account page (sign in, saved addresses); sign-in is at account_url + "/login"'),
      ],
    }),
    availability: 'every file',
  },
  {
    ...f('menu', 'object', 'the whole active menu', {
      fields: [
        f('categories', 'array', 'categories with their items', { fields: CATEGORY_FIELDS }),
        f('items', 'array', 'every item, in menu order', { fields: ITEM_FIELDS }),
        f('url', 'url', 'address of the menu page'),
      ],
    }),
    availability: 'every file',
  },
  { ...f('categories', 'array', 'shorthand for menu.categories', { fields: CATEGORY_FIELDS }), availability: 'every file' },
  { ...f('item', 'object', 'the item of an item page', { fields: ITEM_FIELDS, nullable: true }), availability: 'the item template; nil elsewhere' },
  {
    ...f('cart', 'object', 'the cart the server priced (the browser keeps the draft)', {
      fields: [
        f('lines', 'array', 'cart lines', { fields: LINE_FIELDS }),
        f('item_count', 'integer', 'number of units in the cart'),
        f('subtotal', 'money', 'sum of the lines, minor units'),
        f('discount', 'money', 'coupon discount, minor units'),
        f('total', 'money', 'what the customer pays, minor units'),
        f('coupon', 'string', 'applied coupon code, or nil', { nullable: true }),
        f('min_age', 'integer', 'highest minimum buyer age of the cart\'s items, or nil: checkout then needs the `age_confirmed` box', { nullable: true }),
        f('url', 'url', 'address of the cart page'),
        f('checkout_url', 'url', 'address of the checkout page'),
      ],
    }),
    availability: 'every file (empty cart until the browser sends one)',
  },
  {
    ...f('order', 'object', 'the order of the order-status page', {
      nullable: true,
      fields: [
        f('id', 'integer', 'order id'),
        f('number', 'string', 'order number shown to the customer'),
        f('status', 'string', 'kitchen status: new, preparing, ready, delivered, completed, cancelled'),
        f('type', 'string', 'takeaway, table, delivery, …'),
        f('lines', 'array', 'ordered lines', { fields: LINE_FIELDS }),
        f('total', 'money', 'order total, minor units'),
        f('created_at', 'datetime', 'when it was placed (use `| date`)'),
        f('track_url', 'url', 'live tracking address'),
      ],
    }),
    availability: 'the order template; nil elsewhere',
  },
  {
    ...f('section', 'object', 'the section being rendered', {
      fields: [
        f('id', 'string', 'the section name (its file name without .liquid)'),
        f('settings', 'object', 'values of the settings the section\'s schema declares (owner\'s values over the defaults); only declared ids may be read'),
        f('blocks', 'array', 'the section\'s blocks', {
          fields: [
            f('id', 'string', 'block id'),
            f('type', 'string', 'a block type of the schema'),
            f('settings', 'object', 'values of the block type\'s settings'),
          ],
        }),
      ],
    }),
    availability: 'section files only',
    only: ['sections'],
  },
  { ...f('settings', 'object', 'theme-wide settings, declared by the `{% schema %}` of layout/theme.liquid; only declared ids may be read'), availability: 'every file' },
  {
    ...f('request', 'object', 'the request being answered', {
      fields: [
        f('path', 'string', 'path of the page, e.g. "/s/pizza-roma/menu"'),
        f('locale', 'string', 'BCP 47 language of the page, e.g. "en"'),
        f('nonce', 'string', 'CSP nonce of styles: put it on every inline <style> (`nonce="{{ request.nonce }}"`); themes run no scripts'),
        f('page_type', 'string', 'home, menu, item, cart, checkout, order, or the website\'s own account and login pages (shown in the layout)'),
      ],
    }),
    availability: 'every file',
  },
  {
    ...f('page', 'object', 'facts about the page being rendered', {
      fields: [
        f('title', 'string', 'page title (for <title>)'),
        f('description', 'string', 'meta description'),
        f('template', 'string', 'the template name: home, menu, item, cart, checkout or order; account and login for the website\'s own pages'),
      ],
    }),
    availability: 'every file',
  },
  {
    ...f('customer', 'object', 'the signed-in customer, or nil for a guest', {
      nullable: true,
      fields: [
        f('name', 'string', 'name, or nil', { nullable: true }),
        f('email', 'string', 'email, or nil', { nullable: true }),
        f('phone', 'string', 'phone, or nil', { nullable: true }),
        f('addresses', 'array', 'saved addresses, the default first', {
          fields: [
            f('id', 'integer', 'address id (the checkout form\'s `address_id`)'),
            f('label', 'string', 'e.g. "Home", or nil', { nullable: true }),
            f('address', 'string', 'the address'),
            f('is_default', 'boolean', 'the default address'),
            f('delivery', 'object', 'delivering there (docs/dispatch.md "Quotes"), or nil when the address has no position and the store has no zones', {
              nullable: true,
              fields: [
                f('deliverable', 'boolean', 'false outside the store\'s delivery zones (or without a position once it has zones)'),
                f('fee', 'money', 'the delivery fee, or nil when not deliverable', { nullable: true }),
                f('estimate', 'datetime', 'when an order placed now would arrive (in the store\'s time zone), or nil', { nullable: true }),
              ],
            }),
          ],
        }),
      ],
    }),
    availability: 'every file',
  },
  {
    ...f('form', 'object', 'what every form of the site needs', {
      fields: [
        f('csrf_token', 'string', 'put it in every POST form: `<input type="hidden" name="csrf" value="{{ form.csrf_token }}">` (posts without it are refused)'),
        f('errors', 'array', 'why the last post was refused', { fields: [f('field', 'string', 'the form field, or "" for the whole form'), f('message', 'string', 'what to tell the visitor')] }),
        f('values', 'object', 'the fields of the refused post, to fill the form again (`form.values.customer_name`); empty otherwise'),
      ],
    }),
    availability: 'every file',
  },
  { ...f('content_for_layout', 'html', 'the rendered template: output it once, in the layout'), availability: 'layout/theme.liquid only', only: ['layout'] },
]

/** Standard Liquid filters the engine keeps (liquidjs built-ins); every other built-in is removed. */
const LIQUID_FILTERS: ReadonlyArray<[string, string, string]> = [
  ['abs', 'number | abs', 'absolute value'],
  ['append', 'string | append: "x"', 'add text at the end'],
  ['at_least', 'number | at_least: 1', 'lower bound'],
  ['at_most', 'number | at_most: 9', 'upper bound'],
  ['capitalize', 'string | capitalize', 'first letter upper case'],
  ['ceil', 'number | ceil', 'round up'],
  ['compact', 'array | compact', 'drop nil entries'],
  ['concat', 'array | concat: other', 'join two arrays'],
  ['date', 'datetime | date: "%H:%M"', 'format a time (strftime); "now" is the current time'],
  ['default', 'value | default: "x"', 'fallback for nil, false or empty'],
  ['divided_by', 'number | divided_by: 2', 'division (integer division for integers)'],
  ['downcase', 'string | downcase', 'lower case'],
  ['escape', 'string | escape', 'HTML-escape (output is already escaped: use it inside attributes built with capture)'],
  ['escape_once', 'string | escape_once', 'HTML-escape without double-escaping entities'],
  ['first', 'array | first', 'first element'],
  ['floor', 'number | floor', 'round down'],
  ['join', 'array | join: ", "', 'join into a string'],
  ['last', 'array | last', 'last element'],
  ['lstrip', 'string | lstrip', 'trim leading space'],
  ['map', 'array | map: "name"', 'pluck a field'],
  ['minus', 'number | minus: 1', 'subtraction'],
  ['modulo', 'number | modulo: 2', 'remainder'],
  ['newline_to_br', 'string | newline_to_br', 'line breaks to <br>'],
  ['plus', 'number | plus: 1', 'addition'],
  ['prepend', 'string | prepend: "x"', 'add text at the start'],
  ['remove', 'string | remove: "x"', 'remove every occurrence'],
  ['replace', 'string | replace: "a", "b"', 'replace every occurrence'],
  ['reverse', 'array | reverse', 'reverse order'],
  ['round', 'number | round: 1', 'round'],
  ['rstrip', 'string | rstrip', 'trim trailing space'],
  ['size', 'array_or_string | size', 'length'],
  ['slice', 'array_or_string | slice: 0, 3', 'substring or sub-array'],
  ['sort', 'array | sort: "name"', 'sort'],
  ['sort_natural', 'array | sort_natural: "name"', 'case-insensitive sort'],
  ['split', 'string | split: ","', 'split into an array'],
  ['strip', 'string | strip', 'trim space'],
  ['strip_html', 'string | strip_html', 'remove tags'],
  ['strip_newlines', 'string | strip_newlines', 'remove line breaks'],
  ['times', 'number | times: 2', 'multiplication'],
  ['truncate', 'string | truncate: 80', 'shorten with an ellipsis'],
  ['truncatewords', 'string | truncatewords: 12', 'shorten to a number of words'],
  ['uniq', 'array | uniq', 'remove duplicates'],
  ['upcase', 'string | upcase', 'upper case'],
  ['url_decode', 'string | url_decode', 'decode a URL component'],
  ['url_encode', 'string | url_encode', 'encode a URL component'],
  ['where', 'array | where: "available", true', 'keep elements whose field equals a value'],
]

const STORE_FILTERS: ReadonlyArray<[string, string, string]> = [
  ['money', 'money | money', 'format minor units in the store\'s currency and locale, e.g. 1250 → "€12.50"'],
  ['money_without_currency', 'money | money_without_currency', 'format minor units as a plain amount, e.g. 1250 → "12.50"'],
  ['handleize', 'string | handleize', 'lower-case, dash-separated name for ids and anchors, e.g. "Hot Drinks" → "hot-drinks"'],
  ['pluralize', 'number | pluralize: "item", "items"', 'the singular or plural word for a count'],
  ['json', 'value | json', 'JSON text of a value (for data attributes; escaped like every output)'],
]

const filterRef = (kind: FilterRef['kind']) => ([name, syntax, description]: readonly [string, string, string]): FilterRef => {
  const input = syntax.slice(0, syntax.indexOf(' |')) as FilterInput
  if (!FILTER_INPUTS.includes(input)) throw new Error(`filter ${name}: the syntax starts with what it takes (${FILTER_INPUTS.join(', ')}), not "${input}"`)
  return { name, kind, input, syntax: `{{ ${syntax} }}`, description }
}

export const FILTERS: readonly FilterRef[] = [...LIQUID_FILTERS.map(filterRef('liquid')), ...STORE_FILTERS.map(filterRef('store'))]

/** Filters whose first argument names a field of each element (`map: "name"`): validation checks a literal one against UNSAFE_NAMES. */
export const FIELD_FILTERS: readonly string[] = ['map', 'where', 'sort', 'sort_natural']

/**
 * Names that are never store data (issue 31 item 4): JavaScript's prototype links and the methods
 * every object inherits. Read as a field they could reach a prototype or a function instead of data,
 * so validation refuses them as a field (`x.constructor`, `x["__proto__"]`), as the field of a
 * FIELD_FILTERS filter (`map: "constructor"`) and as a variable name, and the engine reads every one
 * of them as nil, also when the name is only known at render time (`map: some_variable`).
 */
export const UNSAFE_NAMES: readonly string[] = [
  'constructor', 'prototype', '__proto__', '__defineGetter__', '__defineSetter__', '__lookupGetter__', '__lookupSetter__',
  'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable', 'toString', 'toLocaleString', 'valueOf',
]

export const TAGS: readonly TagRef[] = [
  { name: 'if', kind: 'liquid', syntax: '{% if a %}…{% elsif b %}…{% else %}…{% endif %}', description: 'conditional (an unknown variable in a condition is false)' },
  { name: 'unless', kind: 'liquid', syntax: '{% unless a %}…{% endunless %}', description: 'negated conditional' },
  { name: 'case', kind: 'liquid', syntax: '{% case x %}{% when "a" %}…{% else %}…{% endcase %}', description: 'switch' },
  { name: 'for', kind: 'liquid', syntax: '{% for x in list limit: 4 %}…{% else %}…{% endfor %}', description: 'loop (`forloop.index`, `break`, `continue`)' },
  { name: 'break', kind: 'liquid', syntax: '{% break %}', description: 'leave a for loop' },
  { name: 'continue', kind: 'liquid', syntax: '{% continue %}', description: 'next iteration of a for loop' },
  { name: 'cycle', kind: 'liquid', syntax: '{% cycle "odd", "even" %}', description: 'alternate values in a loop' },
  { name: 'tablerow', kind: 'liquid', syntax: '{% tablerow x in list cols: 2 %}…{% endtablerow %}', description: 'table rows' },
  { name: 'assign', kind: 'liquid', syntax: '{% assign x = value | filter %}', description: 'set a variable' },
  { name: 'capture', kind: 'liquid', syntax: '{% capture x %}…{% endcapture %}', description: 'set a variable to rendered text' },
  { name: 'increment', kind: 'liquid', syntax: '{% increment n %}', description: 'counter' },
  { name: 'decrement', kind: 'liquid', syntax: '{% decrement n %}', description: 'counter' },
  { name: 'echo', kind: 'liquid', syntax: '{% echo x | filter %}', description: 'output inside a liquid tag' },
  { name: 'liquid', kind: 'liquid', syntax: '{% liquid\nassign x = 1\necho x\n%}', description: 'several tags in one block' },
  { name: 'comment', kind: 'liquid', syntax: '{% comment %}…{% endcomment %} or {% # note %}', description: 'comment' },
  { name: 'raw', kind: 'liquid', syntax: '{% raw %}{{ not parsed }}{% endraw %}', description: 'text that is not Liquid' },
  { name: 'section', kind: 'store', syntax: '{% section "hero" %}', description: 'render sections/hero.liquid with its settings (templates and the layout only; the name is a literal)' },
  { name: 'schema', kind: 'store', syntax: '{% schema %}{ "name": "Hero", "settings": [] }{% endschema %}', description: 'the JSON settings schema of a section (or, in the layout, of the theme settings); renders nothing' },
]

export const SETTING_TYPES: readonly SettingTypeRef[] = [
  { type: 'text', value: 'string', attributes: ['placeholder'], description: 'one line of text' },
  { type: 'textarea', value: 'string', attributes: ['placeholder'], description: 'several lines of text' },
  { type: 'number', value: 'number', attributes: ['placeholder'], description: 'a number' },
  { type: 'range', value: 'number', attributes: ['min', 'max', 'step', 'unit'], description: 'a number on a slider; `min`, `max` and `step` required, default within them and on a step' },
  { type: 'checkbox', value: 'boolean', attributes: [], description: 'on or off' },
  { type: 'select', value: 'string', attributes: ['options'], description: 'one of `options` ([{value, label}]) in a drop-down' },
  { type: 'radio', value: 'string', attributes: ['options'], description: 'one of `options` ([{value, label}]) as radio buttons' },
  { type: 'color', value: 'string', attributes: [], description: 'a colour "#rrggbb"' },
  { type: 'url', value: 'string', attributes: [], description: 'a link: a path starting with "/", or an https:// address' },
  { type: 'header', value: null, attributes: ['content'], description: 'a heading in the settings editor; no id, holds no value' },
]

/** The files of a theme. Templates are fixed; sections and their names are the theme's own. */
export const THEME_TEMPLATES = ['home', 'menu', 'item', 'cart', 'checkout', 'order'] as const
export type TemplateName = (typeof THEME_TEMPLATES)[number]

export const THEME_FILES = {
  layout: 'layout/theme.liquid: the page around every template; must output `{{ content_for_layout }}`; may declare the theme settings in a {% schema %}',
  templates: `templates/{${THEME_TEMPLATES.join(',')}}.liquid: one per page, built from {% section "name" %} tags (and plain markup)`,
  sections: 'sections/<name>.liquid: a reusable part with a {% schema %} declaring its settings, blocks and presets; name [a-z0-9_-]',
} as const

/** Limits of a theme upload and of rendering (the same numbers validate_theme and uploads use). */
export const THEME_LIMITS = {
  maxFiles: 200,
  maxTotalBytes: 1_000_000,
  maxFileBytes: 256_000,
  /** liquidjs `parseLimit`: characters parsed per parse() call. */
  parseLimit: 512_000,
  /** liquidjs `renderLimit`: milliseconds per render() call. */
  renderLimitMs: 1000,
  /** liquidjs `memoryLimit`: objects/characters a render may allocate. */
  memoryLimit: 20_000_000,
} as const

/** The whole reference, as `get_liquid_reference` answers it. */
export const LIQUID_REFERENCE = {
  engine: 'liquidjs 10, strict: an unknown object, field, filter or tag is an error; every output is HTML-escaped (the last filter `escape` or `json` does not escape twice)',
  files: THEME_FILES,
  templates: THEME_TEMPLATES,
  objects: OBJECTS,
  filters: FILTERS,
  tags: TAGS,
  setting_types: SETTING_TYPES,
  schema: {
    keys: ['name', 'tag', 'class', 'settings', 'blocks', 'max_blocks', 'presets'],
    setting: ['type', 'id', 'label', 'default', 'info', '…attributes of the type'],
    block: ['type', 'name', 'settings', 'limit'],
    preset: ['name', 'settings', 'blocks'],
  },
  limits: THEME_LIMITS,
  unsafe_names: UNSAFE_NAMES,
} as const
