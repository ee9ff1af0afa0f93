/**
 * Stock of goods (issue 18 items 2 and 4, docs/verticals.md "Stock and variants", "Expiry"): pure.
 *
 * `stock` NULL means untracked (unlimited). An item with expiry batches sells only the quantities of
 * batches not yet expired on the store's local date, first-expiring first (FEFO). A variant with a
 * stock of its own is limited by it, and by the item's stock (or batches) as well when those are
 * tracked: the item's count is the total over its variants.
 */
import type { FieldErrors } from '../errors.ts'

export interface StockBatch { id: number; expires_on: string; quantity: number }

/** The stock facts of one menu item, as the store actor holds them. */
export interface StockedItem {
  id: number
  name: string
  stock?: number | null
  /** Expiry batches; an item with any (even used up) sells only from them. */
  batches?: readonly StockBatch[]
  variants: readonly { id: number; name: string; stock?: number | null }[]
}

/** One decrement an order makes; its negation is what a cancellation puts back. */
export interface StockMove {
  line_index: number
  item_id: number
  variant_id: number | null
  batch_id: number | null
  counter: 'item' | 'variant' | 'batch'
  quantity: number
}

export interface StockLine { item_id: number; variant_id: number | null; quantity: number }

export type Allocation = { ok: true; moves: StockMove[] } | { ok: false; errors: FieldErrors }

const unexpired = (b: StockBatch, today: string) => b.expires_on >= today
const fefo = (a: StockBatch, b: StockBatch) => (a.expires_on < b.expires_on ? -1 : a.expires_on > b.expires_on ? 1 : a.id - b.id)

/** How many of the item can be sold on `today` (YYYY-MM-DD, store-local), or null when untracked. */
export function sellableStock(item: Pick<StockedItem, 'stock' | 'batches'>, today: string): number | null {
  if (item.batches && item.batches.length > 0) return item.batches.reduce((n, b) => n + (unexpired(b, today) ? b.quantity : 0), 0)
  return item.stock ?? null
}

/**
 * Take the order's lines from stock, all or nothing (api-v1 §7 rule 1: refused whole). Lines of the
 * same item or variant draw on one running count. Errors are keyed like the request (`items.0.quantity`).
 */
export function allocateStock(items: ReadonlyMap<number, StockedItem>, lines: readonly StockLine[], today: string): Allocation {
  const errors: FieldErrors = {}
  const moves: StockMove[] = []
  const taken = new Map<string, number>() // counter key → quantity already taken by earlier lines
  const takenOf = (k: string) => taken.get(k) ?? 0
  lines.forEach((line, i) => {
    const item = items.get(line.item_id)
    // A line wholly refunded takes nothing when its order is reopened (src/storage/stock.ts `retakeLines`).
    if (!item || line.quantity <= 0) return
    const short: string[] = []
    const variant = line.variant_id === null ? undefined : item.variants.find((v) => v.id === line.variant_id)
    if (variant && variant.stock != null) {
      const left = variant.stock - takenOf(`v${variant.id}`)
      if (left < line.quantity) short.push(left <= 0 ? `${item.name} (${variant.name}) is out of stock.` : `Only ${left} of ${item.name} (${variant.name}) left.`)
    }
    const batches = item.batches && item.batches.length > 0 ? item.batches : null
    const itemLeft = batches ? sellableStock(item, today)! - takenOf(`i${item.id}`) : item.stock == null ? null : item.stock - takenOf(`i${item.id}`)
    if (itemLeft !== null && itemLeft < line.quantity) short.push(itemLeft <= 0 ? `${item.name} is out of stock.` : `Only ${itemLeft} of ${item.name} left.`)
    if (short.length > 0) {
      errors[`items.${i}.quantity`] = short
      return
    }
    const base = { line_index: i, item_id: item.id, variant_id: line.variant_id }
    if (variant && variant.stock != null) {
      moves.push({ ...base, batch_id: null, counter: 'variant', quantity: line.quantity })
      taken.set(`v${variant.id}`, takenOf(`v${variant.id}`) + line.quantity)
    }
    if (batches) {
      let need = line.quantity
      for (const b of [...batches].filter((x) => unexpired(x, today)).sort(fefo)) {
        const left = b.quantity - takenOf(`b${b.id}`)
        if (need === 0) break
        if (left <= 0) continue
        const q = Math.min(left, need)
        moves.push({ ...base, batch_id: b.id, counter: 'batch', quantity: q })
        taken.set(`b${b.id}`, takenOf(`b${b.id}`) + q)
        need -= q
      }
    } else if (item.stock != null) {
      moves.push({ ...base, batch_id: null, counter: 'item', quantity: line.quantity })
    }
    if (itemLeft !== null) taken.set(`i${item.id}`, takenOf(`i${item.id}`) + line.quantity)
  })
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, moves }
}

/**
 * Apply `moves` taken (`sign` -1) or put back (+1) to the held items, IN PLACE, and return the same
 * map: the store actor's index stays in step with SQLite without re-reading it. The touched items
 * are replaced by new objects (an item object is never changed), but the map itself is updated: it
 * is the store actor's own, and copying it for every order cost 12 ms per order on a 100k-item
 * store (bench/stock-contention.ts, BENCH_STOCK_CATALOGUE=100000). A caller that needs the map
 * before the moves keeps a copy.
 */
export function withMoves<T extends StockedItem>(items: Map<number, T>, moves: readonly StockMove[], sign: 1 | -1): Map<number, T> {
  const next = items
  for (const m of moves) {
    const item = next.get(m.item_id)
    if (!item) continue // deleted meanwhile: nothing held to adjust
    const d = sign * m.quantity
    if (m.counter === 'item') next.set(item.id, { ...item, stock: item.stock == null ? item.stock : item.stock + d })
    else if (m.counter === 'variant') next.set(item.id, { ...item, variants: item.variants.map((v) => (v.id === m.variant_id && v.stock != null ? { ...v, stock: v.stock + d } : v)) })
    else next.set(item.id, { ...item, batches: item.batches?.map((b) => (b.id === m.batch_id ? { ...b, quantity: b.quantity + d } : b)) })
  }
  return next
}
