// The dashboard's shared core (docs/dashboard.md "How the script is organised"): the element
// helper, the messages line, the session's API token, the API and its sockets, and the store picker.
// Every view module imports from here, so there is one token, one store and one way to show errors.
// Never sets inline styles (the page's CSP has no 'unsafe-inline'): classes and SVG attributes only.
// TypeScript (src/browser/tsconfig.json), compiled to the module the page loads by tools/build.mjs.

/**
 * An answer of the owner API whose shape this dashboard does not declare. The shapes shared with the
 * server — the order view and the socket frames — are the server's own types (src/ws/order-frames.ts).
 */
export type Json = any
/** A store as `GET /restaurants` lists it (the fields the dashboard reads everywhere). */
export interface Store { id: number; title: string; [field: string]: Json }
/** An API refusal: the message, the status and the §7 envelope (`errors` for a 422). */
export type ApiFailure = Error & { status?: number; body?: { errors?: Record<string, string | string[]> } | null }

export const body = document.body
export const SITE = body.dataset.site ?? ''
export const API = body.dataset.api ?? ''
export const PAGE = body.dataset.page ?? ''
export const CSRF = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')!.content
export const view = document.getElementById('view')!
export const notice = document.getElementById('notice')!
export const problem = document.getElementById('problem')!

// ---- small helpers ----

/** What `h` takes besides attributes: `text`, `on` (event listeners) and `data` (dataset). */
export type Props = Record<string, unknown> & { text?: unknown; on?: Record<string, (ev: Event) => unknown>; data?: Record<string, unknown> }
export type Child = Node | string | number | null | undefined | false | Child[]
/** An element: `props` are attributes, plus `text`, `class`, `on` (events) and `data`. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props | null, ...children: Child[]): HTMLElementTagNameMap[K]
export function h(tag: string, props?: Props | null, ...children: Child[]): HTMLElement
export function h(tag: string, props?: Props | null, ...children: Child[]): Element {
  const svg = ['svg', 'g', 'circle', 'rect', 'line', 'polyline', 'path', 'text', 'title'].includes(tag)
  const el = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag)
  for (const [k, v] of Object.entries(props || {})) {
    if (v == null || v === false) continue
    if (k === 'text') el.textContent = String(v)
    else if (k === 'on') for (const [ev, fn] of Object.entries(v as NonNullable<Props['on']>)) el.addEventListener(ev, fn)
    else if (k === 'data') for (const [dk, dv] of Object.entries(v as Record<string, unknown>)) (el as HTMLElement).dataset[dk] = String(dv)
    else if (k === 'style') throw new Error('no inline styles (CSP)')
    else el.setAttribute(k, v === true ? '' : String(v))
  }
  for (const c of (children as unknown[]).flat(Infinity) as Array<Node | string | number | null | undefined | false>) if (c != null && c !== false) el.append(c instanceof Node ? c : document.createTextNode(String(c)))
  return el
}
/** The chosen store's currency (ISO 4217; loadStores reads it): every amount the dashboard shows is in it. */
let currency = 'USD'
const formats = new Map<string, Intl.NumberFormat>()
/** An amount to show, in `cur` (the chosen store's currency by default), written the browser's way: `$12.50`, `12,50 €`. */
export function money(n: unknown, cur: string = currency): string {
  if (typeof n !== 'number') return ''
  let f = formats.get(cur)
  if (!f) {
    try { f = new Intl.NumberFormat(undefined, { style: 'currency', currency: cur }) } catch { return `${n.toFixed(2)} ${cur}` }
    formats.set(cur, f)
  }
  return f.format(n)
}
/** An amount as a form field or a data attribute holds it: `12.50`, no currency. */
export const amount = (n: unknown): string => (typeof n === 'number' ? n.toFixed(2) : '')
export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : '')
export const time = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : '')
export function say(msg: string): void { problem.textContent = ''; notice.textContent = msg; placeMessages() }
export function fail(err: unknown): void {
  notice.textContent = ''
  placeMessages()
  const e = err as ApiFailure | null
  const message = e && e.message ? e.message : String(err)
  // Every 422 names its fields (docs/errors.md); a rule about the whole request repeats the message: said once.
  const fields = Object.entries((e && e.body && e.body.errors) || {})
    .map(([k, v]): [string, string[]] => [k, ([] as string[]).concat(v).filter((m) => m !== message)]).filter(([, v]) => v.length > 0)
  problem.textContent = message + (fields.length ? ' ' + fields.map(([k, v]) => `${k}: ${v.join(' ')}`).join('; ') : '')
}
/** The event an action gets: a form's submit (its target is the form), or a click (its target is ignored), or none when called directly. */
export interface ActEvent extends Event { target: HTMLFormElement }
/** Run an action from a button or form: errors are shown, never thrown into the void. */
export const act = (fn: (ev: ActEvent) => unknown) => async (ev?: Event): Promise<void> => {
  if (ev && ev.preventDefault) ev.preventDefault()
  // The outermost action names where its messages go (an action calling another keeps its own).
  const outer = acting === 0
  if (outer) aimMessages(ev)
  acting++
  let ok = false
  try { await fn(ev as ActEvent); ok = true } catch (err) { fail(err) } finally {
    acting--
    // The action may have redrawn what it came from: the messages follow it to its new copy.
    if (outer) { placeMessages(); aim = NO_AIM }
  }
  // Whatever shows the account's state (the setup checklist) may look again.
  if (ok && outer) document.dispatchEvent(new Event('dashboard:changed'))
}

