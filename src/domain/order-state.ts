/**
 * Order state machines (api-v1 §3). Kitchen status is set by the owner/staff override; delivery
 * status by assignment, the owner override and the driver's forward moves.
 *
 * Initial values (the spec leaves them open, documented in docs/orders.md): every order starts
 * `new`; delivery orders start with delivery_status `pending`, other types with `null`.
 */

export const KITCHEN_STATUSES = ['new', 'preparing', 'ready', 'delivered', 'completed', 'cancelled'] as const
export type KitchenStatus = (typeof KITCHEN_STATUSES)[number]

export const DELIVERY_STATUSES = ['pending', 'assigned', 'picked_up', 'out_for_delivery', 'delivered', 'failed'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

export const KDS_STATES = ['queued', 'preparing', 'ready', 'served'] as const
export type KdsState = (typeof KDS_STATES)[number]

/** `{"<stage>_at": iso}` (api-v1 §2.5). */
export type Timeline = Record<string, string>

export const initialDeliveryStatus = (type: string): DeliveryStatus | null => (type === 'delivery' ? 'pending' : null)

/** Timeline key for a stage: `created_at`, `preparing_at`, `picked_up_at`, ... */
export const stageKey = (stage: string): string => `${stage}_at`

/** Record a stage in a timeline (the first time it is reached wins: re-entering keeps the original moment). */
export function stamp(timeline: Timeline, stage: string, at: string): Timeline {
  const key = stageKey(stage)
  return key in timeline ? timeline : { ...timeline, [key]: at }
}

/** The delivery event a delivery status emits (api-v1 §3 "Delivery events"), if any. */
export function deliveryEventFor(status: DeliveryStatus): 'order.out_for_delivery' | 'order.delivered' | 'order.delivery_failed' | null {
  switch (status) {
    case 'out_for_delivery': return 'order.out_for_delivery'
    case 'delivered': return 'order.delivered'
    case 'failed': return 'order.delivery_failed'
    case 'pending':
    case 'assigned':
    case 'picked_up':
      return null
    default: {
      const never: never = status
      return never
    }
  }
}

/**
 * How the kitchen status follows the delivery status (docs/orders.md "How the two statuses move
 * together"; api-v1 §3 leaves it open). Food a driver has picked up has left the kitchen: a kitchen
 * status still `new` or `preparing` becomes `ready`. Food delivered has reached the guest: `new`,
 * `preparing` or `ready` becomes `delivered`. Every other pair keeps its kitchen status: `completed`
 * and `cancelled` are the owner's word, `pending`, `assigned` and `failed` say nothing about the food,
 * and a delivery set back by the owner's override does not take the kitchen back with it.
 */
export function kitchenAfterDelivery(kitchen: KitchenStatus, delivery: DeliveryStatus | null): KitchenStatus {
  if (delivery === 'delivered') return KITCHEN_BEFORE_DELIVERED.has(kitchen) ? 'delivered' : kitchen
  if (delivery === 'picked_up' || delivery === 'out_for_delivery') return KITCHEN_BEFORE_READY.has(kitchen) ? 'ready' : kitchen
  return kitchen
}
const KITCHEN_BEFORE_READY: ReadonlySet<KitchenStatus> = new Set(['new', 'preparing'])
const KITCHEN_BEFORE_DELIVERED: ReadonlySet<KitchenStatus> = new Set(['new', 'preparing', 'ready'])

/** Driver location is public on the tracking view only in these delivery statuses (api-v1 §2.5). */
export const driverVisible = (s: DeliveryStatus | null): boolean => s === 'picked_up' || s === 'out_for_delivery'
