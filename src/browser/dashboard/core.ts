// The dashboard's shared core (docs/dashboard.md "How the script is organised"): the element
// helper, the messages line, the session's API token, the API and its sockets, and the store picker.
// Every view module imports from here, so there is one token, one store and one way to show errors.
// Never sets inline styles (the page's CSP has no 'unsafe-inline'): classes and SVG attributes only.

export const body = document.body
export const SITE = body.dataset.site
export const API = body.dataset.api
export const PAGE = body.dataset.page
export const CSRF = document.querySelector('meta[name="csrf-token"]').content
export const view = document.getElementById('view')
export const notice = document.getElementById('notice')
export const problem = document.getElementById('problem')

// ---- small helpers ----

/** An element: `props` are attributes, plus `text`, `class`, `on` (events) and `data`. */
export function h(tag, props, ...children) {
  const svg = ['svg', 'g', 'circle', 'rect', 'line', 'polyline', 'path', 'text', 'title'].includes(tag)
  const el = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag)
  for (const [k, v] of Object.entries(props || {})) {
    if (v == null || v === false) continue
    if (k === 'text') el.textContent = String(v)
    else if (k === 'on') for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn)
    else if (k === 'data') for (const [dk, dv] of Object.entries(v)) el.dataset[dk] = String(dv)
    else if (k === 'style') throw new Error('no inline styles (CSP)')
    else el.setAttribute(k, v === true ? '' : String(v))
  }
  for (const c of children.flat()) if (c != null && c !== false) el.append(c instanceof Node ? c : document.createTextNode(String(c)))
  return el
}
export const money = (n) => (typeof n === 'number' ? n.toFixed(2) : '')
export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '')
export const time = (iso) => (iso ? new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : '')
export function say(msg) { problem.textContent = ''; notice.textContent = msg }
export function fail(err) {
  notice.textContent = ''
  const message = err && err.message ? err.message : String(err)
  // Every 422 names its fields (docs/errors.md); a rule about the whole request repeats the message: said once.
  const fields = Object.entries((err && err.body && err.body.errors) || {})
    .map(([k, v]) => [k, [].concat(v).filter((m) => m !== message)]).filter(([, v]) => v.length > 0)
  problem.textContent = message + (fields.length ? ' ' + fields.map(([k, v]) => `${k}: ${v.join(' ')}`).join('; ') : '')
}
/** Run an action from a button or form: errors are shown, never thrown into the void. */
export const act = (fn) => async (ev) => {
  if (ev && ev.preventDefault) ev.preventDefault()
  try { await fn(ev) } catch (err) { fail(err) }
}
export function table(head, rows) {
  return h('div', { class: 'table-wrap' }, h('table', {},
    h('thead', {}, h('tr', {}, head.map((c) => h('th', { scope: 'col', class: /^(Total|Price|Revenue|Orders|Uses|Attempts|Quantity)$/.test(c) ? 'num' : null, text: c })))),
    h('tbody', {}, rows)))
}
export const formData = (form) => Object.fromEntries(new FormData(form).entries())

// ---- the session's API token and the API ----

let token = null
let tokenExpires = 0
let tokenPending = null

/** A token of this session, renewed a minute before it expires (docs/dashboard.md "Signing in"). */
export async function apiToken(fresh = false) {
  if (!fresh && token && Date.now() < tokenExpires - 60_000) return token
  if (!tokenPending) {
    tokenPending = (async () => {
      const res = await fetch(`${SITE}/dashboard/api-token`, { method: 'POST', credentials: 'same-origin', headers: { 'X-CSRF-Token': CSRF, Accept: 'application/json' } })
      if (res.status === 401 || res.redirected) { location.assign(`${SITE}/login?next=${encodeURIComponent(location.pathname + location.search)}`); throw new Error('Signed out.') }
      if (!res.ok) throw new Error(`Could not get an API token (${res.status}).`)
      const t = await res.json()
      token = t.token
      tokenExpires = Date.parse(t.expires_at)
      return token
    })().finally(() => { tokenPending = null })
  }
  return tokenPending
}

/** Call the owner API; a 401 (token ended) is retried once with a fresh token. */
export async function api(method, path, payload, retried = false) {
  const t = await apiToken(retried)
  const headers = { Authorization: `Bearer ${t}`, Accept: 'application/json' }
  if (payload !== undefined) headers['Content-Type'] = 'application/json'
  const res = await fetch(API + path, { method, headers, body: payload === undefined ? undefined : JSON.stringify(payload) })
  if (res.status === 401 && !retried) return api(method, path, payload, true)
  if (res.status === 204) return null
  const json = await res.json().catch(() => null)
  if (!res.ok) throw Object.assign(new Error((json && json.message) || `HTTP ${res.status}`), { status: res.status, body: json })
  return json
}

/** A socket of the API with the session's token, reconnecting with a fresh one when it ends. */
export function liveSocket(path, onFrame, onState) {
  let closedByUs = false
  let ws = null
  let delay = 500
  const open = async () => {
    let t
    try { t = await apiToken() } catch (err) { fail(err); return }
    const url = new URL(`${API}${path}`, location.href)
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
    url.searchParams.set('token', t)
    ws = new WebSocket(url)
    ws.onopen = () => { delay = 500; onState(true) }
    ws.onmessage = (m) => { try { onFrame(JSON.parse(m.data)) } catch (err) { fail(err) } }
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

export let stores = []
export let store = null

export async function pickStore() {
  await loadStores()
  const sel = document.getElementById('store')
  sel.addEventListener('change', () => {
    const u = new URL(location.href)
    u.searchParams.set('store', sel.value)
    location.assign(u)
  })
}

/** The account's stores into the picker (again after the Stores page adds or removes one). */
export async function loadStores(prefer) {
  const list = await api('GET', '/restaurants?per_page=100')
  stores = list.data || []
  const wanted = prefer || Number(new URLSearchParams(location.search).get('store'))
  store = stores.find((s) => s.id === wanted) || stores[0] || null
  const sel = document.getElementById('store')
  sel.replaceChildren(...stores.map((s) => h('option', { value: s.id, selected: store && s.id === store.id, text: s.title })))
  sel.disabled = stores.length === 0
  // Keep the chosen store when moving between pages.
  for (const a of document.querySelectorAll('nav a[data-nav]')) a.search = store ? `?store=${store.id}` : ''
}
export const S = () => `/restaurants/${store.id}`
