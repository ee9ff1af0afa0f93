/**
 * Staff sign-in and the member's own account (api-v1 §4.7, §5; docs/staff.md): bindings of the
 * operations in src/ops/stores/staff.ts. Sign-in is public, limited per address and store.
 */
import { bind } from '../bind.ts'
import * as staff from '../../ops/stores/staff.ts'

/** api-v1 §8 gives 10/min for customer login; staff sign-in gets the same budget per address and store. */
const LOGIN_RATE = { perMinute: 10 }
const store = { store: 'id' } as const

export const staffAuthRoutes = [
  bind(staff.signInWithPassword, { method: 'POST', path: '/restaurants/{id}/staff/login', auth: 'none', ids: store, rateLimit: LOGIN_RATE }),
  bind(staff.signInWithPin, { method: 'POST', path: '/restaurants/{id}/staff/pin', auth: 'none', ids: store, rateLimit: LOGIN_RATE }),
  bind(staff.getMe, { method: 'GET', path: '/staff/me', auth: 'staff' }),
  // No input: the body, if any, is drained unread (as before), never parsed.
  bind(staff.logout, { method: 'POST', path: '/staff/logout', auth: 'staff', from: 'query' }),
  bind(staff.startTwoFactor, { method: 'POST', path: '/staff/2fa/setup', auth: 'staff', from: 'query' }),
  bind(staff.confirmTwoFactor, { method: 'POST', path: '/staff/2fa/confirm', auth: 'staff' }),
]
