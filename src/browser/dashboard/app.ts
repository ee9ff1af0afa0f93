// The owner dashboard's script (docs/dashboard.md): the entry module the shell loads. TypeScript
// modules (src/browser/), compiled one file to one module by tools/build.mjs, no outside code. The shared core (./core.js) gets a
// short-lived API token of the signed-in session and calls the owner API; this file draws the
// original pages and starts the one named by the shell, the store-operation views live in their
// own modules (payments.js, shifts.js, reservations.js, guests.js).
// Never sets inline styles (the page's CSP has no 'unsafe-inline'): classes and SVG attributes only.

import type { OrderView, OrdersFeedFrame } from '../../ws/order-frames.ts'
import { PAGE, SITE, api, act, body, copyButton, fail, formData, h, liveSocket, loadStores, money, pickStore, S, say, store, stores, table, theStore, time, view, when, type ApiFailure, type Json, type Store } from './core.js'
import { paymentsPanel } from './payments.js'
import { shiftsPage } from './shifts.js'
import { reservationsPage } from './reservations.js'
import { guestsPage } from './guests.js'
import { dispatchPage } from './dispatch.js'
import { setupChecklist } from './setup.js'
import { arrivals } from './arrivals.js'
import { menuPage } from './menu.js'
import { websitePage } from './website.js'

// ---- Orders ----

const COLUMNS = [
  { key: 'new', title: 'New', has: ['new'] },
  { key: 'preparing', title: 'Preparing', has: ['preparing'] },
  { key: 'ready', title: 'Ready', has: ['ready'] },
  { key: 'done', title: 'Done', has: ['delivered', 'completed', 'cancelled'] },
]
const NEXT: Record<string, [string, string]> = { new: ['preparing', 'Start'], preparing: ['ready', 'Ready'], ready: ['completed', 'Complete'] }
const KITCHEN = ['new', 'preparing', 'ready', 'delivered', 'completed', 'cancelled']

async function ordersPage(): Promise<void> {
  const orders = new Map<number, OrderView>()
  const fresh = new Set<number>()
  let drivers: Json[] = []
  const live = h('span', { class: 'live-dot pill warn', id: 'live', text: 'connecting…' })
  const board = h('div', { class: 'board', id: 'board' })
  const dialog = h('dialog', { id: 'order-detail', 'aria-labelledby': 'order-detail-title' })
  const arrived = arrivals()
  view.replaceChildren(h('p', {}, 'Today\'s orders, live. ', live, ' ', arrived.controls), board, dialog)
  api('GET', '/drivers?per_page=50').then((d) => { drivers = d.data || [] }, () => { drivers = [] })

  const setStatus = (o: OrderView, status: string) => act(async () => {
    const next = await api('PUT', `${S()}/orders/${o.id}/status`, { status }) as OrderView
    orders.set(next.id, next)
    draw()
    say(`Order #${o.id} is ${status}.`)
  })

  function card(o: OrderView): HTMLElement {
    const next = NEXT[o.status]
    const summary = (o.items || []).map((l) => `${l.quantity}× ${l.name}`).join(', ')
    return h('li', { class: fresh.has(o.id) ? 'order fresh' : 'order', data: { orderId: o.id, status: o.status } },
      h('div', { class: 'head' }, h('span', { text: `#${o.id} ${o.customer_name || ''}` }), h('span', { text: money(o.total) })),
      h('div', { class: 'muted', text: `${o.type}${o.table_number ? ' · table ' + o.table_number : ''} · ${time(o.created_at)}${o.delivery_status ? ' · ' + o.delivery_status.replace(/_/g, ' ') : ''}` }),
      h('div', { text: summary }),
      h('div', { class: 'actions' },
        next ? h('button', { type: 'button', class: 'primary', data: { move: next[0] }, on: { click: setStatus(o, next[0]) }, text: next[1] }) : null,
        h('button', { type: 'button', on: { click: act(() => detail(o.id)) }, text: 'Details', 'aria-label': `Details of order ${o.id}` })))
  }

  function draw() {
    const all = [...orders.values()].sort((a, b) => b.id - a.id)
    board.replaceChildren(...COLUMNS.map((c) => {
      const mine = all.filter((o) => c.has.includes(o.status))
      return h('section', { class: 'column', data: { column: c.key }, 'aria-labelledby': `col-${c.key}` },
        h('h2', { id: `col-${c.key}`, text: `${c.title} (${mine.length})` }),
        h('ol', {}, mine.map(card)))
    }))
    arrived.waiting(all.filter((o) => o.status === 'new').length)
  }

  async function detail(id: number): Promise<void> {
    const o = await api('GET', `${S()}/orders/${id}`) as OrderView
    orders.set(o.id, o)
    const status = h('select', { name: 'status', 'aria-label': 'Kitchen status' }, KITCHEN.map((k) => h('option', { value: k, selected: k === o.status, text: k })))
    const parts = [
      h('h2', { id: 'order-detail-title', text: `Order #${o.id}` }),
      h('p', { text: `${o.type} · ${o.customer_name || 'guest'}${o.phone ? ' · ' + o.phone : ''}${o.address ? ' · ' + o.address : ''}` }),
      h('ul', {}, (o.items || []).map((l) => h('li', {},
        `${l.quantity}× ${l.name}${l.variation ? ' (' + l.variation.name + ')' : ''} — ${money(l.line_total)}`,
        l.extras.length ? h('span', { class: 'muted', text: ` + ${l.extras.map((e) => e.name).join(', ')}` }) : null,
        l.note ? h('span', { class: 'muted', text: ` “${l.note}”` }) : null))),
      o.note ? h('p', { class: 'muted', text: `Note: ${o.note}` }) : null,
      o.delivery_notes ? h('p', { class: 'muted', text: `For the driver: ${o.delivery_notes}` }) : null,
      h('p', { id: 'order-paid', data: { paid: o.is_paid ? '1' : '0' } }, h('b', { text: `Total ${money(o.total)}` }), o.is_paid ? ' · paid' : ' · not paid'),
      // Payments, split bill and refunds (issue 17): redrawn with the order after each one.
      await paymentsPanel(o, () => detail(o.id)),
      h('h3', { text: 'Timeline' }),
      h('ol', {}, Object.entries(o.timeline || {}).map(([k, v]) => h('li', { text: `${k.replace(/_at$/, '').replace(/_/g, ' ')}: ${when(v as string)}` }))),
      h('form', { class: 'row', on: { submit: act(async () => { await setStatus(o, status.value)(); dialog.close() }) } },
        h('label', {}, 'Kitchen status', status), h('button', { type: 'submit', class: 'primary', text: 'Set status' })),
    ]
    if (o.delivery_status !== null) {
      const pick = h('select', { name: 'driver_id', 'aria-label': 'Driver' }, drivers.map((d) => h('option', { value: d.id, selected: o.driver && o.driver.id === d.id, text: `${d.name}${d.on_shift ? '' : ' (off shift)'}` })))
      parts.push(
        h('h3', { text: 'Delivery' }),
        h('p', { text: `Status: ${o.delivery_status.replace(/_/g, ' ')} · driver: ${o.driver ? o.driver.name : 'none'}` }),
        h('form', { class: 'row', on: { submit: act(async () => {
          await api('POST', `${S()}/orders/${o.id}/assign`, { driver_id: Number(pick.value) })
          say(`Order #${o.id} assigned.`); dialog.close()
        }) } }, h('label', {}, 'Driver', pick), h('button', { type: 'submit', text: 'Assign' })),
        h('button', { type: 'button', on: { click: act(async () => {
          const r = await api('POST', `${S()}/orders/${o.id}/offers`, {})
          say(`Offered to ${(r.offers || r.offered || []).length} driver(s).`)
        }) }, text: 'Offer to drivers on shift' }))
    }
    parts.push(h('p', {}, h('button', { type: 'button', on: { click: () => dialog.close() }, text: 'Close' })))
    dialog.replaceChildren(...parts.filter((p): p is HTMLElement => p !== null))
    if (!dialog.open) dialog.showModal()
  }

  liveSocket<OrdersFeedFrame>(`/ws/orders/${theStore().id}`, (f) => {
    if (f.type === 'snapshot') { orders.clear(); for (const o of f.orders) orders.set(o.id, o); draw() }
    else if (f.type === 'order') {
      if (!orders.has(f.order.id)) { fresh.add(f.order.id); say(`New order #${f.order.id}.`); arrived.arrived(f.order) }
      orders.set(f.order.id, f.order)
      draw()
    }
  }, (up) => { live.textContent = up ? 'live' : 'reconnecting…'; live.className = up ? 'live-dot pill live' : 'live-dot pill warn' })
  draw()
}

