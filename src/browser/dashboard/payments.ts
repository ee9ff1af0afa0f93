// The order detail's payments panel (docs/dashboard.md "Payments on the order detail"; issue 17
// items 1-2): what the order owes, what was paid and refunded, taking a cash or card payment with a
// tip, splitting the bill evenly or by lines, and refunding. Every rule (overpayment, a cancelled
// order, refund limits, the open shift a cash payment counts toward) is the API's; its message is shown.

import type { OrderView } from '../../ws/order-frames.ts'
import { S, act, amount as plain, api, h, money, say, table, when, type Json } from './core.js'

const METHODS = [['cash', 'Cash'], ['card', 'Card']] as const
const num = (v: FormDataEntryValue | null): number | undefined => (v === '' || v == null ? undefined : Number(v))
const methodSelect = (id: string): HTMLSelectElement => h('select', { name: 'method', id }, METHODS.map(([v, t]) => h('option', { value: v, text: t })))

/**
 * The panel of order `o`: a `<section>` drawn from `GET …/payments` and `GET …/refunds`. `changed`
 * is called after a payment or refund is taken (the detail redraws, with the order's new `is_paid`).
 */
export async function paymentsPanel(o: OrderView, changed: () => Promise<unknown>): Promise<HTMLElement> {
  const base = `${S()}/orders/${o.id}`
  const section = h('section', { class: 'payments', 'aria-labelledby': 'payments-title', id: 'payments' })
  let pay: Json, refunds: Json
  try {
    [pay, refunds] = await Promise.all([api('GET', `${base}/payments`), api('GET', `${base}/refunds`)])
  } catch (err) {
    section.append(h('h3', { id: 'payments-title', text: 'Payments' }), h('p', { class: 'problem', text: `Payments could not be loaded: ${(err as Error).message}` }))
    return section
  }
  const payments = pay.data
  const { total, paid, balance_due: due, tips, is_paid: isPaid } = pay.balance
  const { refunded, refundable } = refunds
  const open = !isPaid && o.status !== 'cancelled' && due > 0

  const taken = async (payload: Record<string, unknown>, what: string): Promise<void> => {
    const r = await api('POST', `${base}/payments`, payload)
    await changed()
    say(`${what} of ${money(r.payment.amount)} taken${r.balance.is_paid ? ': the order is paid' : `; ${money(r.balance.balance_due)} still due`}.`)
  }

  // Take a payment: the balance by default; a smaller amount leaves the rest due (a partial payment).
  const amount = h('input', { name: 'amount', id: 'pay-amount', type: 'number', step: '0.01', min: '0.01', max: plain(due), required: true, value: plain(due) })
  const takeForm = h('form', { class: 'row', id: 'take-payment', 'aria-label': 'Take a payment', on: { submit: act(async (ev) => {
    const f = new FormData(ev.target)
    await taken({ amount: Number(f.get('amount')), method: f.get('method'), tip_amount: num(f.get('tip_amount')) }, `${f.get('method') === 'cash' ? 'Cash' : 'Card'} payment`)
  }) } },
  h('label', { for: 'pay-amount' }, 'Amount', amount),
  h('label', { for: 'pay-method' }, 'Method', methodSelect('pay-method')),
  h('label', { for: 'pay-tip' }, 'Tip', h('input', { name: 'tip_amount', id: 'pay-tip', type: 'number', step: '0.01', min: '0', placeholder: '0.00' })),
  h('button', { type: 'submit', class: 'primary', text: 'Take payment' }))

  // Split evenly: the API's parts for N people; a part's button puts its amount in the form above.
  const parts = h('div', { id: 'split-parts' })
  const splitForm = h('form', { class: 'row', id: 'split-even', 'aria-label': 'Split the bill evenly', on: { submit: act(async (ev) => {
    const n = Number(new FormData(ev.target).get('split'))
    const bill = await api('GET', `${base}/bill?split=${n}`)
    const split = bill.split || []
    parts.replaceChildren(h('p', {}, `${split.length} parts of the ${money(bill.balance.balance_due)} due: `,
      ...split.map((p: Json) => h('button', { type: 'button', data: { part: p.part }, on: { click: () => { amount.value = plain(p.amount); amount.focus() } }, text: `Part ${p.part}: ${money(p.amount)}` }))))
  }) } },
  h('label', { for: 'split-n' }, 'People', h('input', { name: 'split', id: 'split-n', type: 'number', min: '2', max: '50', step: '1', value: '2', required: true })),
  h('button', { type: 'submit', text: 'Split evenly' }))

  // Split by lines: each line's unpaid quantity from the bill; pay the chosen quantities.
  const byLines = h('div', { id: 'split-lines' })
  const linesButton = h('button', { type: 'button', on: { click: act(async () => {
    const bill = await api('GET', `${base}/bill`)
    byLines.replaceChildren(linesForm(bill.lines as Json[], async (payload) => taken(payload, 'Payment for the chosen lines')))
  }) }, text: 'Split by lines' })

  // Refund (issue 34 item 13): nothing is chosen at first. By lines — the units of each line still
  // refundable, the sum of what the chosen units give back shown as they are chosen (the API's own
  // cents: `unit_amounts`) — or else an amount typed in; never more than was paid and not refunded.
  const refundLines = ((refunds.lines || []) as Json[]).filter((l) => l.refundable_quantity > 0)
  const picks = refundLines.map((l) => h('input', { type: 'number', name: `refund_line_${l.line_id}`, min: '0', max: l.refundable_quantity, step: '1', value: '0', 'aria-label': `Units of ${l.name || `line ${l.line_id}`} to refund` }))
  const units = (i: number): number => Math.max(0, Math.min(Math.floor(Number(picks[i]!.value) || 0), refundLines[i]!.refundable_quantity))
  const chosen = (): Array<{ line_id: number; quantity: number }> => refundLines.map((l, i) => ({ line_id: l.line_id as number, quantity: units(i) })).filter((c) => c.quantity > 0)
  // Cents added up, as the API adds them (no float drift in the sum shown).
  const linesSum = (): number => refundLines.reduce((s, l, i) => s + (l.unit_amounts as number[]).slice(0, units(i)).reduce((a, b) => a + Math.round(b * 100), 0), 0) / 100
  const otherAmount = h('input', { name: 'amount', id: 'refund-amount', type: 'number', step: '0.01', min: '0.01', max: plain(refundable), placeholder: 'none' })
  const summary = h('output', { id: 'refund-total', 'aria-live': 'polite' })
  const showTotal = (): void => {
    const lines = chosen()
    const typed = Number(otherAmount.value) || 0
    const sum = lines.length ? linesSum() : typed
    summary.textContent = lines.length ? `Refund ${money(sum)} for ${lines.reduce((s, c) => s + c.quantity, 0)} unit(s)` : typed > 0 ? `Refund ${money(typed)}` : 'Nothing chosen to refund'
    summary.dataset.amount = sum > 0 ? plain(sum) : ''
  }
  const refundForm = h('form', { class: 'card', id: 'refund', 'aria-label': 'Refund', on: { input: showTotal, submit: act(async (ev) => {
    const f = new FormData(ev.target)
    const lines = chosen()
    const typed = f.get('amount') ? Number(f.get('amount')) : 0
    if (lines.length && typed) throw new Error('Refund the chosen units or an amount, not both.')
    if (!lines.length && !typed) throw new Error('Choose the units to refund, or type an amount.')
    const r = await api('POST', `${base}/refunds`, { ...(lines.length ? { lines } : { amount: typed }), reason: f.get('reason') || undefined })
    await changed()
    say(`Refunded ${money((r.data as Json[]).reduce((s, x) => s + Math.round(x.amount * 100), 0) / 100)}.`)
  }) } },
  refundLines.length ? table(['Line', 'Refundable', 'Units to refund'], refundLines.map((l, i) => h('tr', { data: { refundLine: l.line_id } },
    h('td', { text: l.name || `Line ${l.line_id}` }), h('td', { class: 'num', text: `${l.refundable_quantity} of ${l.quantity}` }), h('td', {}, picks[i])))) : '',
  h('div', { class: 'row' },
    h('label', { for: 'refund-amount' }, refundLines.length ? 'Or an amount' : 'Refund amount', otherAmount),
    h('label', { for: 'refund-reason' }, 'Reason', h('input', { name: 'reason', id: 'refund-reason', maxlength: 200 })),
    h('button', { type: 'submit', class: 'danger', text: 'Refund' })),
  h('p', {}, summary, h('span', { class: 'muted', text: ` (at most ${money(refundable)})` })))
  showTotal()

  section.append(
    h('h3', { id: 'payments-title', text: 'Payments' }),
    h('p', { id: 'balance', data: { balanceDue: plain(due), paid: isPaid ? '1' : '0' } },
      h('span', { class: isPaid ? 'pill live' : 'pill warn', text: isPaid ? 'Paid' : 'Not paid' }),
      ` Total ${money(total)} · paid ${money(paid)} · due ${money(due)}`,
      tips ? ` · tips ${money(tips)}` : '',
      refunded ? ` · refunded ${money(refunded)}` : ''),
    payments.length
      ? table(['When', 'Method', 'Amount', 'Tip', 'Status'], payments.map((p: Json) => h('tr', { data: { paymentId: p.id } },
        h('td', { text: when(p.created_at) }), h('td', { text: p.method }), h('td', { class: 'num', text: money(p.amount) }),
        h('td', { class: 'num', text: money(p.tip_amount) }), h('td', { text: p.status }))))
      : h('p', { class: 'muted', text: 'No payment yet.' }),
    open ? h('div', {}, takeForm, h('h3', { text: 'Split the bill' }), splitForm, parts, h('p', {}, linesButton), byLines) : '',
    h('h3', { text: 'Refunds' }),
    refunds.data.length
      ? table(['When', 'Amount', 'Method', 'Reason', 'Status'], refunds.data.map((r: Json) => h('tr', { data: { refundId: r.id } },
        h('td', { text: when(r.created_at) }), h('td', { class: 'num', text: money(r.amount) }), h('td', { text: r.method || '' }),
        h('td', { text: r.reason || '' }), h('td', { text: r.status }))))
      : h('p', { class: 'muted', text: 'No refund.' }),
    refundable > 0 ? refundForm : '')
  return section
}

