/** Store settings and business hours (docs/stores.md): bindings of src/ops/stores/store-settings.ts. */
import { bind } from '../bind.ts'
import * as settings from '../../ops/stores/store-settings.ts'
import * as zones from '../../ops/delivery/delivery-zones.ts'

const store = { store: 'id' } as const

export const storeSettingsRoutes = [
  bind(settings.getStoreSettings, { method: 'GET', path: '/restaurants/{id}/settings', auth: 'owner', ids: store }),
  bind(settings.updateStoreSettings, { method: 'PUT', path: '/restaurants/{id}/settings', auth: 'owner', ids: store }),
  bind(settings.updateBusinessHours, { method: 'PUT', path: '/restaurants/{id}/business-hours', auth: 'owner', ids: store }),
  // Staff see the hours their store keeps (the store comes from the token).
  bind(settings.getStoreSettings, { method: 'GET', path: '/staff/settings', auth: 'staff' }),
  // Delivery zones (docs/dispatch.md): owners, and managers on the staff app.
  bind(zones.getDeliveryZones, { method: 'GET', path: '/restaurants/{id}/delivery-zones', auth: 'owner', ids: store }),
  bind(zones.setDeliveryZones, { method: 'PUT', path: '/restaurants/{id}/delivery-zones', auth: 'owner', ids: store }),
  bind(zones.getDeliveryZones, { method: 'GET', path: '/staff/delivery-zones', auth: 'staff' }),
  bind(zones.setDeliveryZones, { method: 'PUT', path: '/staff/delivery-zones', auth: 'staff' }),
  bind(zones.deliveryQuote, { method: 'POST', path: '/restaurants/{id}/delivery-quote', auth: 'owner', ids: store }),
  bind(zones.deliveryQuote, { method: 'POST', path: '/customer/delivery-quote', auth: 'customer' }), // the token's store
]
