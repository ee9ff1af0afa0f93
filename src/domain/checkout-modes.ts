/**
 * What the store website's checkout says for each order mode (issue 34 item 6; docs/website.md
 * "Checkout"), pure: the mode's name, where its order is paid, whether it needs a table number or a
 * delivery address, and the mode the form starts with.
 */

/** Where an order placed on the website is paid, by its mode: the checkout takes no money itself. */
const PAY_NOTE: Record<string, string> = {
  delivery: 'Pay the driver when your order arrives.',
  takeaway: 'Pay when you collect your order.',
  in_store: 'Pay when you collect your order.',
  pickup_slot: 'Pay when you collect your order.',
  'on-table': 'Pay at your table.',
  room_service: 'Charged to your room.',
  appointment: 'Pay at your appointment.',
  ship: 'The shop tells you how to pay before it ships.',
}

const LABEL: Record<string, string> = {
  delivery: 'Delivery', takeaway: 'Takeaway', in_store: 'Collect in store', pickup_slot: 'Pickup slot',
  'on-table': 'On table', room_service: 'Room service', appointment: 'Appointment', ship: 'Shipping',
}

export interface CheckoutMode {
  value: string
  label: string
  /** Where this mode's order is paid. */
  pay_note: string
  /** The table-number field belongs to this mode. */
  needs_table: boolean
  /** The delivery-address fields belong to this mode. */
  needs_address: boolean
}

export const checkoutModes = (modes: readonly string[]): CheckoutMode[] => modes.map((m) => ({
  value: m,
  label: LABEL[m] ?? m.replace(/[-_]/g, ' ').replace(/^./, (c) => c.toUpperCase()),
  pay_note: PAY_NOTE[m] ?? 'Pay as the store tells you.',
  needs_table: m === 'on-table',
  needs_address: m === 'delivery',
}))

/**
 * The mode a checkout starts with: delivery where this visitor may order it (a signed-in customer),
 * else takeaway, else the first mode that needs no table, else the first. Never "On table" while
 * another mode is offered: a table order is a choice made at the table.
 */
export function defaultMode(modes: readonly string[]): string | null {
  return (['delivery', 'takeaway'] as const).find((m) => modes.includes(m)) ?? modes.find((m) => m !== 'on-table') ?? modes[0] ?? null
}
