/**
 * Driver account routes (api-v1 §4.6, listed-only; payloads designed in docs/drivers.md): bindings
 * of the driver account operations (src/ops/delivery/driver-account.ts) — SMS login, push devices, shifts,
 * earnings. The login routes take no credential and have a tighter per-address limit (api-v1 §8).
 */
import { bind } from '../bind.ts'
import * as account from '../../ops/delivery/driver-account.ts'

const signIn = { perMinute: 30 }

export const driverAccountRoutes = [
  bind(account.requestLoginCode, { method: 'POST', path: '/driver/login/request', auth: 'none', rateLimit: signIn }),
  bind(account.verifyLoginCode, { method: 'POST', path: '/driver/login/verify', auth: 'none', rateLimit: signIn }),
  bind(account.registerDevice, { method: 'POST', path: '/driver/push/register-device', auth: 'driver' }),
  bind(account.unregisterDevice, { method: 'POST', path: '/driver/push/unregister-device', auth: 'driver' }),
  bind(account.setShift, { method: 'POST', path: '/driver/shift', auth: 'driver' }),
  bind(account.getEarnings, { method: 'GET', path: '/driver/earnings', auth: 'driver' }),
]
