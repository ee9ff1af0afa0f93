/**
 * Cash shifts (issue 17 item 3; docs/operations.md "Cash shifts"): the owner's routes name the
 * store, staff routes act in the member's own store; both bind the same operations (src/ops/money/shifts.ts).
 */
import { ownerAndStaff } from '../bind.ts'
import * as shifts from '../../ops/money/shifts.ts'

const shift = { shiftId: 'shift_id' }

export const shiftRoutes = ownerAndStaff([
  { op: shifts.listShifts, method: 'GET', path: '/shifts' },
  { op: shifts.openShift, method: 'POST', path: '/shifts' },
  { op: shifts.getShift, method: 'GET', path: '/shifts/{shiftId}', params: shift },
  { op: shifts.closeShiftOp, method: 'POST', path: '/shifts/{shiftId}/close', params: shift },
])