// ---- result messages next to what they are about (issue 34 item 16) ----

/**
 * The notice and alert lines are moved next to what the action came from: into its form, into its
 * row's last cell, or its card; after a redraw, into the copy of that form or row the page drew
 * (found by its id or data attributes, or a form by its place among the page's forms). Without an
 * action (a live frame), or when nothing of it is left on screen, they go above the page's content,
 * never to the foot of a long page.
 */
const HOLDERS = 'form, tr, li.order, dialog, .card, section'
let acting = 0
interface Aim { el: Element | null; selectors: string[]; heading: string; form: number }
const NO_AIM: Aim = { el: null, selectors: [], heading: '', form: -1 }
let aim: Aim = NO_AIM
/** A form's own name: its heading, legend or aria-label (the same on the copy a redraw makes). */
const headingOf = (f: Element): string => f.getAttribute('aria-label') || f.querySelector('h2, h3, legend')?.textContent || ''

const cssValue = (s: string): string => s.replace(/["\\]/g, '\\$&')
/** Selectors that find `el`, or its nearest named ancestor, again after the page is redrawn. */
function selectorsOf(el: Element): string[] {
  const out: string[] = []
  for (let e: Element | null = el; e && e !== view; e = e.parentElement) {
    if (e.id && e !== notice && e !== problem) out.push(`#${CSS.escape(e.id)}`)
    const data = [...e.attributes].find((a) => a.name.startsWith('data-') && a.value !== '')
    if (data) out.push(`${e.tagName.toLowerCase()}[${data.name}="${cssValue(data.value)}"]`)
  }
  return out
}
function aimMessages(ev?: Event): void {
  const from = ev ? (ev.target instanceof HTMLFormElement ? ev.target : ev.currentTarget instanceof Element ? ev.currentTarget : null) : null
  const el = from ? from.closest(HOLDERS) : null
  const form = el instanceof HTMLFormElement
  aim = { el, selectors: el ? selectorsOf(el) : [], heading: form ? headingOf(el) : '', form: form ? [...view.querySelectorAll('form')].indexOf(el) : -1 }
}
const shown = (el: Element | null | undefined): el is Element => !!el && el.isConnected && (el as HTMLElement).getClientRects().length > 0 && !el.closest('[hidden], dialog:not([open])')
function holder(): Element | null {
  if (shown(aim.el)) return aim.el
  for (const sel of aim.selectors) { const el = document.querySelector(sel); if (shown(el)) return el }
  const forms = [...view.querySelectorAll('form')]
  const named = aim.heading ? forms.find((f) => shown(f) && headingOf(f) === aim.heading) : undefined
  if (named) return named
  if (aim.form >= 0 && !aim.heading && shown(forms[aim.form])) return forms[aim.form]!
  return null
}
/** Puts the two lines where they belong now (see above). */
// A redraw that takes away the form or row holding the lines (a dialog drawn anew, a list redrawn)
// would take the lines with it: they go back above the content, so the page always has them.
new MutationObserver(() => {
  if (!notice.isConnected || !problem.isConnected) view.before(notice, problem)
}).observe(view.parentElement ?? body, { childList: true, subtree: true })
function placeMessages(): void {
  const at = aim.el ? holder() : null
  if (!at) { if (view.previousElementSibling !== problem || problem.previousElementSibling !== notice) view.before(notice, problem); return }
  const into = at instanceof HTMLTableRowElement ? at.lastElementChild ?? at : at
  if (problem.parentElement !== into || into.lastElementChild !== problem) into.append(notice, problem)
}

// ---- copying a secret shown once ----

/** A button that copies `value` to the clipboard; where the browser refuses, it selects `source` for Ctrl+C. */
export function copyButton(value: string, what: string, source?: () => Element | null): HTMLButtonElement {
  const btn = h('button', { type: 'button', class: 'copy', 'aria-label': `Copy ${what}`, text: 'Copy' })
  btn.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(value)
      btn.textContent = 'Copied'
      btn.setAttribute('aria-label', `Copied ${what}`)
    } catch {
      const el = source ? source() : null
      if (el) getSelection()?.selectAllChildren(el)
      btn.textContent = 'Selected: press Ctrl+C'
    }
  })
  return btn
}
let tables = 0
/**
 * A table in a box that scrolls sideways on a narrow screen: the box is focusable and named (issue 34
 * item 9: a keyboard cannot scroll a region it cannot focus). Numbered, so each region's name is its
 * own; not after the columns, whose words would also name the box (a "Name" column, a "Name" field).
 */
