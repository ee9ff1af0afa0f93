// The Reservations view (docs/dashboard.md "Reservations"; issue 17 item 4): one day's bookings
// with cancel / seat / no-show, a booking form that asks the API for the day's free slots, and the
// store's tables. Capacity, lead time and hours are the API's rules; its refusals are shown as worded.

import { S, act, api, h, say, table, view, type Json } from './core.js'

const rowsOf = (r: Json): Json[] => r.data
/**
 * Bookings are in the store's time zone (its settings' `timezone`): the day shown, the times, and
 * the wall time typed into the form are the store's, wherever the owner's browser is. The API
 * answers times with the store's offset and takes any offset.
 */
function offsetAt(tz: string, ms: number): number {
  // The wall clock of `tz` at `ms` read as if it were UTC, minus `ms`: the zone's offset then.
  const p = Object.fromEntries(new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
    .formatToParts(new Date(ms)).map((x) => [x.type, x.value]))
  return Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second)) - Math.floor(ms / 1000) * 1000
}
/** The instant of the wall time `date` `hm` (`HH:MM`) in `tz`. */
export function zonedInstant(tz: string, date: string, hm = '00:00'): number {
  const wall = Date.parse(`${date}T${hm}:00Z`)
  return wall - offsetAt(tz, wall - offsetAt(tz, wall))
}
/** `YYYY-MM-DDTHH:MM` of an instant on the wall clock of `tz`. */
export const wallClock = (tz: string, at: string): string => new Date(Date.parse(at) + offsetAt(tz, Date.parse(at))).toISOString().slice(0, 16)
const tableName = (t: Json): string => t.name

