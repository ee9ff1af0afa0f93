/**
 * A shipment's states and the moves between them (issue 18 item 6; docs/verticals.md "Shipments"),
 * pure. A parcel goes pending → label_created → in_transit → out_for_delivery → delivered; it may
 * fail on the way (a failed attempt can be retried: back in transit) or come back (`returned`).
 * `delivered` and `returned` are final.
 */

export const SHIPMENT_STATUSES = ['pending', 'label_created', 'in_transit', 'out_for_delivery', 'delivered', 'returned', 'failed'] as const
export type ShipmentStatus = (typeof SHIPMENT_STATUSES)[number]

const NEXT: Readonly<Record<ShipmentStatus, readonly ShipmentStatus[]>> = {
  pending: ['label_created', 'in_transit', 'failed'],
  label_created: ['in_transit', 'failed'],
  in_transit: ['out_for_delivery', 'delivered', 'failed', 'returned'],
  out_for_delivery: ['delivered', 'failed', 'returned'],
  failed: ['in_transit', 'returned'],
  delivered: [],
  returned: [],
}

/** The states a shipment in `from` may move to. */
export const nextStatuses = (from: ShipmentStatus): readonly ShipmentStatus[] => NEXT[from]

export const canMove = (from: ShipmentStatus, to: ShipmentStatus): boolean => NEXT[from].includes(to)

export const isFinal = (s: ShipmentStatus): boolean => NEXT[s].length === 0

/** One step of a shipment's history. */
export interface ShipmentStep { status: ShipmentStatus; at: string; note?: string }
