/**
 * Shipments and slot availability (issue 18 items 5-6; docs/verticals.md): bindings of src/ops/orders/shipments.ts
 * and src/ops/orders/slots.ts for the owner and for staff with `orders` (the member's own store).
 */
import { ownerAndStaff } from '../bind.ts'
import * as shipments from '../../ops/orders/shipments.ts'
import * as slots from '../../ops/orders/slots.ts'

export const shipmentRoutes = ownerAndStaff([
  { op: shipments.listShipments, method: 'GET', path: '/shipments' },
  { op: shipments.getShipment, method: 'GET', path: '/orders/{orderId}/shipment' },
  { op: shipments.setShipmentTrackingOp, method: 'PUT', path: '/orders/{orderId}/shipment' },
  { op: shipments.moveShipmentOp, method: 'POST', path: '/orders/{orderId}/shipment/status' },
  { op: slots.listPickupSlots, method: 'GET', path: '/pickup-slots' },
  { op: slots.listAppointmentSlots, method: 'GET', path: '/appointment-slots' },
])
