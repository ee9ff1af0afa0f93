/**
 * The kitchen screen's script (docs/kds.md "Kitchen screen page"), inlined into src/http/pages/kds.html
 * with the page's CSP nonce: enrollment, the PIN pad, and the board that follows the kitchen socket.
 * The socket's frames are the server's types (src/ws/kds-frames.ts).
 */
import type { KdsItem, KdsOutFrame, KdsStepFrame, KdsTicket } from '../ws/kds-frames.ts'

/** The answer of a JSON call: `body` is the parsed JSON, `{}` when there was none. */
interface Answer { ok: boolean; status: number; body: Record<string, unknown> & { message?: string; reason?: string } }

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T
const input = (id: string): HTMLInputElement => $<HTMLInputElement>(id)
const qs = new URLSearchParams(location.search)
const store = localStorage
const OPEN = new Set(['new', 'preparing', 'ready'])
const LIVE = new Set(['queued', 'preparing', 'ready'])
const tickets = new Map<number, KdsTicket>()
/** Tickets that arrived while the screen was open and nobody has started yet: flashed, badged and counted. */
const fresh = new Set<number>()
// Relative to this page ({site_url}/kds), so a site mounted under a path prefix still works.
const api = (path: string): string => new URL('api/v1' + path, location.href).href
const authed = (token: string): Record<string, string> => ({ authorization: 'Bearer ' + token })
let ws: WebSocket | null = null, seq = 0, retry = 0, opened = false, flashTimer = 0
// The screen's enrollment (docs/kds.md "Kitchen screen page"): the device key a manager created,
// sent as `device` with every PIN sign-in. Kept until the server says it is no longer enrolled.
const KEY = 'kds.deviceKey'
store.removeItem('kds.device') // the free-form device name of the days before enrollment
const enrolled = (): boolean => Boolean(store.getItem(KEY) && store.getItem('kds.store'))
const call = async (path: string, body: unknown, token?: string): Promise<Answer> => {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (token) headers.authorization = 'Bearer ' + token
  const r = await fetch(api(path), { method: 'POST', headers, body: JSON.stringify(body) })
  return { ok: r.ok, status: r.status, body: await r.json().catch(() => ({})) as Answer['body'] }
}
const failed = (r: Answer, what: string): string => r.body.message || (what + ' failed (' + r.status + ')')

function hideAll(): void {
  for (const id of ['enroll', 'login', 'board', 'empty', 'logout', 'newCount']) $(id).classList.add('hidden')
  $('conn').textContent = 'offline'; $('conn').className = ''
}
function showEnroll(message?: string): void {
  hideAll(); $('enroll').classList.remove('hidden')
  $('enrollErr').textContent = message || ''
  input('store').value = qs.get('store') || store.getItem('kds.store') || ''
}
function showLogin(message?: string): void {
  if (!enrolled()) return showEnroll(message)
  hideAll(); $('login').classList.remove('hidden')
  $('err').textContent = message || ''
  $('where').textContent = 'Store ' + store.getItem('kds.store') + ' · ' + (store.getItem('kds.deviceName') || 'this screen')
  input('stationIn').value = qs.get('station') || store.getItem('kds.station') || ''
}
function showBoard(): void { hideAll(); $('board').classList.remove('hidden'); $('logout').classList.remove('hidden'); render() }
function forgetDevice(): void { store.removeItem(KEY); store.removeItem('kds.deviceName') }
function keepDevice(id: string, key: string, name: string): void {
  store.setItem(KEY, key); store.setItem('kds.store', id); store.setItem('kds.deviceName', name)
  for (const f of ['deviceKey', 'email', 'password', 'totp']) input(f).value = ''
  showLogin()
}

