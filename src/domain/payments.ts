/**
 * Money rules of payments and split bills (issue 17 item 1; docs/operations.md "Payments", "Split
 * bills"). Pure: integer cents in, integer cents out; the order actor (src/actors/order-payments.ts)
 * and the read operations both use these, so the balance a bill shows is the one a payment is
 * checked against.
 */

export type PaymentMethod = 'cash' | 'card' | 'online'
export const PAYMENT_METHODS: readonly PaymentMethod[] = ['cash', 'card', 'online']
export type PaymentStatus = 'pending' | 'succeeded' | 'failed'

/** One order line as the bill sees it: its units and the part of the order total they owe. */
export interface BillLine { id: number; quantity: number; lineTotal: number }
/** Units of a line a payment covers (`lines: [{line_id, quantity}]`). */
export interface LinePick { lineId: number; quantity: number }

/** What the order's payments add up to, loaded by the actor on its first payment message. */
export interface PaymentBook {
  /** The order total (cents): what the payments must cover; tips are on top. */
  total: number
  /** Sum of succeeded amounts: the money taken. */
  paid: number
  /**
   * The part of `paid` that does not count toward the total: money a provider took after the payment
   * or the order was cancelled, or beyond the total, given straight back (payments.excess, migration 024).
   */
  excess: number
  /** Sum of the amounts of online payments still pending at the provider. */
  pending: number
  /** Sum of succeeded tips. */
  tips: number
  /** Methods of the succeeded payments, first use first (for `order.paid`). */
  methods: PaymentMethod[]
  lines: BillLine[]
  /** Units already taken by line payments that succeeded or are still pending, by line id. */
  paidUnits: Record<number, number>
}

/**
 * What each line owes of the order total: the total (after discount, with the order's tip and fees)
 * shared out in proportion to the lines' prices, largest remainder first, so the shares add up to
 * the total exactly and paying every line by lines pays the order.
 */
export function lineDues(total: number, lines: readonly BillLine[]): number[] {
  const sum = lines.reduce((s, l) => s + l.lineTotal, 0)
  if (lines.length === 0) return []
  if (sum <= 0) return distribute(total, lines.length)
  const exact = lines.map((l) => (total * l.lineTotal) / sum)
  const dues = exact.map(Math.floor)
  let left = total - dues.reduce((s, d) => s + d, 0)
  const order = exact.map((x, i) => ({ i, r: x - Math.floor(x) })).sort((a, b) => b.r - a.r || a.i - b.i)
  for (const { i } of order) {
    if (left <= 0) break
    dues[i]! += 1
    left--
  }
  return dues
}

/** `amount` split into `n` parts that add up exactly; the first parts carry the spare cents. */
export function distribute(amount: number, n: number): number[] {
  const base = Math.floor(amount / n)
  const extra = amount - base * n
  return Array.from({ length: n }, (_, i) => base + (i < extra ? 1 : 0))
}

/** The share of units `[from, from + count)` of a line owing `due` over `quantity` units. */
export function unitsDue(due: number, quantity: number, from: number, count: number): number {
  const parts = distribute(due, quantity)
  let s = 0
  for (let i = from; i < from + count; i++) s += parts[i] ?? 0
  return s
}

/** What counts toward the total: the money taken minus what was given straight back as excess. */
export const countedOf = (b: PaymentBook): number => b.paid - b.excess
export const balanceOf = (b: PaymentBook): number => Math.max(0, b.total - countedOf(b))
export const isCovered = (b: PaymentBook): boolean => countedOf(b) >= b.total
/**
 * What a new online payment may still ask for: the balance less the online checkouts still open, so
 * two checkouts for the same balance (a double tap) cannot both be charged. Cash and card at the till
 * are not limited by pending checkouts (an abandoned one must not block the till).
 */
export const onlineBalanceOf = (b: PaymentBook): number => Math.max(0, balanceOf(b) - b.pending)

/**
 * How much of a payment of `amount` the provider confirmed can count toward the total: none when the
 * order or the payment was cancelled meanwhile, else up to the balance. The rest is the excess,
 * refunded at once through that payment.
 */
export const excessOf = (b: PaymentBook, amount: number, countable: boolean): number =>
  countable ? Math.max(0, amount - balanceOf(b)) : amount

/** The balance split evenly into `n` parts (`?split=N`). */
export const evenSplit = (b: PaymentBook, n: number): number[] => distribute(balanceOf(b), n)

/**
 * The index in `lines` of the line pick `i` names, or why it names none: a line not on this order, or
 * one already named (`seen`, the lines named so far, is updated). Shared by payments and refunds by lines.
 */
export function pickedLine(lines: readonly BillLine[], pick: LinePick, i: number, seen: Set<number>): number | { field: string; message: string } {
  const idx = lines.findIndex((l) => l.id === pick.lineId)
  if (idx < 0 || seen.has(pick.lineId)) return { field: `lines.${i}.line_id`, message: idx < 0 ? `Line ${pick.lineId} is not on this order.` : `Line ${pick.lineId} is listed twice.` }
  seen.add(pick.lineId)
  return idx
}

export type LinesResult = { ok: true; amount: number } | { ok: false; kind: 'unknown' | 'taken'; field: string; message: string }

/**
 * The amount of a by-lines payment: the dues of the next unpaid units of each picked line. A line
 * named twice, a line of another order, or more units than are still unpaid is refused.
 */
export function linesAmount(b: PaymentBook, picks: readonly LinePick[]): LinesResult {
  const dues = lineDues(b.total, b.lines)
  const seen = new Set<number>()
  let amount = 0
  for (const [i, p] of picks.entries()) {
    const idx = pickedLine(b.lines, p, i, seen)
    if (typeof idx !== 'number') return { ok: false, kind: 'unknown', ...idx }
    const line = b.lines[idx]!
    const taken = b.paidUnits[line.id] ?? 0
    if (taken + p.quantity > line.quantity) {
      return { ok: false, kind: 'taken', field: `lines.${i}.quantity`, message: `Only ${line.quantity - taken} of ${line.quantity} unit(s) of line ${line.id} are unpaid.` }
    }
    amount += unitsDue(dues[idx]!, line.quantity, taken, p.quantity)
  }
  return { ok: true, amount }
}

/** The book with line units taken (`sign` 1) or given back (`sign` -1, a failed pending payment). */
export function takeUnits(paidUnits: Readonly<Record<number, number>>, picks: readonly LinePick[], sign: 1 | -1): Record<number, number> {
  const next = { ...paidUnits }
  for (const p of picks) next[p.lineId] = Math.max(0, (next[p.lineId] ?? 0) + sign * p.quantity)
  return next
}

/** A line on the bill (`GET …/bill`): its units, the units paid and unpaid, and what the unpaid ones owe. */
export interface BillLineView { line_id: number; quantity: number; paid_quantity: number; unpaid_quantity: number; due: number; unpaid_due: number }

export function billLines(b: PaymentBook): BillLineView[] {
  const dues = lineDues(b.total, b.lines)
  return b.lines.map((l, i) => {
    const paid = Math.min(l.quantity, b.paidUnits[l.id] ?? 0)
    return {
      line_id: l.id, quantity: l.quantity, paid_quantity: paid, unpaid_quantity: l.quantity - paid,
      due: dues[i]!, unpaid_due: unitsDue(dues[i]!, l.quantity, paid, l.quantity - paid),
    }
  })
}
