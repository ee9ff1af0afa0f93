/**
 * Tables and reservations (issue 17 item 4; docs/operations.md "Reservations"): the owner's,
 * staff's (their own store, permission `orders`) and the customer app's bindings. One operation
 * serves owner and staff (src/ops/stores/reservations.ts, src/ops/stores/tables.ts); the customer's are their own
 * (src/ops/customers/customer-reservations.ts).
 */
import { bind } from '../bind.ts'
import * as tables from '../../ops/stores/tables.ts'
import * as res from '../../ops/stores/reservations.ts'
import * as mine from '../../ops/customers/customer-reservations.ts'

const store = { store: 'id' } as const
const table = { tableId: 'table_id' }
const reservation = { reservationId: 'reservation_id' }
const R = '/restaurants/{id}'

export const reservationRoutes = [
  bind(tables.listTables, { method: 'GET', path: `${R}/tables`, auth: 'owner', ids: store }),
  bind(tables.createTable, { method: 'POST', path: `${R}/tables`, auth: 'owner', ids: store }),
  bind(tables.updateTable, { method: 'PUT', path: `${R}/tables/{tableId}`, auth: 'owner', ids: store, params: table }),
  bind(tables.deleteTable, { method: 'DELETE', path: `${R}/tables/{tableId}`, auth: 'owner', ids: store, params: table }),
  bind(res.listReservations, { method: 'GET', path: `${R}/reservations`, auth: 'owner', ids: store }),
  bind(res.createReservation, { method: 'POST', path: `${R}/reservations`, auth: 'owner', ids: store }),
  bind(res.reservationAvailability, { method: 'GET', path: `${R}/reservations/availability`, auth: 'owner', ids: store }),
  bind(res.getReservation, { method: 'GET', path: `${R}/reservations/{reservationId}`, auth: 'owner', ids: store, params: reservation }),
  bind(res.updateReservation, { method: 'PUT', path: `${R}/reservations/{reservationId}`, auth: 'owner', ids: store, params: reservation }),
  bind(res.cancelReservation, { method: 'POST', path: `${R}/reservations/{reservationId}/cancel`, auth: 'owner', ids: store, params: reservation }),
  bind(res.seatReservation, { method: 'POST', path: `${R}/reservations/{reservationId}/seat`, auth: 'owner', ids: store, params: reservation }),
  bind(res.noShowReservation, { method: 'POST', path: `${R}/reservations/{reservationId}/no-show`, auth: 'owner', ids: store, params: reservation }),

  bind(tables.listTables, { method: 'GET', path: '/staff/tables', auth: 'staff' }),
  bind(tables.createTable, { method: 'POST', path: '/staff/tables', auth: 'staff' }),
  bind(tables.updateTable, { method: 'PUT', path: '/staff/tables/{tableId}', auth: 'staff', params: table }),
  bind(tables.deleteTable, { method: 'DELETE', path: '/staff/tables/{tableId}', auth: 'staff', params: table }),
  bind(res.listReservations, { method: 'GET', path: '/staff/reservations', auth: 'staff' }),
  bind(res.createReservation, { method: 'POST', path: '/staff/reservations', auth: 'staff' }),
  bind(res.reservationAvailability, { method: 'GET', path: '/staff/reservations/availability', auth: 'staff' }),
  bind(res.getReservation, { method: 'GET', path: '/staff/reservations/{reservationId}', auth: 'staff', params: reservation }),
  bind(res.updateReservation, { method: 'PUT', path: '/staff/reservations/{reservationId}', auth: 'staff', params: reservation }),
  bind(res.cancelReservation, { method: 'POST', path: '/staff/reservations/{reservationId}/cancel', auth: 'staff', params: reservation }),
  bind(res.seatReservation, { method: 'POST', path: '/staff/reservations/{reservationId}/seat', auth: 'staff', params: reservation }),
  bind(res.noShowReservation, { method: 'POST', path: '/staff/reservations/{reservationId}/no-show', auth: 'staff', params: reservation }),

  bind(mine.listMyReservations, { method: 'GET', path: '/customer/reservations', auth: 'customer' }),
  bind(mine.createMyReservation, { method: 'POST', path: '/customer/reservations', auth: 'customer' }),
  bind(mine.myAvailability, { method: 'GET', path: '/customer/reservations/availability', auth: 'customer' }),
  bind(mine.cancelMyReservation, { method: 'POST', path: '/customer/reservations/{reservationId}/cancel', auth: 'customer', params: reservation }),
]