/** The lines of a bill with their unpaid units and what they owe, a quantity to pay for each, and the method. */
function linesForm(lines: Json[], submit: (payload: Record<string, unknown>) => Promise<void>): HTMLElement {
  const open = lines.filter((l) => l.unpaid_quantity > 0)
  if (!open.length) return h('p', { class: 'muted', text: 'Every line is paid.' })
  const nameOf = (l: Json): string => l.name || `Line ${l.line_id}`
  const rows = open.map((l) => h('tr', { data: { lineId: l.line_id } }, h('td', { text: nameOf(l) }),
    h('td', { class: 'num', text: `${l.unpaid_quantity} of ${l.quantity}` }), h('td', { class: 'num', text: money(l.unpaid_due) }),
    h('td', {}, h('input', { type: 'number', name: `line_${l.line_id}`, min: '0', max: l.unpaid_quantity, step: '1', value: '0', 'aria-label': `Units of ${nameOf(l)} to pay` }))))
  return h('form', { class: 'card', id: 'pay-lines', 'aria-label': 'Pay chosen lines', on: { submit: act(async (ev) => {
    const f = new FormData(ev.target)
    const chosen = open.map((l) => ({ line_id: l.line_id, quantity: Number(f.get(`line_${l.line_id}`) || 0) })).filter((c) => c.quantity > 0)
    if (!chosen.length) throw new Error('Choose at least one unit to pay.')
    // No amount: the API prices the units (their share of the total, cents exact) and says how much.
    await submit({ method: f.get('method'), tip_amount: num(f.get('tip_amount')), lines: chosen })
  }) } },
  table(['Line', 'Unpaid', 'Due', 'Pay'], rows),
  h('div', { class: 'row' },
    h('label', { for: 'lines-method' }, 'Method', methodSelect('lines-method')),
    h('label', { for: 'lines-tip' }, 'Tip', h('input', { name: 'tip_amount', id: 'lines-tip', type: 'number', step: '0.01', min: '0', placeholder: '0.00' })),
    h('button', { type: 'submit', class: 'primary', text: 'Pay these lines' })))
}