$('enroll').addEventListener('submit', async (ev) => {
  ev.preventDefault()
  const err = (m: string): void => { $('enrollErr').textContent = m }
  err('')
  const id = input('store').value.trim()
  const name = input('deviceName').value.trim() || 'Kitchen screen'
  if (!/^[1-9][0-9]*$/.test(id)) return err('Enter the store id.')
  const pasted = input('deviceKey').value.trim()
  if (pasted) {
    if (!/^dsk_[A-Za-z0-9_-]{20,}$/.test(pasted)) return err('That is not a device key (it starts with dsk_).')
    return keepDevice(id, pasted, name)
  }
  if (!input('email').value || !input('password').value) return err('Paste a device key, or sign in as a manager.')
  let token: string | null = null
  try {
    const login: Record<string, string> = { email: input('email').value.trim(), password: input('password').value, device: 'kds-enrollment' }
    if (input('totp').value.trim()) login.totp_code = input('totp').value.trim()
    const r = await call('/restaurants/' + encodeURIComponent(id) + '/staff/login', login)
    if (!r.ok) return err(r.body.reason === 'two_factor_required' ? 'Two-factor sign-in is on: enter the code from the app too.' : failed(r, 'Sign-in'))
    token = r.body.token as string
    const d = await call('/staff/pin-devices', { name }, token)
    if (!d.ok) return err(failed(d, 'Enrollment'))
    keepDevice(id, d.body.key as string, d.body.name as string)
  } catch {
    err('Network error')
  } finally {
    // The manager's session was only for enrolling: never leave it on a shared screen.
    if (token) await call('/staff/logout', {}, token).catch(() => {})
  }
})
$('forget').addEventListener('click', () => { forgetDevice(); showEnroll() })
// The on-screen PIN keypad (issue 34 item 15): fills the PIN field for a finger; typing still works.
// It does not focus the field, so a tablet's own keyboard stays closed.
$('keypad').addEventListener('click', (ev) => {
  const key = (ev.target as Element).closest<HTMLElement>('[data-key]')?.dataset.key
  const pin = input('pin')
  if (key === 'clear') pin.value = ''
  else if (key === 'back') pin.value = pin.value.slice(0, -1)
  else if (key && pin.value.length < 12) pin.value += key
})

$('login').addEventListener('submit', async (ev) => {
  ev.preventDefault()
  $('err').textContent = ''
  const id = store.getItem('kds.store') ?? ''
  try {
    const r = await call('/restaurants/' + encodeURIComponent(id) + '/staff/pin', { pin: input('pin').value, device: store.getItem(KEY) })
    const body = r.body as Answer['body'] & { token: string; staff?: { permissions?: string[] } }
    if (!r.ok) {
      input('pin').value = ''
      // Revoked, or never enrolled at this store: only a manager can fix that, not another PIN.
      if (body.reason === 'device_not_enrolled') { forgetDevice(); return showEnroll('This screen is not enrolled (any more): a manager must enroll it.') }
      $('err').textContent = failed(r, 'Sign-in')
      return
    }
    input('pin').value = ''
    if (!(body.staff?.permissions ?? []).includes('kds')) {
      // Signed in, but not a kitchen member: give the token back rather than leave it on this device.
      await call('/staff/logout', {}, body.token).catch(() => {})
      $('err').textContent = 'This member has no kitchen (kds) permission.'
      return
    }
    store.setItem('kds.token', body.token); store.setItem('kds.station', input('stationIn').value.trim())
    connect(); showBoard()
  } catch { $('err').textContent = 'Network error' }
})
$('logout').addEventListener('click', async () => {
  const token = store.getItem('kds.token')
  store.removeItem('kds.token')
  if (ws) { const w = ws; ws = null; w.close() }
  if (token) await call('/staff/logout', {}, token).catch(() => {})
  tickets.clear(); showLogin()
})

function connect(): void {
  const token = store.getItem('kds.token')
  if (!token) return showLogin()
  const station = store.getItem('kds.station')
  const url = new URL(api('/ws/kds'))
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:'
  url.searchParams.set('token', token)
  if (station) url.searchParams.set('station_id', station)
  opened = false
  const sock = ws = new WebSocket(url.href)
  sock.onopen = () => { opened = true; retry = 0; $('conn').textContent = 'live'; $('conn').className = 'live' }
  sock.onmessage = (m: MessageEvent<string>) => { try { onFrame(JSON.parse(m.data) as KdsOutFrame) } catch (e) { console.error(e) } }
  sock.onclose = async (ev) => {
    if (ws !== sock) return
    $('conn').textContent = 'reconnecting…'; $('conn').className = ''
    // 4001: signed out elsewhere. A refused upgrade looks like any network failure, so ask the
    // API whether the token still works before sending the cook back to the PIN pad: a server
    // restart must not sign every kitchen screen out.
    const gone = ev.code === 4001 || (!opened && await tokenGone(token))
    if (ws !== sock) return
    if (gone) return signedOut('Please sign in again.')
    setTimeout(() => { if (ws === sock) connect() }, Math.min(5000, 250 * 2 ** retry++))
  }
}
async function tokenGone(token: string): Promise<boolean> {
  try {
    const r = await fetch(api('/staff/me'), { headers: authed(token) })
    if (r.status === 401) return true
    const me = r.ok ? await r.json() as { permissions: string[] } : null
    return Boolean(me && !me.permissions.includes('kds'))
  } catch { return false }
}
function signedOut(message: string): void {
  ws = null; store.removeItem('kds.token'); tickets.clear(); showLogin(message)
}
function flash(text: string): void {
  $('flash').textContent = text
  clearTimeout(flashTimer)
  flashTimer = window.setTimeout(() => { $('flash').textContent = '' }, 4000)
}