export function table(head: readonly string[], rows: Child[]): HTMLElement {
  return h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': `Table ${++tables}, scrolls sideways` }, h('table', {},
    h('thead', {}, h('tr', {}, head.map((c) => h('th', { scope: 'col', class: /^(Total|Price|Revenue|Orders|Uses|Attempts|Quantity)$/.test(c) ? 'num' : null, text: c })))),
    h('tbody', {}, rows)))
}
/** A form's fields as text (a file input, the Menu page's photo, is read by its own form: menu.ts). */
export const formData = (form: HTMLFormElement): Record<string, string> => Object.fromEntries([...new FormData(form).entries()].map(([k, v]) => [k, String(v)]))

// ---- the session's API token and the API ----

let token: string | null = null
let tokenExpires = 0
let tokenPending: Promise<string> | null = null

/** A token of this session, renewed a minute before it expires (docs/dashboard.md "Signing in"). */
export async function apiToken(fresh = false): Promise<string> {
  if (!fresh && token && Date.now() < tokenExpires - 60_000) return token
  if (!tokenPending) {
    tokenPending = (async () => {
      const res = await fetch(`${SITE}/dashboard/api-token`, { method: 'POST', credentials: 'same-origin', headers: { 'X-CSRF-Token': CSRF, Accept: 'application/json' } })
      if (res.status === 401 || res.redirected) { location.assign(`${SITE}/login?next=${encodeURIComponent(location.pathname + location.search)}`); throw new Error('Signed out.') }
      if (!res.ok) throw new Error(`Could not get an API token (${res.status}).`)
      const t = await res.json() as { token: string; expires_at: string }
      token = t.token
      tokenExpires = Date.parse(t.expires_at)
      return token
    })().finally(() => { tokenPending = null })
  }
  return tokenPending
}

/** Call the owner API; a 401 (token ended) is retried once with a fresh token. */
export async function api(method: string, path: string, payload?: unknown, retried = false): Promise<Json> {
  const t = await apiToken(retried)
  const headers: Record<string, string> = { Authorization: `Bearer ${t}`, Accept: 'application/json' }
  if (payload !== undefined) headers['Content-Type'] = 'application/json'
  const res = await fetch(API + path, { method, headers, body: payload === undefined ? undefined : JSON.stringify(payload) })
  if (res.status === 401 && !retried) return api(method, path, payload, true)
  if (res.status === 204) return null
  const json = await res.json().catch(() => null) as Json
  if (!res.ok) throw Object.assign(new Error((json && json.message) || `HTTP ${res.status}`), { status: res.status, body: json })
  return json
}

/** A socket of the API with the session's token, reconnecting with a fresh one when it ends. */
export function liveSocket<F>(path: string, onFrame: (frame: F) => void, onState: (up: boolean) => void): { close(): void; send(frame: unknown): void } {
  let closedByUs = false
  let ws: WebSocket | null = null
  let delay = 500
  const open = async () => {
    let t
    try { t = await apiToken() } catch (err) { fail(err); return }
    const url = new URL(`${API}${path}`, location.href)
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
    url.searchParams.set('token', t)
    ws = new WebSocket(url)
    ws.onopen = () => { delay = 500; onState(true) }
    ws.onmessage = (m: MessageEvent<string>) => { try { onFrame(JSON.parse(m.data) as F) } catch (err) { fail(err) } }
    ws.onclose = (ev) => {
      onState(false)
      if (closedByUs) return
      // 4001: the token ended (expired or revoked): reconnect with a new one.
      if (ev.code === 4001) token = null
      setTimeout(open, delay)
      delay = Math.min(delay * 2, 15_000)
    }
  }
  void open()
  return { close() { closedByUs = true; if (ws) ws.close() }, send(f) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(f)) } }
}

// ---- store picker ----

export let stores: Store[] = []
/** The chosen store; null while the account has none (app.ts then draws only the pages that need none). */
export let store: Store | null = null

export async function pickStore(): Promise<void> {
  await loadStores()
  const sel = document.getElementById('store') as HTMLSelectElement
  sel.addEventListener('change', () => {
    const u = new URL(location.href)
    u.searchParams.set('store', sel.value)
    location.assign(u)
  })
}

/** The account's stores into the picker (again after the Stores page adds or removes one). */
export async function loadStores(prefer?: number): Promise<void> {
  const list = await api('GET', '/restaurants?per_page=100') as { data?: Store[] }
  stores = list.data || []
  const wanted = prefer || Number(new URLSearchParams(location.search).get('store'))
  store = stores.find((s) => s.id === wanted) || stores[0] || null
  // The list leaves the currency out: the chosen store's own record has it.
  if (store) currency = ((await api('GET', `/restaurants/${store.id}`).catch(() => null)) as { currency?: string } | null)?.currency || currency
  const sel = document.getElementById('store') as HTMLSelectElement
  sel.replaceChildren(...stores.map((s) => h('option', { value: s.id, selected: store && s.id === store.id, text: s.title })))
  sel.disabled = stores.length === 0
  // Keep the chosen store when moving between pages.
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav a[data-nav]')) a.search = store ? `?store=${store.id}` : ''
}
/** The chosen store (pages that need one are drawn only when there is one: app.ts). */
export const theStore = (): Store => store!
export const S = (): string => `/restaurants/${theStore().id}`
