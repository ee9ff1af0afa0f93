/**
 * Guests and segments (issue 17 item 5; api-v1 §4.2; docs/operations.md "Guests and segments"):
 * bindings of src/ops/stores/guests.ts for the owner and for staff with the `customers` permission (the
 * staff token's own store). `segments` is bound before `{guest}` so it is never read as an id.
 */
import { bind } from '../bind.ts'
import * as g from '../../ops/stores/guests.ts'

const store = { store: 'id' } as const
const guest = { guest: 'guest_id' } as const

export const guestRoutes = [
  bind(g.listGuests, { method: 'GET', path: '/restaurants/{id}/guests', auth: 'owner', ids: store }),
  bind(g.guestSegments, { method: 'GET', path: '/restaurants/{id}/guests/segments', auth: 'owner', ids: store }),
  bind(g.getGuest, { method: 'GET', path: '/restaurants/{id}/guests/{guest}', auth: 'owner', ids: store, params: guest }),
  bind(g.listGuests, { method: 'GET', path: '/staff/guests', auth: 'staff' }),
  bind(g.guestSegments, { method: 'GET', path: '/staff/guests/segments', auth: 'staff' }),
  bind(g.getGuest, { method: 'GET', path: '/staff/guests/{guest}', auth: 'staff', params: guest }),
]