// ---- Stores ----

const STORE_TYPES = (body.dataset.storeTypes || 'restaurant').split(' ').filter(Boolean)
const WEEK = [['mon', 'Monday'], ['tue', 'Tuesday'], ['wed', 'Wednesday'], ['thu', 'Thursday'], ['fri', 'Friday'], ['sat', 'Saturday'], ['sun', 'Sunday']]
const localZone = () => { try { return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC' } catch { return 'UTC' } }
const zoneList = () => { try { return Intl.supportedValuesOf('timeZone') } catch { return ['UTC'] } }
/** `[["11:00","14:30"],["17:00","22:00"]]` ⇄ `11:00-14:30, 17:00-22:00` (empty: closed that day). */
const hoursText = (intervals: Array<[string, string]> | null | undefined): string => (intervals || []).map(([o, c]) => `${o}-${c}`).join(', ')
const hoursOf = (text: string | undefined): string[][] => String(text || '').split(',').map((p) => p.trim()).filter(Boolean).map((p) => p.split('-').map((x) => x.trim()))
const opt = (v: string | null | undefined): string | null => (v === '' || v == null ? null : v)

/**
 * The account's stores (docs/dashboard.md "Stores"): list with the public website address, create
 * (then address and time zone with `PUT /restaurants/{id}`, then the chosen starter menu), edit the
 * store and its main settings and weekly hours, remove. The API's own messages are shown as they
 * come (plan quotas, 409 while orders are live).
 */
async function storesPage(): Promise<void> {
  const starters = await api('GET', '/catalog/starter-menus').catch(() => []) as Json[]
  const zones = h('datalist', { id: 'zones' }, zoneList().map((z) => h('option', { value: z })))
  const typeSelect = (value: string) => h('select', { name: 'store_type' }, STORE_TYPES.map((t) => h('option', { value: t, selected: t === value, text: t })))

  const create = h('form', { class: 'card', id: 'store-create', on: { submit: act(async (ev) => {
    const f = formData(ev.target)
    const made = await api('POST', '/restaurants', { title: f.title, store_type: f.store_type, currency: f.currency!.toUpperCase(), city: opt(f.city) }) as Store
    // POST /restaurants takes the basics; the address and time zone are the store's edit (same checks).
    const steps: string[] = []
    try {
      if (f.address || f.timezone) await api('PUT', `/restaurants/${made.id}`, { address: opt(f.address), ...(f.timezone ? { timezone: f.timezone } : {}) })
      if (f.starter) { const r = await api('POST', `/restaurants/${made.id}/menu/starter`, { starter: f.starter }); steps.push(`${r.item_count} menu items`) }
    } catch (err) {
      await loadStores(made.id); await draw()
      throw Object.assign(err as ApiFailure, { message: `${made.title} was created, but: ${(err as Error).message}` })
    }
    ev.target.reset()
    await loadStores(made.id)
    await draw()
    say(`${made.title} created${steps.length ? ' with ' + steps.join(', ') : ''}.`)
  }) } },
  h('h2', { text: 'Create a store' }),
  h('label', {}, 'Title', h('input', { name: 'title', required: true, maxlength: 120 })),
  h('label', {}, 'Store type', typeSelect('restaurant')),
  h('label', {}, 'Address', h('input', { name: 'address', maxlength: 300, autocomplete: 'street-address' })),
  h('label', {}, 'City', h('input', { name: 'city', maxlength: 100, autocomplete: 'address-level2' })),
  h('label', {}, 'Currency', h('input', { name: 'currency', value: 'USD', required: true, pattern: '[A-Za-z]{3}', maxlength: 3, size: 4 })),
  h('label', {}, 'Time zone', h('input', { name: 'timezone', value: localZone(), list: 'zones', autocomplete: 'off' })),
  h('label', {}, 'Menu', h('select', { name: 'starter' }, h('option', { value: '', text: 'Empty menu' }),
    starters.map((m) => h('option', { value: m.key, text: `Starter: ${m.title} (${m.item_count} items)` })))),
  h('div', {}, h('button', { type: 'submit', class: 'primary', text: 'Create store' })))

  /** The edit form of one store: its fields (PUT /restaurants/{id}), main settings and weekly hours (PUT …/settings). */
  async function editForm(s: Store): Promise<HTMLElement> {
    const [detail, set] = await Promise.all([api('GET', `/restaurants/${s.id}`), api('GET', `/restaurants/${s.id}/settings`)])
    const hours = set.business_hours
    const always = h('input', { type: 'checkbox', name: 'always_open', checked: hours === null })
    const days = h('fieldset', { hidden: hours === null }, h('legend', { text: 'Weekly hours (HH:MM-HH:MM, several separated by commas; empty: closed)' }),
      WEEK.map(([d, name]) => h('label', {}, name, h('input', { name: `hours_${d}`, value: hoursText(hours && hours[d]), placeholder: 'closed', pattern: '\\s*(\\d{2}:\\d{2}\\s*-\\s*\\d{2}:\\d{2}\\s*,?\\s*)*' }))))
    always.addEventListener('change', () => { days.hidden = always.checked })
    return h('form', { class: 'card', data: { storeEdit: s.id }, on: { submit: act(async (ev) => {
      const f = formData(ev.target)
      const fields: Record<string, string | null | undefined> = { title: f.title, store_type: f.store_type, city: opt(f.city), address: opt(f.address), timezone: f.timezone }
      // Sent only when changed: a store with orders keeps its currency (409), so an unchanged one is left out.
      if (f.currency!.toUpperCase() !== detail.currency) fields.currency = f.currency!.toUpperCase()
      await api('PUT', `/restaurants/${s.id}`, fields)
      const business_hours = f.always_open === 'on' ? null : Object.fromEntries(WEEK.map(([d]) => [d, hoursOf(f[`hours_${d}`])]))
      await api('PUT', `/restaurants/${s.id}/settings`, { accepting_orders: f.accepting_orders === 'on', public_listing: f.public_listing === 'on', prep_minutes: Number(f.prep_minutes), business_hours })
      await loadStores(store?.id)
      await draw()
      say(`${fields.title} saved.`)
    }) } },
    h('h3', { text: `Edit ${s.title}` }),
    h('label', {}, 'Title', h('input', { name: 'title', value: detail.title, required: true, maxlength: 120 })),
    h('label', {}, 'Store type', typeSelect(detail.store_type)),
    h('label', {}, 'Address', h('input', { name: 'address', value: set.address, maxlength: 300 })),
    h('label', {}, 'City', h('input', { name: 'city', value: detail.city, maxlength: 100 })),
    h('label', {}, 'Currency', h('input', { name: 'currency', value: detail.currency, required: true, pattern: '[A-Za-z]{3}', maxlength: 3, size: 4 })),
    h('label', {}, 'Time zone', h('input', { name: 'timezone', value: set.timezone, list: 'zones', required: true, autocomplete: 'off' })),
    h('label', {}, 'Preparation minutes', h('input', { name: 'prep_minutes', type: 'number', min: 1, max: 240, step: 1, value: set.prep_minutes, required: true })),
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'accepting_orders', checked: set.accepting_orders }), 'Accepting orders'),
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'public_listing', checked: set.public_listing }), 'Listed in the public catalog'),
    h('label', { class: 'check' }, always, 'Always open (no business hours)'),
    days,
    h('div', {}, h('button', { type: 'submit', class: 'primary', text: 'Save store' })))
  }

  const list = h('div', {})
  async function draw() {
    const mine = ((await api('GET', '/restaurants?per_page=100')) as { data?: Store[] }).data || []
    list.replaceChildren(h('h2', { text: 'Your stores' }), mine.length ? table(['Store', 'Type', 'Website', ''], mine.map((s) => {
      const slot = h('div', {})
      return h('tr', { data: { storeId: s.id } },
        h('td', { text: s.title }),
        h('td', { text: s.store_type }),
        h('td', {}, h('a', { href: s.url, 'data-store-url': '', text: s.url })),
        h('td', {},
          h('button', { type: 'button', 'aria-expanded': 'false', 'aria-label': `Edit ${s.title}`, text: 'Edit', on: { click: act(async (ev) => {
            const btn = ev.currentTarget as HTMLButtonElement
            if (slot.firstChild) { slot.replaceChildren(); btn.setAttribute('aria-expanded', 'false'); return }
            slot.replaceChildren(await editForm(s)); btn.setAttribute('aria-expanded', 'true')
          }) } }), ' ',
          h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${s.title}`, text: 'Remove', on: { click: act(async () => {
            if (!confirm(`Remove ${s.title}? Its website and menu go offline; its order history is kept.`)) return
            // 409 while orders are in progress: the API's message says so and nothing changes.
            await api('DELETE', `/restaurants/${s.id}`)
            await loadStores(store && store.id !== s.id ? store.id : undefined)
            await draw()
            say(`${s.title} removed.`)
          }) } }),
          slot))
    })) : h('p', { class: 'muted', text: 'No store yet: create your first one below.' }))
  }
  await draw()
  view.replaceChildren(list, create, zones)
  if (new URLSearchParams(location.search).get('first') && !store) say('Create a store to start: the other pages need one.')
}

// ---- API tokens and storefront tokens ----

const CAPS = ['*', 'read', 'write', ...['restaurants', 'menu', 'orders', 'customers', 'analytics', 'drivers', 'webhooks'].flatMap((r) => [`${r}:read`, `${r}:write`])]

/** A secret shown once: the server never shows it again; a button beside it copies it. */
function secretBox(label: string, value: string): HTMLElement {
  const code = h('code', { text: value })
  return h('div', { class: 'secret', role: 'status', data: { secret: '' } },
    h('b', { text: `${label} — copy it now, it is shown only once:` }), h('br'), code, ' ', copyButton(value, label, () => code))
}

async function tokensPage(): Promise<void> {
  const secret = h('div', {})
  const draw = async (): Promise<void> => {
    // Storefront tokens are per store: none to show before the account has a store.
    const [list, sf] = await Promise.all([api('GET', '/tokens'), store ? api('GET', `${S()}/storefront-tokens`) : []]) as [Json[], Json[]]
    const create = h('form', { class: 'card', on: { submit: act(async (ev) => {
      const fd = new FormData(ev.target)
      const exp = fd.get('expires')
      const r = await api('POST', '/tokens', { name: fd.get('name'), capabilities: fd.getAll('capabilities'), expires_at: exp ? new Date(`${exp}T23:59:59`).toISOString() : null })
      secret.replaceChildren(secretBox(`API token “${r.name || r.prefix}”`, r.token))
      say('Token created.'); ev.target.reset(); await draw()
    }) } }, h('h2', { text: 'Create an API token' }),
    h('label', {}, 'Name', h('input', { name: 'name', maxlength: 100, placeholder: 'e.g. POS integration' })),
    h('fieldset', {}, h('legend', { text: 'Capabilities' }), CAPS.map((c) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'capabilities', value: c }), c))),
    h('label', {}, 'Expires (optional)', h('input', { type: 'date', name: 'expires' })),
    h('button', { type: 'submit', class: 'primary', text: 'Create token' }))
    const state = (t: Json): string => (t.revoked_at ? `revoked ${when(t.revoked_at)}` : t.expires_at && Date.parse(t.expires_at) < Date.now() ? 'expired' : 'active')
    const rows = list.map((t) => h('tr', { data: { tokenId: t.id } },
      h('td', { text: t.name || '—' }), h('td', {}, h('code', { text: `${t.prefix}…` })), h('td', { text: t.capabilities.join(' ') }),
      h('td', { text: t.expires_at ? when(t.expires_at) : 'never' }), h('td', { text: state(t) }),
      h('td', {}, t.revoked_at ? null : h('button', { type: 'button', class: 'danger', on: { click: act(async () => {
        await api('DELETE', `/tokens/${t.id}`); say('Token revoked.'); await draw()
      }) }, text: 'Revoke' }))))
    const sfRows = sf.map((t) => h('tr', { data: { storefrontTokenId: t.id } }, h('td', { text: `#${t.id}` }), h('td', { text: t.scopes.join(' ') }), h('td', { text: when(t.created_at) }),
      h('td', { text: t.revoked_at ? 'revoked' : 'active' }),
      h('td', {}, t.revoked_at ? null : h('button', { type: 'button', class: 'danger', on: { click: act(async () => {
        await api('DELETE', `${S()}/storefront-tokens/${t.id}`); say('Storefront token revoked.'); await draw()
      }) }, text: 'Revoke' }))))
    const apiPart = [secret, create,
      h('h2', { text: 'API tokens' }), list.length ? table(['Name', 'Token', 'Capabilities', 'Expires', 'State', ''], rows) : h('p', { class: 'muted', text: 'No tokens yet.' })]
    if (!store) return void view.replaceChildren(...apiPart)
    view.replaceChildren(...apiPart,
      h('h2', { text: `Storefront tokens of ${store.title}` }),
      h('p', { class: 'muted', text: 'For a storefront or kiosk of this store (header X-Storefront-Token): menu and ordering only.' }),
      sf.length ? table(['Token', 'Scopes', 'Created', 'State', ''], sfRows) : h('p', { class: 'muted', text: 'None yet.' }),
      h('button', { type: 'button', on: { click: act(async () => {
        const r = await api('POST', `${S()}/storefront-tokens`, {})
        secret.replaceChildren(secretBox('Storefront token', r.token)); say('Storefront token created.'); await draw()
      }) }, text: 'Create storefront token' }))
  }
  await draw()
}

// ---- Webhooks ----

async function webhooksPage(): Promise<void> {
  const secret = h('div', {})
  const log = h('div', { id: 'delivery-log' })
  const showLog = async (ep: Json): Promise<void> => {
    const d = await api('GET', `/webhook-endpoints/${ep.id}/deliveries`)
    const rows = (d.data || []).map((x: Json) => h('tr', { data: { deliveryId: x.id, status: x.status } },
      h('td', {}, h('code', { text: x.webhook_id })), h('td', { text: x.event }), h('td', { text: x.status }),
      h('td', { class: 'num', text: x.attempt_count }),
      h('td', {}, (x.attempts || []).length ? h('ol', {}, x.attempts.map((a: Json) => h('li', { text: `#${a.attempt} ${a.http_status ?? a.error ?? ''} ${a.response_excerpt ? '— ' + a.response_excerpt.slice(0, 120) : ''}` }))) : h('span', { class: 'muted', text: 'no attempt yet' })),
      h('td', {}, h('button', { type: 'button', on: { click: act(async () => {
        const r = await api('POST', `/webhook-endpoints/${ep.id}/deliveries/${x.id}/requeue`)
        say(`Re-queued as ${r.webhook_id}.`); await showLog(ep)
      }) }, text: 'Re-queue' }))))
    log.replaceChildren(h('h2', { text: `Deliveries to ${ep.url}` }),
      rows.length ? table(['Webhook id', 'Event', 'Status', 'Attempts', 'Attempts detail', ''], rows) : h('p', { class: 'muted', text: 'No deliveries yet.' }))
  }
  const draw = async (): Promise<void> => {
    const list = await api('GET', '/webhook-endpoints')
    const create = h('form', { class: 'card', on: { submit: act(async (ev) => {
      const f = formData(ev.target)
      const events = f.events!.split(/[\s,]+/).filter(Boolean)
      const r = await api('POST', '/webhook-endpoints', { url: f.url, events })
      secret.replaceChildren(secretBox(`Signing secret of ${r.url}`, r.secret))
      say('Endpoint created.'); ev.target.reset(); await draw()
    }) } }, h('h2', { text: 'Add an endpoint' }),
    h('label', {}, 'URL', h('input', { name: 'url', type: 'url', required: true, placeholder: 'the address of your receiver' })),
    h('label', {}, 'Events (comma separated, * for all)', h('input', { name: 'events', required: true, value: '*' })),
    h('button', { type: 'submit', class: 'primary', text: 'Add endpoint' }))
    const rows = (list.data || []).map((ep: Json) => h('tr', { data: { endpointId: ep.id } },
      h('td', { text: ep.url }), h('td', { text: ep.events.join(' ') }), h('td', {}, h('span', { class: ep.state === 'active' ? 'pill live' : 'pill warn', text: ep.state.replace('_', ' ') })),
      h('td', {},
        h('button', { type: 'button', on: { click: act(async () => { await api('POST', `/webhook-endpoints/${ep.id}/ping`); say('Ping queued.'); await showLog(ep) }) }, text: 'Send test ping' }), ' ',
        h('button', { type: 'button', on: { click: act(async () => { await api('POST', `/webhook-endpoints/${ep.id}/${ep.paused ? 'resume' : 'pause'}`); await draw() }) }, text: ep.paused ? 'Resume' : 'Pause' }), ' ',
        h('button', { type: 'button', on: { click: act(() => showLog(ep)) }, text: 'Deliveries' }), ' ',
        h('button', { type: 'button', class: 'danger', on: { click: act(async () => {
          if (!confirm(`Delete ${ep.url}?`)) return
          await api('DELETE', `/webhook-endpoints/${ep.id}`); log.replaceChildren(); await draw()
        }) }, text: 'Delete' }))))
    view.replaceChildren(secret, create, h('h2', { text: 'Endpoints' }),
      rows.length ? table(['URL', 'Events', 'State', 'Actions'], rows) : h('p', { class: 'muted', text: 'No endpoints yet.' }), log)
  }
  await draw()
}

// ---- Analytics ----

/** A day of `GET …/analytics/daily`. */
interface Day { date: string; orders: number; revenue: number; paid: number; refunded: number; net: number }

/** 0, the middle and the top of an axis (integers for counts), without repeats. */
const ticks = (lo: number, hi: number, whole: boolean): number[] => [...new Set([lo, ...(lo < 0 && hi > 0 ? [0] : []), whole ? Math.round((lo + hi) / 2) : (lo + hi) / 2, hi])].sort((a, b) => a - b)

/**
 * Orders (bars, the left axis) and paid revenue net of refunds (the line, its own axis on the right,
 * in the store's currency) per day, with a legend (issue 34 item 14). The line is `net` of
 * `GET …/analytics/daily`, whose days add up to the summary's `revenue.net`; a day of refunds only
 * goes below zero. SVG attributes and classes only (no inline style: CSP).
 */
function chart(days: Day[]): Element {
  const W = 640, H = 260, L = 40, R = 72, T = 12, B = 28
  const plotH = H - T - B
  const maxO = Math.max(1, ...days.map((d) => d.orders))
  const loR = Math.min(0, ...days.map((d) => d.net))
  const hiR = Math.max(loR === 0 ? 1 : 0, ...days.map((d) => d.net))
  const yO = (v: number) => T + (1 - v / maxO) * plotH
  const yR = (v: number) => T + ((hiR - v) / (hiR - loR)) * plotH
  const bw = (W - L - R) / Math.max(1, days.length)
  const label = (x: number, y: number, text: string, anchor = 'start', cls = 'axis-label') => h('text', { x, y, class: cls, 'text-anchor': anchor, 'dominant-baseline': 'middle', text })
  const svg = h('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': 'chart-title' },
    h('title', { id: 'chart-title', text: `Orders per day (bars, left axis, up to ${maxO}) and paid revenue net of refunds per day (line, right axis, from ${money(loR)} to ${money(hiR)})` }),
    // The axes: orders on the left, revenue on the right, each with its ticks.
    h('line', { x1: L, y1: T, x2: L, y2: T + plotH, class: 'axis' }),
    h('line', { x1: W - R, y1: T, x2: W - R, y2: T + plotH, class: 'axis revenue' }),
    h('line', { x1: L, y1: yO(0), x2: W - R, y2: yO(0), class: 'axis' }),
    ...ticks(0, maxO, true).map((v) => label(L - 4, yO(v), String(v), 'end', 'axis-label orders-tick')),
    ...ticks(loR, hiR, false).map((v) => label(W - R + 4, yR(v), money(v), 'start', 'axis-label revenue-tick')),
    ...days.map((d, i) => {
      const bh = (d.orders / maxO) * plotH
      return h('rect', { x: L + i * bw + 1, y: T + plotH - bh, width: Math.max(1, bw - 2), height: bh, class: 'bar' }, h('title', { text: `${d.date}: ${d.orders} orders, paid ${money(d.paid)}, refunded ${money(d.refunded)}, net ${money(d.net)}` }))
    }),
    loR < 0 ? h('line', { x1: L, y1: yR(0), x2: W - R, y2: yR(0), class: 'axis zero' }) : null,
    h('polyline', { class: 'net-line', fill: 'none', 'stroke-width': 2, points: days.map((d, i) => `${L + i * bw + bw / 2},${yR(d.net)}`).join(' ') }),
    label(L, H - 8, days[0] ? days[0].date : ''),
    label(W - R, H - 8, days.length ? days[days.length - 1]!.date : '', 'end'))
  const legend = h('ul', { class: 'legend', 'aria-label': 'Legend' },
    h('li', { class: 'key-orders', text: 'Orders per day (bars, left axis)' }),
    h('li', { class: 'key-net', text: 'Paid revenue net of refunds per day (line, right axis)' }))
  return h('figure', { class: 'chart-box' }, svg, legend)
}

async function analyticsPage(): Promise<void> {
  const out = h('div', {})
  const today = new Date().toISOString().slice(0, 10)
  const monthAgo = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10)
  const form = h('form', { class: 'card row', on: { submit: act(async (ev) => { const f = formData(ev.target); await load({ from: f.from!, to: f.to! }) }) } },
    h('label', {}, 'From', h('input', { type: 'date', name: 'from', value: monthAgo, required: true })),
    h('label', {}, 'To', h('input', { type: 'date', name: 'to', value: today, required: true })),
    h('button', { type: 'submit', class: 'primary', text: 'Show' }))
  async function load({ from, to }: { from: string; to: string }): Promise<void> {
    const q = `?from=${from}&to=${to}`
    const [sum, daily] = await Promise.all([api('GET', `${S()}/analytics${q}`), api('GET', `${S()}/analytics/daily${q}`)])
    out.replaceChildren(
      h('div', { class: 'kpis' },
        h('div', { class: 'kpi' }, 'Orders', h('b', { text: sum.orders.total })),
        h('div', { class: 'kpi' }, 'Revenue', h('b', { text: money(sum.revenue.gross) })),
        h('div', { class: 'kpi', data: { kpi: 'net' } }, 'Paid, net of refunds', h('b', { text: money(sum.revenue.net) })),
        h('div', { class: 'kpi', data: { kpi: 'refunded' } }, 'Refunded', h('b', { text: money(sum.revenue.refunded) })),
        h('div', { class: 'kpi' }, 'Average order', h('b', { text: money(sum.revenue.avg_order_value) }))),
      chart(daily.days),
      h('h2', { text: 'Top items' }),
      sum.top_items.length ? table(['Item', 'Quantity'], sum.top_items.map((t: Json) => h('tr', {}, h('td', { text: t.name }), h('td', { text: t.quantity })))) : h('p', { class: 'muted', text: 'No sales in this range.' }),
      h('h2', { text: 'By status' }),
      table(['Status', 'Orders'], Object.entries(sum.orders.by_status as Record<string, number>).map(([k, n]) => h('tr', {}, h('td', { text: k }), h('td', { class: 'num', text: n })))))
  }
  view.replaceChildren(form, out)
  await load({ from: monthAgo, to: today })
}

// ---- Staff, drivers, coupons: list, create, edit, remove ----

/**
 * A list of one resource with a create form, an edit form per row and a remove button.
 * `fields`: [name, label, input attributes, toValue?]; `cols`: [heading, row → text].
 */
/** One field of a crud form: name, label, input attributes (`options`: a select) and how its text becomes the value. */
type Field = [name: string, label: string, attrs: Record<string, unknown> & { options?: string[]; type?: string; required?: boolean; checked?: boolean }, conv?: (raw: string) => unknown]
interface Crud {
  noun: string
  list(): Promise<Json[]>
  create(body: Record<string, unknown>): Promise<Json>
  update(row: Json, body: Record<string, unknown>): Promise<Json>
  remove(row: Json): Promise<Json>
  fields: Field[]
  cols: Array<[heading: string, get: (row: Json) => string]>
  /** The answer field to show once (a driver's token). */
  shownOnce?: string
}

function crudPage({ noun, list, create, update, remove, fields, cols, shownOnce }: Crud): Promise<void> {
  const secret = h('div', {})
  const form = (values: Json, submit: (body: Record<string, unknown>) => Promise<Json>, label: string) => h('form', { class: 'card', on: { submit: act(async (ev) => {
    const fd = new FormData(ev.target)
    const body: Record<string, unknown> = {}
    for (const [name, , attrs, conv] of fields) {
      const raw = attrs.type === 'checkbox' ? fd.get(name) === 'on' : fd.get(name)
      if (raw === '' || raw == null) continue
      body[name] = conv ? conv(String(raw)) : raw
    }
    const r = await submit(body)
    if (shownOnce && r && r[shownOnce]) secret.replaceChildren(secretBox(`The ${noun}'s ${shownOnce}`, r[shownOnce]))
    say(`${noun[0]!.toUpperCase() + noun.slice(1)} saved.`); await draw()
  }) } }, h('h2', { text: label }),
  fields.map(([name, text, attrs]) => {
    const value = values ? values[name] : undefined
    if (attrs.options) return h('label', {}, text, h('select', { name }, attrs.options.map((o) => h('option', { value: o, selected: value === o, text: o }))))
    if (attrs.type === 'checkbox') return h('label', { class: 'check' }, h('input', { type: 'checkbox', name, checked: values ? !!value : attrs.checked }), text)
    const { options, ...rest } = attrs
    return h('label', {}, text, h('input', { name, ...rest, required: values ? false : rest.required, value: value ?? null }))
  }), h('button', { type: 'submit', class: 'primary', text: label }))
  async function draw(): Promise<void> {
    const rows = await list()
    view.replaceChildren(secret, form(null, create, `Add a ${noun}`),
      rows.length ? table([...cols.map((c) => c[0]), ''], rows.map((r) => {
        const edit = form(r, (b) => update(r, b), `Save ${noun}`)
        edit.hidden = true
        return h('tr', { data: { rowId: r.id } }, cols.map(([, get]) => h('td', { text: get(r) })), h('td', {},
          h('button', { type: 'button', on: { click: () => { edit.hidden = !edit.hidden } }, text: 'Edit' }), ' ',
          h('button', { type: 'button', class: 'danger', on: { click: act(async () => {
            if (!confirm(`Remove this ${noun}?`)) return
            await remove(r); say(`${noun[0]!.toUpperCase() + noun.slice(1)} removed.`); await draw()
          }) }, text: 'Remove' }), edit))
      })) : h('p', { class: 'muted', text: `No ${noun}s yet.` }))
  }
  return draw()
}

/** The four calls of a collection under the chosen store (`/restaurants/{id}/{path}`, its rows by id). */
const storeCollection = (path: string): Pick<Crud, 'list' | 'create' | 'update' | 'remove'> => ({
  list: () => api('GET', `${S()}/${path}`).then((r) => r.data || r),
  create: (b) => api('POST', `${S()}/${path}`, b),
  update: (r, b) => api('PUT', `${S()}/${path}/${r.id}`, b),
  remove: (r) => api('DELETE', `${S()}/${path}/${r.id}`),
})

const staffPage = () => crudPage({
  noun: 'staff member',
  ...storeCollection('staff'),
  fields: [['name', 'Name', { required: true }], ['email', 'Email', { type: 'email', required: true }], ['role', 'Role', { options: ['manager', 'cashier', 'kitchen', 'waiter'] }],
    ['password', 'Password (8+)', { type: 'password', minlength: 8, required: true, autocomplete: 'new-password' }], ['pin', 'PIN (optional)', { inputmode: 'numeric', pattern: '\\d{4,8}' }], ['station', 'Station (optional)', {}]],
  cols: [['Name', (r) => r.name], ['Email', (r) => r.email], ['Role', (r) => r.role], ['Station', (r) => r.station || '']],
})

const driversPage = () => crudPage({
  noun: 'driver', shownOnce: 'token',
  list: () => api('GET', '/drivers?per_page=50').then((r) => r.data),
  create: (b) => api('POST', '/drivers', { ...b, restaurant_id: b.this_store ? theStore().id : null, this_store: undefined }),
  update: (r, b) => api('PUT', `/drivers/${r.id}`, { name: b.name, phone: b.phone }),
  remove: (r) => api('DELETE', `/drivers/${r.id}`),
  fields: [['name', 'Name', { required: true }], ['phone', 'Phone', { type: 'tel', required: true }], ['this_store', 'Only this store', { type: 'checkbox' }]],
  cols: [['Name', (r) => r.name], ['Phone', (r) => r.phone], ['Store', (r) => (r.restaurant_id ? stores.find((s) => s.id === r.restaurant_id)?.title || `#${r.restaurant_id}` : 'all stores')], ['On shift', (r) => (r.on_shift ? 'yes' : 'no')]],
})

const couponsPage = () => crudPage({
  noun: 'coupon',
  ...storeCollection('coupons'),
  fields: [['code', 'Code', { required: true, pattern: '[A-Za-z0-9_\\-]{2,40}' }], ['kind', 'Kind', { options: ['percent', 'fixed'] }], ['value', 'Value', { type: 'number', step: '0.01', min: '0.01', required: true }, Number],
    ['min_order', 'Minimum order', { type: 'number', step: '0.01', min: '0' }, Number], ['usage_limit', 'Usage limit', { type: 'number', min: '1', step: '1' }, Number], ['active', 'Active', { type: 'checkbox', checked: true }]],
  cols: [['Code', (r) => r.code], ['Kind', (r) => r.kind], ['Value', (r) => (r.kind === 'fixed' ? money(r.value) : `${r.value}%`)], ['Uses', (r) => `${r.uses}${r.usage_limit ? ' / ' + r.usage_limit : ''}`], ['Active', (r) => (r.active ? 'yes' : 'no')]],
})

// ---- Apps (docs/apps.md): installed apps (open, uninstall) and the marketplace ----

const priceText = (a: Json): string => a.pricing === 'free' ? 'Free'
  : a.pricing === 'recurring' ? `${money(a.price, a.currency)} / 30 days`
  : `${money(a.price, a.currency)} per unit${a.cap != null ? `, at most ${money(a.cap, a.currency)} / 30 days` : ''}`

async function appsPage(): Promise<void> {
  const draw = async (): Promise<void> => {
    const [installed, market] = await Promise.all([api('GET', '/apps/installations'), api('GET', '/apps')]) as [Json[], Json[]]
    const mine = new Set(installed.map((i) => i.app_id))
    const rows = installed.map((i) => h('tr', { data: { installationId: i.id, appId: i.app_id } },
      h('td', {}, h('span', { text: i.app_name }), i.kind === 'agent' ? h('span', { class: 'muted', text: ` (AI agent${i.client_uri ? `, ${i.client_uri}` : ''})` }) : null), h('td', { text: priceText(i) }), h('td', { text: i.scopes.join(' ') }), h('td', { text: when(i.installed_at) }),
      h('td', {},
        i.embed_url ? h('a', { href: `${SITE}/apps/${i.app_id}/embed${store ? `?store=${store.id}` : ''}`, text: 'Open' }) : null, ' ',
        h('button', { type: 'button', class: 'danger', on: { click: act(async () => {
          if (!confirm(`${i.kind === 'agent' ? 'Revoke' : 'Uninstall'} ${i.app_name}? Its access ends at once.`)) return
          await api('DELETE', `/apps/installations/${i.id}`); say(`${i.app_name} ${i.kind === 'agent' ? 'revoked' : 'uninstalled'}.`); await draw()
        }) }, text: i.kind === 'agent' ? 'Revoke' : 'Uninstall' }))))
    const listing = market.map((a) => h('tr', { data: { appId: a.id } },
      h('td', {}, h('strong', { text: a.name }), a.description ? h('p', { class: 'muted', text: a.description }) : null),
      h('td', { text: priceText(a) }), h('td', { text: a.scopes.join(' ') }),
      h('td', { text: mine.has(a.id) ? 'Installed' : 'Install from the app\'s own site (it asks for your consent here)' })))
    view.replaceChildren(
      h('h2', { text: 'Installed apps' }),
      rows.length ? table(['App', 'Price', 'Access', 'Installed', 'Actions'], rows) : h('p', { class: 'muted', text: 'No apps installed.' }),
      h('h2', { text: 'Marketplace' }),
      listing.length ? table(['App', 'Price', 'Access', ''], listing) : h('p', { class: 'muted', text: 'No apps published yet.' }))
  }
  await draw()
}

// ---- start ----

const PAGES: Record<string, () => Promise<void>> = { orders: ordersPage, stores: storesPage, dispatch: dispatchPage, menu: menuPage, website: websitePage, reservations: reservationsPage, shifts: shiftsPage, guests: guestsPage, tokens: tokensPage, webhooks: webhooksPage, analytics: analyticsPage, staff: staffPage, drivers: driversPage, coupons: couponsPage, apps: appsPage }
/** Pages that work for an account without a store; the others lead to the Stores page instead. */
const STORELESS = ['stores', 'tokens', 'webhooks', 'apps']

async function start(): Promise<void> {
  try {
    await pickStore()
    if (!store && !STORELESS.includes(PAGE)) {
      location.replace(`${SITE}/dashboard/stores?first=1`)
      return
    }
    // The setup checklist (issue 34 item 16) heads the pages a new owner lands on.
    if (PAGE === 'orders' || PAGE === 'stores') await setupChecklist()
    await PAGES[PAGE]!()
  } catch (err) {
    fail(err)
  } finally {
    view.removeAttribute('aria-busy')
    body.dataset.ready = '1'
  }
}
void start()