function onFrame(f: KdsOutFrame): void {
  if (f.type === 'snapshot') {
    tickets.clear()
    for (const t of f.tickets) tickets.set(t.order_id, t)
    for (const id of fresh) if (!tickets.has(id)) fresh.delete(id)
    $('station').textContent = f.station ? '· ' + f.station : '· all stations'
  } else if (f.type === 'ticket') {
    if (!tickets.has(f.ticket.order_id)) { fresh.add(f.ticket.order_id); alertNewTicket() }
    tickets.set(f.ticket.order_id, f.ticket)
  } else if (f.type === 'item') {
    let t = tickets.get(f.order_id)
    if (!t) { t = { ...f.order, items: [] }; tickets.set(f.order_id, t) }
    t.status = f.order_status
    // A line started (or bumped further): the kitchen has seen this ticket.
    if (f.items.some((it) => it.kds_state !== 'queued')) fresh.delete(f.order_id)
    for (const it of f.items) {
      const i = t.items.findIndex((x) => x.id === it.id)
      if (!LIVE.has(it.kds_state)) { if (i >= 0) t.items.splice(i, 1) }
      else if (i >= 0) t.items[i] = it
      else { t.items.push(it); t.items.sort((a, b) => a.id - b.id) }
    }
    if (t.items.length === 0 || !OPEN.has(t.status)) tickets.delete(f.order_id)
  } else if (f.type === 'status') {
    const t = tickets.get(f.order_id)
    if (!OPEN.has(f.status)) tickets.delete(f.order_id)
    else if (t) t.status = f.status
  } else if (f.type === 'error') {
    flash(f.message || f.reason)
  }
  render()
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
const esc = (s: unknown): string => String(s == null ? '' : s).replace(/[&<>"']/g, (c) => ENTITIES[c]!)
function age(iso: string): { text: string; late: boolean } {
  const s = Math.max(0, Math.floor((Date.now() - Date.parse(iso)) / 1000))
  return { text: Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0'), late: s >= 900 }
}
const itemHtml = (i: KdsItem): string => '<div class="item" data-item="' + i.id + '" data-state="' + esc(i.kds_state) + '">' +
  '<button class="bump" data-bump="' + i.id + '"><span class="state">' + esc(i.kds_state) + '</span>' + i.quantity + '× ' + esc(i.name) +
  (i.variation ? ' (' + esc(i.variation) + ')' : '') +
  (i.extras.length ? '<small>+ ' + i.extras.map(esc).join(', ') + '</small>' : '') + (i.note ? '<small class="note">Note: ' + esc(i.note) + '</small>' : '') + '</button>' +
  (i.kds_state !== 'queued' ? '<button class="recall" data-recall="' + i.id + '" title="Recall">↶</button>' : '') + '</div>'
/** One card's markup; the age is filled in by tickAge, so a card's markup changes only with its order. */
function cardHtml(t: KdsTicket): string {
  const where = t.table_number ? 'table ' + esc(t.table_number) : esc(t.type)
  const isNew = fresh.has(t.order_id)
  return '<section class="ticket' + (isNew ? ' fresh' : '') + '" data-ticket="' + t.order_id + '" data-status="' + esc(t.status) + '"' + (isNew ? ' data-new="1"' : '') + '>' +
    '<div class="head"><span>#' + t.order_id + ' · ' + where + (isNew ? '<span class="new">NEW</span>' : '') + '</span><span class="age" data-created="' + esc(t.created_at) + '"></span></div>' +
    (t.customer_name ? '<div class="meta">' + esc(t.customer_name) + '</div>' : '') +
    (t.note ? '<div class="note">Note: ' + esc(t.note) + '</div>' : '') +
    t.items.map(itemHtml).join('') +
    '</section>'
}
function tickAge(root: ParentNode): void {
  for (const el of root.querySelectorAll<HTMLElement>('.age[data-created]')) { const a = age(el.dataset.created!); el.textContent = a.text; el.classList.toggle('late', a.late) }
}
// Keyed rendering: only cards whose order changed are replaced, so a tap on one card is never
// lost to a re-render caused by another station's bump.
const cards = new Map<number, { el: Element; html: string }>()
function render(): void {
  const list = [...tickets.values()].filter((t) => t.items.length > 0).sort((a, b) => a.order_id - b.order_id)
  const board = $('board')
  $('empty').classList.toggle('hidden', list.length > 0 || board.classList.contains('hidden'))
  const keep = new Set<number>()
  let prev: Element | null = null
  for (const t of list) {
    keep.add(t.order_id)
    const html = cardHtml(t)
    let c = cards.get(t.order_id)
    if (!c || c.html !== html) {
      const tpl = document.createElement('template')
      tpl.innerHTML = html
      const el = tpl.content.firstElementChild!
      tickAge(el)
      if (c) c.el.replaceWith(el)
      cards.set(t.order_id, (c = { el, html }))
    }
    const at: Element | null = prev ? prev.nextElementSibling : board.firstElementChild
    if (at !== c.el) board.insertBefore(c.el, at)
    prev = c.el
  }
  for (const [id, c] of cards) if (!keep.has(id)) { c.el.remove(); cards.delete(id) }
  for (const id of fresh) if (!keep.has(id)) fresh.delete(id)
  $('newCount').textContent = fresh.size ? fresh.size + ' new' : ''
  $('newCount').classList.toggle('hidden', fresh.size === 0 || board.classList.contains('hidden'))
}
const send = (f: KdsStepFrame): void => { ws!.send(JSON.stringify(f)) }
$('board').addEventListener('click', (ev) => {
  if (!ws || ws.readyState !== 1) return
  const target = ev.target as Element
  // Tapping a ticket's header bumps every line on the card one step (the whole order at once).
  const head = target.closest<HTMLElement>('.head')
  if (head) {
    const t = tickets.get(Number(head.parentElement!.dataset.ticket))
    for (const i of t ? t.items : []) send({ type: 'bump', item_id: i.id, seq: ++seq })
    return
  }
  const b = target.closest<HTMLElement>('[data-bump],[data-recall]')
  if (!b) return
  const bump = b.hasAttribute('data-bump')
  send({ type: bump ? 'bump' : 'recall', item_id: Number(bump ? b.dataset.bump : b.dataset.recall), seq: ++seq })
})
// The new-ticket alert (docs/kds.md "Kitchen screen page"): a short tone made here (no audio
// file, nothing external), switched off per browser with the header button (`kds.sound`).
// `data-alerts` on <body> counts the tones played, so a test can see them.
let audio: AudioContext | null = null
const soundOn = (): boolean => store.getItem('kds.sound') !== 'off'
function showSound(): void { $('sound').textContent = soundOn() ? 'Sound on' : 'Sound off'; $('sound').setAttribute('aria-pressed', String(soundOn())) }
function alertNewTicket(): void {
  if (!soundOn()) return
  document.body.dataset.alerts = String(Number(document.body.dataset.alerts || 0) + 1)
  try {
    const Ctx = window.AudioContext || (window as unknown as { webkitAudioContext: typeof AudioContext }).webkitAudioContext
    audio = audio || new Ctx()
    if (audio.state === 'suspended') audio.resume().catch(() => {})
    const osc = audio.createOscillator(), gain = audio.createGain()
    osc.frequency.value = 880; gain.gain.value = 0.2
    osc.connect(gain).connect(audio.destination)
    osc.start(); osc.stop(audio.currentTime + 0.25)
  } catch { /* no audio device: the card still appears */ }
}
$('sound').addEventListener('click', () => { store.setItem('kds.sound', soundOn() ? 'off' : 'on'); showSound() })
showSound()
setInterval(() => tickAge(document), 1000)

if (store.getItem('kds.token')) { connect(); showBoard() } else showLogin()
