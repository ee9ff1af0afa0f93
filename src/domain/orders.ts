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
  /** Notes for the driver (gate code, floor): delivery orders only; a saved address brings its own. */
  delivery_notes?: string | null
  /** Where a delivery goes (issue 37): required once the store has delivery zones (src/domain/zones.ts). */
  lat?: number | null
  lng?: number | null
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
  /** Cents: the delivery zone's fee (src/domain/zones.ts), part of `total`; 0 without zones. */
  delivery_fee: number
  /** The zone that priced a delivery, its destination and the estimate promised (docs/dispatch.md); null otherwise. */
  delivery_zone: string | null
  dest_lat: number | null
  dest_lng: number | null
  eta: { ready_at: string; pickup_at: string; dropoff_at: string } | null
  delivery_notes: string | null
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
  if ((input.lat == null) !== (input.lng == null)) errors[input.lat == null ? 'lat' : 'lng'] = ['Send lat and lng together.']
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
      delivery_fee: 0,
      delivery_zone: null,
      dest_lat: input.type === 'delivery' ? input.lat ?? null : null,
      dest_lng: input.type === 'delivery' ? input.lng ?? null : null,
      eta: null,
      delivery_notes: input.type === 'delivery' && !blank(input.delivery_notes) ? input.delivery_notes! : null,
      total: subtotal + tip,
      timeline: stamp({}, 'created', now),
      lines: priced.value.lines,
    },
  }
}
