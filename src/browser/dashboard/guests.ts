// The Guests view (docs/dashboard.md "Guests"; issue 17 item 5): the documented segments with their
// counts as filters, and the searchable, paginated list of guests (one per person across orders,
// reservations and the customer app). Segment membership is computed by the API, never here.

import { S, act, api, h, money, table, view, when, type Json } from './core.js'

/** A segment of `GET …/guests/segments`, and the "All guests" chip drawn like one. */
interface Segment { key: string; definition: string; count: number | null }

/** The API's segment keys as the page names them; an unknown key is shown as it is. */
const LABELS: Record<string, string> = { new: 'New', regular: 'Regular', vip: 'VIP', lapsed: 'Lapsed', no_show: 'Frequent no-show' }
const label = (key: string): string => LABELS[key] || key

export async function guestsPage(): Promise<void> {
  const q = { search: '', segment: '', page: 1 }
  const filters = h('div', { class: 'row filters', role: 'group', 'aria-label': 'Segments', id: 'segments' })
  const out = h('div', { id: 'guest-list' })
  const search = h('form', { class: 'card row', role: 'search', id: 'guest-search', on: { submit: act(async (ev) => {
    q.search = String(new FormData(ev.target).get('search') || '').trim()
    q.page = 1
    await load()
  }) } },
  h('label', {}, 'Search name, phone or email', h('input', { type: 'search', name: 'search', maxlength: 100, autocomplete: 'off' })),
  h('button', { type: 'submit', class: 'primary', text: 'Search' }))

  let segments: Segment[] = []
  let everyone: number | null = null
  const drawFilters = () => filters.replaceChildren(
    chip({ key: '', definition: 'Every guest of the store', count: everyone }),
    ...segments.map(chip))
  /** A segment as a toggle button (`aria-pressed`), its definition as its description. */
  function chip(s: Segment): HTMLElement {
    const key = s.key
    return h('button', { type: 'button', class: 'chip', 'aria-pressed': String(q.segment === key), data: { segment: key }, title: s.definition,
      on: { click: act(async () => { q.segment = key; q.page = 1; drawFilters(); await load() }) } },
    key ? label(key) : 'All guests', s.count != null ? h('span', { class: 'pill', text: s.count }) : null)
  }

  async function load() {
    const params = new URLSearchParams({ page: String(q.page) })
    if (q.search) params.set('search', q.search)
    if (q.segment) params.set('segment', q.segment)
    const r = await api('GET', `${S()}/guests?${params}`)
    const rows = r.data
    const chosen = segments.find((s) => s.key === q.segment)
    out.replaceChildren(
      h('p', { class: 'muted', id: 'guest-count', text: `${r.total} guest${r.total === 1 ? '' : 's'}${chosen ? ` in ${label(chosen.key)}` : ''}${q.search ? ` matching “${q.search}”` : ''}${chosen ? ` — ${chosen.definition}` : ''}` }),
      rows.length ? table(['Name', 'Phone', 'Email', 'Visits', 'Spend', 'First visit', 'Last visit', 'No-shows', 'Segments'], rows.map((g: Json) => h('tr', { data: { guestId: g.id } },
        h('td', { text: g.name || '' }), h('td', { text: g.phone || '' }), h('td', { text: g.email || '' }),
        h('td', { class: 'num', text: g.visits }), h('td', { class: 'num', text: money(g.spend, g.currency) }),
        h('td', { text: when(g.first_visit) }), h('td', { text: when(g.last_visit) }),
        h('td', { class: 'num', text: g.no_shows }), h('td', { text: g.segments.map(label).join(', ') }))))
        : h('p', { class: 'muted', text: 'No guest found.' }),
      pager(r) ?? '')
  }

  /** Previous / next page of the §2.1 pagination envelope. */
  function pager(r: { last_page?: number }): HTMLElement | null {
    const last = r.last_page || 1
    if (last <= 1) return null
    const go = (page: number) => act(async () => { q.page = page; await load() })
    return h('nav', { class: 'row', 'aria-label': 'Guest pages' },
      h('button', { type: 'button', disabled: q.page <= 1, on: { click: go(q.page - 1) }, text: 'Previous' }),
      h('span', { text: `Page ${q.page} of ${last}` }),
      h('button', { type: 'button', disabled: q.page >= last, on: { click: go(q.page + 1) }, text: 'Next' }))
  }

  view.replaceChildren(filters, search, out)
  const seg = await api('GET', `${S()}/guests/segments`) as { segments: Segment[]; guests: number }
  segments = seg.segments
  everyone = seg.guests
  drawFilters()
  await load()
}
