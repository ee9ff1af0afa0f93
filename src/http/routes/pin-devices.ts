/**
 * PIN devices (docs/staff.md "PIN devices"): one operation per action (src/ops/stores/pin-devices.ts),
 * bound for the owner (`/restaurants/{id}/pin-devices`) and for managers (`/staff/pin-devices`).
 */
import { bind } from '../bind.ts'
import * as devices from '../../ops/stores/pin-devices.ts'

const store = { store: 'id' } as const
const device = { deviceId: 'device_id' }
const managers = '; managers signed in with a password'

export const pinDeviceRoutes = [
  bind(devices.listPinDevices, { method: 'GET', path: '/restaurants/{id}/pin-devices', auth: 'owner', ids: store }),
  bind(devices.enrollDevice, { method: 'POST', path: '/restaurants/{id}/pin-devices', auth: 'owner', ids: store }),
  bind(devices.revokeDevice, { method: 'DELETE', path: '/restaurants/{id}/pin-devices/{deviceId}', auth: 'owner', ids: store, params: device }),
  bind(devices.listPinDevices, { method: 'GET', path: '/staff/pin-devices', auth: 'staff', summary: `${devices.listPinDevices.summary}${managers}` }),
  bind(devices.enrollDevice, { method: 'POST', path: '/staff/pin-devices', auth: 'staff', summary: `${devices.enrollDevice.summary}${managers}` }),
  bind(devices.revokeDevice, { method: 'DELETE', path: '/staff/pin-devices/{deviceId}', auth: 'staff', params: device, summary: `${devices.revokeDevice.summary}${managers}` }),
]
