/**
 * Customer sign-in (api-v1 §4.5, §5, §8; docs/customers.md): bindings of src/ops/customers/customer-auth.ts
 * under the store's path. The per-address limits of §8 (counted per client address and store) are
 * these bindings' `rateLimit`: register and login 10 per minute, OTP requests 6, OTP checks 10.
 */
import { bind } from '../bind.ts'
import * as auth from '../../ops/customers/customer-auth.ts'

const LOGIN_RATE = { perMinute: 10 }
const OTP_RATE = { perMinute: 6 }
const store = { store: 'id' } as const

export const customerAuthRoutes = [
  bind(auth.register, { method: 'POST', path: '/restaurants/{id}/customer/register', auth: 'none', ids: store, rateLimit: LOGIN_RATE }),
  bind(auth.login, { method: 'POST', path: '/restaurants/{id}/customer/login', auth: 'none', ids: store, rateLimit: LOGIN_RATE }),
  bind(auth.requestOtp, { method: 'POST', path: '/restaurants/{id}/customer/otp/request', auth: 'none', ids: store, rateLimit: OTP_RATE }),
  bind(auth.verifyOtp, { method: 'POST', path: '/restaurants/{id}/customer/otp/verify', auth: 'none', ids: store, rateLimit: LOGIN_RATE }),
]
