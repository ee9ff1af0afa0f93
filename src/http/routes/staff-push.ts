/** Staff push devices (api-v1 §4.7 "push"; docs/staff.md "Push"): bindings of src/ops/stores/staff.ts. */
import { bind } from '../bind.ts'
import * as staff from '../../ops/stores/staff.ts'

export const staffPushRoutes = [
  bind(staff.registerPush, { method: 'POST', path: '/staff/push/register-device', auth: 'staff' }),
  bind(staff.unregisterPush, { method: 'POST', path: '/staff/push/unregister-device', auth: 'staff' }),
]

