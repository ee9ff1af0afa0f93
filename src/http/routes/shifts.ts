/**
 * Cash shifts (issue 17 item 3; docs/operations.md "Cash shifts"): the owner's routes name the
 * store, staff routes act in the member's own store; both bind the same operations (src/ops/money/shifts.ts).
 */
import { bind } from '../bind.ts'
import * as shifts from '../../ops/money/shifts.ts'

const store = { store: 'id' } as const
const shift = { shiftId: 'shift_id' }

export const shiftRoutes = [
  bind(shifts.listShifts, { method: 'GET', path: '/restaurants/{id}/shifts', auth: 'owner', ids: store }),
  bind(shifts.openShift, { method: 'POST', path: '/restaurants/{id}/shifts', auth: 'owner', ids: store }),
  bind(shifts.getShift, { method: 'GET', path: '/restaurants/{id}/shifts/{shiftId}', auth: 'owner', ids: store, params: shift }),
  bind(shifts.closeShiftOp, { method: 'POST', path: '/restaurants/{id}/shifts/{shiftId}/close', auth: 'owner', ids: store, params: shift }),
  bind(shifts.listShifts, { method: 'GET', path: '/staff/shifts', auth: 'staff' }),
  bind(shifts.openShift, { method: 'POST', path: '/staff/shifts', auth: 'staff' }),
  bind(shifts.getShift, { method: 'GET', path: '/staff/shifts/{shiftId}', auth: 'staff', params: shift }),
  bind(shifts.closeShiftOp, { method: 'POST', path: '/staff/shifts/{shiftId}/close', auth: 'staff', params: shift }),
]
