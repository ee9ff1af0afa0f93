/**
 * Server-side pricing of an order (api-v1 §2.4): pure, no I/O. The store's live menu decides;
 * any sold-out or foreign item rejects the whole order.
 */
import type { FieldErrors } from '../errors.ts'
import type { StockBatch } from './stock.ts'

export interface MenuVariant { id: number; name: string; price: number | null; stock?: number | null }
export interface MenuExtra { id: number; name: string; price: number }
export interface PricedItem {
  id: number
  name: string
  price: number // cents
  is_sold_out: boolean
  station: string | null
  variants: readonly MenuVariant[]
  extras: readonly MenuExtra[]
  /** Goods stock (domain/stock.ts): null or absent untracked; batches for `expiry` items. */
  stock?: number | null
  batches?: readonly StockBatch[]
  /** Minimum buyer age (age_gate verticals, src/domain/age-gate.ts); null or absent: not restricted. */
  min_age?: number | null
}

export interface LineInput { item_id: number; quantity: number; variation?: number | null; extras?: number[]; note?: string | null }

export interface PricedLine {
  item_id: number
  variant_id: number | null
  name: string
  variant_name: string | null
  quantity: number
  unit_price: number
  extras: MenuExtra[]
  line_total: number
  note: string | null
  station: string | null
}

export interface Priced { lines: PricedLine[]; subtotal: number }

export type PriceResult = { ok: true; value: Priced } | { ok: false; errors: FieldErrors }

/** Price `lines` against `menu`; errors are keyed like the request (`items.0.item_id`). */
export function priceLines(menu: ReadonlyMap<number, PricedItem>, lines: readonly LineInput[]): PriceResult {
  const errors: FieldErrors = {}
  const add = (k: string, m: string) => { (errors[k] ??= []).push(m) }
  const out: PricedLine[] = []
  let subtotal = 0
  lines.forEach((line, i) => {
    const item = menu.get(line.item_id)
    if (!item) return add(`items.${i}.item_id`, `Item ${line.item_id} does not belong to this store.`)
    if (item.is_sold_out) return add(`items.${i}.item_id`, `${item.name} is sold out.`)
    let unit = item.price
    let variant: MenuVariant | null = null
    if (line.variation != null) {
      variant = item.variants.find((x) => x.id === line.variation) ?? null
      if (!variant) return add(`items.${i}.variation`, `Variation ${line.variation} is not offered for ${item.name}.`)
      if (variant.price != null) unit = variant.price
    }
    const extras: MenuExtra[] = []
    const seen = new Set<number>()
    for (const [j, id] of (line.extras ?? []).entries()) {
      const extra = item.extras.find((x) => x.id === id)
      if (!extra) { add(`items.${i}.extras.${j}`, `Extra ${id} is not offered for ${item.name}.`); continue }
      if (seen.has(id)) { add(`items.${i}.extras.${j}`, `Extra ${id} is listed twice.`); continue }
      seen.add(id)
      extras.push(extra)
    }
    const lineTotal = (unit + extras.reduce((s, e) => s + e.price, 0)) * line.quantity
    subtotal += lineTotal
    out.push({
      item_id: item.id,
      variant_id: variant?.id ?? null,
      name: item.name,
      variant_name: variant?.name ?? null,
      quantity: line.quantity,
      unit_price: unit,
      extras,
      line_total: lineTotal,
      note: line.note ?? null,
      station: item.station,
    })
  })
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, value: { lines: out, subtotal } }
}
