/** Store types and their vertical (api-v1 §2.2): label, group, capability flags, fulfillment modes. */

export const STORE_TYPES = ['restaurant', 'retail', 'cosmetic', 'clothing', 'carparts', 'laundry', 'pharmacy', 'hotel'] as const
export type StoreType = (typeof STORE_TYPES)[number]

export const ORDER_TYPES = ['on-table', 'takeaway', 'delivery', 'room_service', 'ship', 'pickup_slot', 'appointment', 'in_store'] as const
export type OrderType = (typeof ORDER_TYPES)[number]

export type VerticalGroup = 'food' | 'goods' | 'services' | 'stays'

export interface Vertical {
  label: string
  group: VerticalGroup
  /** Capability flags: which menu fields and features this store type uses. */
  capabilities: {
    food_fields: boolean // is_vegan, is_halal, calories
    goods_fields: boolean // brand, stock, variants
    kitchen_display: boolean
    tables: boolean
    fitment: boolean // vehicle fitment data (car parts)
    age_gate: boolean // age-restricted items
    expiry: boolean // expiry dates on items
  }
  fulfillment_modes: OrderType[]
}

const caps = (c: Partial<Vertical['capabilities']>): Vertical['capabilities'] => ({
  food_fields: false, goods_fields: false, kitchen_display: false, tables: false, fitment: false, age_gate: false, expiry: false, ...c,
})

export const VERTICALS: Readonly<Record<StoreType, Vertical>> = {
  restaurant: { label: 'Restaurant', group: 'food', capabilities: caps({ food_fields: true, kitchen_display: true, tables: true }), fulfillment_modes: ['on-table', 'takeaway', 'delivery'] },
  retail: { label: 'Retail', group: 'goods', capabilities: caps({ goods_fields: true, age_gate: true }), fulfillment_modes: ['in_store', 'pickup_slot', 'delivery', 'ship'] },
  cosmetic: { label: 'Cosmetics', group: 'goods', capabilities: caps({ goods_fields: true, expiry: true }), fulfillment_modes: ['in_store', 'pickup_slot', 'delivery', 'ship', 'appointment'] },
  clothing: { label: 'Clothing', group: 'goods', capabilities: caps({ goods_fields: true }), fulfillment_modes: ['in_store', 'pickup_slot', 'delivery', 'ship'] },
  carparts: { label: 'Car parts', group: 'goods', capabilities: caps({ goods_fields: true, fitment: true }), fulfillment_modes: ['in_store', 'pickup_slot', 'delivery', 'ship'] },
  laundry: { label: 'Laundry', group: 'services', capabilities: caps({}), fulfillment_modes: ['pickup_slot', 'delivery', 'appointment'] },
  pharmacy: { label: 'Pharmacy', group: 'goods', capabilities: caps({ goods_fields: true, age_gate: true, expiry: true }), fulfillment_modes: ['in_store', 'pickup_slot', 'delivery'] },
  hotel: { label: 'Hotel', group: 'stays', capabilities: caps({ food_fields: true, kitchen_display: true }), fulfillment_modes: ['room_service', 'takeaway', 'on-table'] },
}

export const verticalOf = (t: string): Vertical => VERTICALS[(STORE_TYPES as readonly string[]).includes(t) ? (t as StoreType) : 'restaurant']