export async function reservationsPage(): Promise<void> {
  const settings = await api('GET', `${S()}/settings`)
  const tz = settings.timezone || 'UTC'
  const at = (iso: string): string => wallClock(tz, iso).slice(11, 16)
  let day = new URLSearchParams(location.search).get('date') || wallClock(tz, new Date().toISOString()).slice(0, 10)
  let tables: Json[] = []
  const list = h('div', { id: 'reservation-list' })
  const slots = h('div', { id: 'slots', 'aria-live': 'polite' })
  const tablesBox = h('div', { id: 'tables' })

  const dayForm = h('form', { class: 'card row', id: 'reservation-day', on: { submit: act(async (ev) => { day = String(new FormData(ev.target).get('date')); await load() }) } },
    h('label', {}, 'Day', h('input', { type: 'date', name: 'date', value: day, required: true })),
    h('button', { type: 'submit', text: 'Show' }), h('span', { class: 'muted', text: `Times in ${tz}` }))

  async function load() {
    // `from` and `to` as one local date: the store's day, whole (the API reads dates in its zone).
    const r = await api('GET', `${S()}/reservations?from=${day}&to=${day}`)
    const rows = rowsOf(r)
    list.replaceChildren(h('h2', { text: `Bookings on ${day}` }),
      rows.length ? table(['Time', 'Name', 'Party', 'Table', 'Phone', 'Note', 'Status', ''], rows.map(row)) : h('p', { class: 'muted', text: 'No booking this day.' }),
      r.last_page > 1 ? h('p', { class: 'muted', text: `The first ${rows.length} of ${r.total} bookings.` }) : '')
  }

  const change = (rv: Json, verb: string, done: string) => act(async () => {
    if (verb === 'cancel' && !confirm(`Cancel ${rv.name}'s booking?`)) return
    await api('POST', `${S()}/reservations/${rv.id}/${verb}`, {})
    say(`${rv.name}: ${done}.`)
    await load()
  })

  function row(rv: Json): HTMLElement {
    const active = rv.status === 'booked'
    return h('tr', { data: { reservationId: rv.id, status: rv.status } },
      h('td', { text: at(rv.starts_at) }), h('td', { text: rv.name }), h('td', { class: 'num', text: rv.party_size }),
      h('td', { text: rv.table ? tableName(rv.table) : '' }), h('td', { text: rv.phone || '' }),
      h('td', { text: rv.note || '' }), h('td', { text: rv.status.replace(/_/g, '-') }),
      h('td', {}, active ? [
        h('button', { type: 'button', on: { click: change(rv, 'seat', 'seated') }, text: 'Seat', 'aria-label': `Seat ${rv.name}` }), ' ',
        h('button', { type: 'button', on: { click: change(rv, 'no-show', 'marked no-show') }, text: 'No-show', 'aria-label': `${rv.name} did not come` }), ' ',
        h('button', { type: 'button', class: 'danger', on: { click: change(rv, 'cancel', 'cancelled') }, text: 'Cancel', 'aria-label': `Cancel ${rv.name}'s booking` }),
      ] : null))
  }

  // New booking: the day's free slots for the party size fill the time; the API decides.
  const dateInput = h('input', { name: 'date', id: 'booking-date', type: 'date', value: day, required: true })
  const timeInput = h('input', { type: 'time', name: 'time', id: 'booking-time', required: true, step: 300 })
  const tableSelect = h('select', { name: 'table_id', id: 'booking-table' })
  const booking: HTMLFormElement = h('form', { class: 'card', id: 'booking', on: { submit: act(async (ev) => {
    const f = new FormData(ev.target)
    const made = await api('POST', `${S()}/reservations`, {
      name: f.get('name'), phone: f.get('phone') || undefined, party_size: Number(f.get('party_size')),
      starts_at: new Date(zonedInstant(tz, String(f.get('date')), String(f.get('time')))).toISOString(),
      table_id: f.get('table_id') ? Number(f.get('table_id')) : undefined, note: f.get('note') || undefined,
    })
    ev.target.reset()
    slots.replaceChildren()
    day = wallClock(tz, made.starts_at).slice(0, 10)
    dayForm.querySelector<HTMLInputElement>('input[name=date]')!.value = day
    say(`Booked ${made.name} for ${made.party_size} on ${day} at ${at(made.starts_at)}.`)
    await load()
  }) } },
  h('h2', { text: 'New booking' }),
  h('label', {}, 'Name', h('input', { name: 'name', required: true, maxlength: 120, autocomplete: 'off' })),
  h('label', {}, 'Phone', h('input', { name: 'phone', type: 'tel', maxlength: 40, autocomplete: 'off' })),
  h('label', {}, 'Party size', h('input', { name: 'party_size', type: 'number', min: '1', max: '1000', step: '1', value: '2', required: true })),
  h('label', { for: 'booking-date' }, 'Date', dateInput),
  h('label', { for: 'booking-time' }, 'Time', timeInput),
  h('label', { for: 'booking-table' }, 'Table', tableSelect),
  h('label', {}, 'Note', h('input', { name: 'note', maxlength: 500 })),
  h('div', { class: 'row' },
    h('button', { type: 'button', on: { click: act(async () => availability(new FormData(booking))) }, text: 'Check availability' }),
    h('button', { type: 'submit', class: 'primary', text: 'Book' })),
  slots)

  async function availability(f: FormData): Promise<void> {
    const r = await api('GET', `${S()}/reservations/availability?date=${encodeURIComponent(String(f.get('date')))}&party_size=${Number(f.get('party_size'))}`)
    const free = (r.slots as Json[]).filter((x) => x.free_tables > 0)
    slots.replaceChildren(free.length
      ? h('p', {}, 'Free times: ', ...free.map((x) => h('button', { type: 'button', class: 'slot', data: { slot: x.starts_at }, 'aria-label': `Choose ${at(x.starts_at)}`, on: { click: () => {
        dateInput.value = wallClock(tz, x.starts_at).slice(0, 10)
        timeInput.value = at(x.starts_at)
        timeInput.focus()
      } }, text: at(x.starts_at) })))
      : h('p', { class: 'muted', text: 'No free table for that party on that day.' }))
  }

  const drawTables = async () => {
    tables = await api('GET', `${S()}/tables`)
    tableSelect.replaceChildren(h('option', { value: '', text: 'Any free table' }), ...tables.filter((t) => t.active).map((t) => h('option', { value: t.id, text: `${tableName(t)} (${t.capacity})` })))
    tablesBox.replaceChildren(h('h2', { text: 'Tables' }),
      tables.length ? table(['Table', 'Seats'], tables.map((t) => h('tr', { data: { tableId: t.id } }, h('td', { text: tableName(t) }), h('td', { class: 'num', text: t.capacity }))))
        : h('p', { class: 'muted', text: 'No table yet: add the tables guests can book.' }),
      h('form', { class: 'card row', id: 'table-add', on: { submit: act(async (ev) => {
        const f = new FormData(ev.target)
        await api('POST', `${S()}/tables`, { name: f.get('name'), capacity: Number(f.get('capacity')) })
        say(`Table ${f.get('name')} added.`)
        await drawTables()
      }) } },
      h('label', {}, 'Table name', h('input', { name: 'name', required: true, maxlength: 20 })),
      h('label', {}, 'Seats', h('input', { name: 'capacity', type: 'number', min: '1', max: '1000', step: '1', value: '4', required: true })),
      h('button', { type: 'submit', text: 'Add table' })))
  }

  view.replaceChildren(dayForm, list, booking, tablesBox)
  await drawTables()
  await load()
}
