/**
 * Guests and segments (issue 17 item 5; api-v1 §4.2; docs/operations.md "Guests and segments"):
 * bindings of src/ops/stores/guests.ts for the owner and for staff with the `customers` permission (the
 * staff token's own store). `segments` is bound before `{guest}` so it is never read as an id.
 */
import { ownerAndStaff } from '../bind.ts'
import * as g from '../../ops/stores/guests.ts'

const guest = { guest: 'guest_id' } as const

export const guestRoutes = ownerAndStaff([
  { op: g.listGuests, method: 'GET', path: '/guests' },
  { op: g.guestSegments, method: 'GET', path: '/guests/segments' },
  { op: g.getGuest, method: 'GET', path: '/guests/{guest}', params: guest },
])
