/**
 * The owner's side of the staff app (docs/staff.md "Managing staff"): bindings of the staff
 * member operations (src/ops/stores/staff-admin.ts).
 */
import { bind } from '../bind.ts'
import * as admin from '../../ops/stores/staff-admin.ts'

const store = { store: 'id' } as const
const member = { staffId: 'staff_id' }

export const staffAdminRoutes = [
  bind(admin.listStaff, { method: 'GET', path: '/restaurants/{id}/staff', auth: 'owner', ids: store }),
  bind(admin.createStaff, { method: 'POST', path: '/restaurants/{id}/staff', auth: 'owner', ids: store }),
  bind(admin.updateStaffMember, { method: 'PUT', path: '/restaurants/{id}/staff/{staffId}', auth: 'owner', ids: store, params: member }),
  bind(admin.deleteStaffMember, { method: 'DELETE', path: '/restaurants/{id}/staff/{staffId}', auth: 'owner', ids: store, params: member }),
]
