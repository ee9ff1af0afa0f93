/**
 * Tables and reservations (issue 17 item 4; docs/operations.md "Reservations"): the owner's,
 * staff's (their own store, permission `orders`) and the customer app's bindings. One operation
 * serves owner and staff (src/ops/stores/reservations.ts, src/ops/stores/tables.ts); the customer's are their own
 * (src/ops/customers/customer-reservations.ts).
 */
import { bind, ownerAndStaff } from '../bind.ts'
import * as tables from '../../ops/stores/tables.ts'
import * as res from '../../ops/stores/reservations.ts'
import * as mine from '../../ops/customers/customer-reservations.ts'

const table = { tableId: 'table_id' }
const reservation = { reservationId: 'reservation_id' }

export const reservationRoutes = [
  ...ownerAndStaff([
    { op: tables.listTables, method: 'GET', path: '/tables' },
    { op: tables.createTable, method: 'POST', path: '/tables' },
    { op: tables.updateTable, method: 'PUT', path: '/tables/{tableId}', params: table },
    { op: tables.deleteTable, method: 'DELETE', path: '/tables/{tableId}', params: table },
    { op: res.listReservations, method: 'GET', path: '/reservations' },
    { op: res.createReservation, method: 'POST', path: '/reservations' },
    { op: res.reservationAvailability, method: 'GET', path: '/reservations/availability' },
    { op: res.getReservation, method: 'GET', path: '/reservations/{reservationId}', params: reservation },
    { op: res.updateReservation, method: 'PUT', path: '/reservations/{reservationId}', params: reservation },
    { op: res.cancelReservation, method: 'POST', path: '/reservations/{reservationId}/cancel', params: reservation },
    { op: res.seatReservation, method: 'POST', path: '/reservations/{reservationId}/seat', params: reservation },
    { op: res.noShowReservation, method: 'POST', path: '/reservations/{reservationId}/no-show', params: reservation },
  ]),

  bind(mine.listMyReservations, { method: 'GET', path: '/customer/reservations', auth: 'customer' }),
  bind(mine.createMyReservation, { method: 'POST', path: '/customer/reservations', auth: 'customer' }),
  bind(mine.myAvailability, { method: 'GET', path: '/customer/reservations/availability', auth: 'customer' }),
  bind(mine.cancelMyReservation, { method: 'POST', path: '/customer/reservations/{reservationId}/cancel', auth: 'customer', params: reservation }),
]
