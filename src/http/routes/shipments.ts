/** Shipments and slot availability (issue 18 items 5-6; docs/verticals.md): bindings of src/ops/orders/shipments.ts and src/ops/orders/slots.ts. */
import { bind } from '../bind.ts'
import * as shipments from '../../ops/orders/shipments.ts'
import * as slots from '../../ops/orders/slots.ts'

const store = { store: 'id' } as const
const order = { store: 'id', order: 'orderId' } as const
const staffOrder = { order: 'orderId' } as const

export const shipmentRoutes = [
  bind(shipments.listShipments, { method: 'GET', path: '/restaurants/{id}/shipments', auth: 'owner', ids: store }),
  bind(shipments.getShipment, { method: 'GET', path: '/restaurants/{id}/orders/{orderId}/shipment', auth: 'owner', ids: order }),
  bind(shipments.setShipmentTrackingOp, { method: 'PUT', path: '/restaurants/{id}/orders/{orderId}/shipment', auth: 'owner', ids: order }),
  bind(shipments.moveShipmentOp, { method: 'POST', path: '/restaurants/{id}/orders/{orderId}/shipment/status', auth: 'owner', ids: order }),
  bind(slots.listPickupSlots, { method: 'GET', path: '/restaurants/{id}/pickup-slots', auth: 'owner', ids: store }),
  bind(slots.listAppointmentSlots, { method: 'GET', path: '/restaurants/{id}/appointment-slots', auth: 'owner', ids: store }),
  // Staff with `orders`: the member's own store.
  bind(shipments.listShipments, { method: 'GET', path: '/staff/shipments', auth: 'staff' }),
  bind(shipments.getShipment, { method: 'GET', path: '/staff/orders/{orderId}/shipment', auth: 'staff', ids: staffOrder }),
  bind(shipments.setShipmentTrackingOp, { method: 'PUT', path: '/staff/orders/{orderId}/shipment', auth: 'staff', ids: staffOrder }),
  bind(shipments.moveShipmentOp, { method: 'POST', path: '/staff/orders/{orderId}/shipment/status', auth: 'staff', ids: staffOrder }),
  bind(slots.listPickupSlots, { method: 'GET', path: '/staff/pickup-slots', auth: 'staff' }),
  bind(slots.listAppointmentSlots, { method: 'GET', path: '/staff/appointment-slots', auth: 'staff' }),
]
