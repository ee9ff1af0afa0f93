/** Building a new order from validated input against a store's live menu (api-v1 §2.4): pure. */
import type { FieldErrors } from '../errors.ts'
import { toCents } from './money.ts'
import { initialDeliveryStatus, stamp, type DeliveryStatus, type Timeline } from './order-state.ts'
import { priceLines, type LineInput, type PricedItem, type PricedLine } from './pricing.ts'
import type { Vertical } from './verticals.ts'
import { fulfillmentErrors, type FulfillmentInput } from './fulfillment.ts'

/** Mode fields (room, shipping address, slot, appointment): src/domain/fulfillment.ts. */
export interface OrderInput extends Omit<FulfillmentInput, 'type'> {
  type: string
  customer_name?: string | null
  phone?: string | null
  table_number?: string | number | null
  address?: string | null
  tip_amount?: number | null
  note?: string | null
  source?: string | null
  coupon_code?: string | null
  client_uuid?: string | null
  /** The buyer is old enough for the order's age-restricted items (src/domain/age-gate.ts). */
  age_confirmed?: boolean | null
  items: LineInput[]
}

export interface OrderDraft {
  type: string
  status: 'new'
  delivery_status: DeliveryStatus | null
  customer_name: string | null
  phone: string | null
  table_number: string | null
  address: string | null
  note: string | null
  source: string | null
  coupon_code: string | null
  subtotal: number
  discount: number
  tip_amount: number
  total: number
  timeline: Timeline
  lines: PricedLine[]
}

export type DraftResult = { ok: true; draft: OrderDraft } | { ok: false; errors: FieldErrors }

const blank = (s: string | number | null | undefined): boolean => s == null || String(s).trim() === ''

/** Validate the order against the store's vertical and price it; nothing is written here. */
export function draftOrder(vertical: Vertical, menu: ReadonlyMap<number, PricedItem>, input: OrderInput, now: string): DraftResult {
  const errors: FieldErrors = {}
  if (!(vertical.fulfillment_modes as string[]).includes(input.type)) {
    errors.type = [`This store accepts ${vertical.fulfillment_modes.join(', ')} orders.`]
  }
  if (input.type === 'on-table' && blank(input.table_number)) errors.table_number = ['A table number is required for on-table orders.']
  if (input.type === 'delivery' && blank(input.address)) errors.address = ['An address is required for delivery orders.']
  Object.assign(errors, fulfillmentErrors(input))
  const priced = priceLines(menu, input.items)
  if (!priced.ok) Object.assign(errors, priced.errors)
  if (Object.keys(errors).length > 0 || !priced.ok) return { ok: false, errors }

  const tip = toCents(input.tip_amount ?? 0)
  const subtotal = priced.value.subtotal
  return {
    ok: true,
    draft: {
      type: input.type,
      status: 'new',
      delivery_status: initialDeliveryStatus(input.type),
      customer_name: input.customer_name ?? null,
      phone: input.phone ?? null,
      table_number: blank(input.table_number) ? null : String(input.table_number),
      address: input.address ?? null,
      note: input.note ?? null,
      source: input.source ?? null,
      coupon_code: null,
      subtotal,
      discount: 0,
      tip_amount: tip,
      total: subtotal + tip,
      timeline: stamp({}, 'created', now),
      lines: priced.value.lines,
    },
  }
}
