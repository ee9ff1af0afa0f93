// The Shifts view (docs/dashboard.md "Shifts"; issue 17 item 3): open a cash drawer's shift with a
// counted float, watch an open shift's running totals, close it with the counted cash and see
// over/short, and the history. The API computes every total; this page only shows them.

import { S, act, amount, api, h, money, say, table, view, when, type Json } from './core.js'

/** A shift's figure: `totals` of the Shift record (src/ops/money/shifts.ts). */
const fig = (sh: Json, key: string): number | null => (sh.totals ? sh.totals[key] : null)
const overShort = (sh: Json): number | null => fig(sh, 'over_short')
/** `+1.50 over`, `-2.00 short`, `even`: the sign and the word, never colour alone. */
export function overShortText(v: number | null): string {
  if (v == null) return ''
  if (Math.abs(v) < 0.005) return 'even'
  return v > 0 ? `+${money(v)} over` : `${money(v)} short`
}

export async function shiftsPage(): Promise<void> {
  const result = h('div', { id: 'shift-result' })
  const draw = async () => {
    // Each listed shift carries its totals, summed by the API when asked: an open one's are running.
    const [open, history] = await Promise.all([api('GET', `${S()}/shifts?status=open`), api('GET', `${S()}/shifts`)])
    const current = open.data || []
    view.replaceChildren(result, ...current.map(openShift), openForm(current.map((d: Json) => d.register as string)), h('h2', { text: 'History' }), historyTable(history.data || []))
  }

  /** An open shift: its running totals and the close form. */
  function openShift(sh: Json): HTMLElement {
    const close = h('form', { class: 'row', 'aria-label': `Close the ${sh.register} shift`, on: { submit: act(async (ev) => {
      const f = new FormData(ev.target)
      const closed = await api('POST', `${S()}/shifts/${sh.id}/close`, { counted_cash: Number(f.get('counted_cash')), note: f.get('note') || undefined })
      await draw()
      result.replaceChildren(h('div', { class: 'card', data: { closedShift: closed.id ?? sh.id } },
        h('h2', { text: `Shift closed (${closed.register ?? sh.register})` }),
        figures(closed),
        h('p', {}, h('b', { data: { overShort: amount(overShort(closed)) }, text: `Over/short: ${overShortText(overShort(closed))}` }))))
      say(`Shift closed: ${overShortText(overShort(closed))}.`)
    }) } },
    h('label', {}, 'Counted cash', h('input', { name: 'counted_cash', type: 'number', step: '0.01', min: '0', required: true })),
    h('label', {}, 'Note', h('input', { name: 'note', maxlength: 500 })),
    h('button', { type: 'submit', class: 'primary', text: 'Close shift' }))
    return h('section', { class: 'card', data: { openShift: sh.id }, 'aria-labelledby': `shift-${sh.id}` },
      h('h2', { id: `shift-${sh.id}`, text: `Open shift · register ${sh.register}` }),
      h('p', { class: 'muted', text: `Opened ${when(sh.opened_at)}` }),
      figures(sh), close)
  }

  /** Open a shift; the API refuses a second open shift on the same register (its message is shown). */
  function openForm(registers: string[]): HTMLElement {
    return h('form', { class: 'card', id: 'shift-open', on: { submit: act(async (ev) => {
      const f = new FormData(ev.target)
      const sh = await api('POST', `${S()}/shifts`, { opening_float: Number(f.get('opening_float')), register: f.get('register') || undefined })
      result.replaceChildren()
      say(`Shift opened on register ${sh.register} with a float of ${money(fig(sh, 'opening_float'))}.`)
      await draw()
    }) } },
    h('h2', { text: registers.length ? 'Open a shift on another register' : 'Open a shift' }),
    h('label', {}, 'Opening float', h('input', { name: 'opening_float', type: 'number', step: '0.01', min: '0', required: true, value: '0.00' })),
    h('label', {}, 'Register', h('input', { name: 'register', value: registers.includes('main') ? '' : 'main', maxlength: 40, placeholder: 'main' })),
    h('button', { type: 'submit', class: 'primary', text: 'Open shift' }))
  }
  await draw()
}

/** Float, cash and card taken, cash refunded, expected (and counted, over/short once closed). */
function figures(sh: Json): HTMLElement {
  const kpi = (label: string, key: string, v = fig(sh, key)) => (v == null ? null : h('div', { class: 'kpi', data: { figure: key } }, label, h('b', { text: money(v) })))
  return h('div', { class: 'kpis' },
    kpi('Float', 'opening_float'), kpi('Cash taken', 'cash_taken'), kpi('Card taken', 'card_taken'),
    kpi('Cash refunded', 'cash_refunded'), kpi('Expected cash', 'expected_cash'), kpi('Counted cash', 'counted_cash'))
}

function historyTable(shifts: Json[]): HTMLElement {
  if (!shifts.length) return h('p', { class: 'muted', text: 'No shift yet.' })
  return table(['Register', 'Opened', 'Closed', 'Float', 'Expected', 'Counted', 'Over/short'], shifts.map((sh: Json) => h('tr', { data: { shiftId: sh.id, status: sh.closed_at ? 'closed' : 'open' } },
    h('td', { text: sh.register }), h('td', { text: when(sh.opened_at) }), h('td', { text: sh.closed_at ? when(sh.closed_at) : 'open' }),
    h('td', { class: 'num', text: money(fig(sh, 'opening_float')) }), h('td', { class: 'num', text: money(fig(sh, 'expected_cash')) }),
    h('td', { class: 'num', text: money(fig(sh, 'counted_cash')) }), h('td', { class: 'num', text: overShortText(overShort(sh)) }))))
}
