/**
 * PIN devices (docs/staff.md "PIN devices"): the store devices allowed to sign staff in by PIN
 * (tills, kitchen screens). The owner (capability `restaurants:read` / `restaurants:write`) or a
 * manager signed in with email and password enrolls a device once and gets its key, shown once;
 * devices are listed without keys and revoked at once, with every token signed in through them.
 */
import * as v from 'valibot'
import { route, Reply } from '../route.ts'
import { ApiError, notFound } from '../../errors.ts'
import { MAX_ACTIVE_DEVICES, activeDeviceCount, enrollPinDevice, revokePinDevice, type PinDeviceRow } from '../../auth/pin-devices.ts'
import { tokenMethod } from '../../auth/staff.ts'
import type { StaffPrincipal } from '../../auth/principals.ts'
import type { Services } from '../../services.ts'
import { ownedStore } from './owner-access.ts'

const tag = 'Staff'
const EnrollBody = v.object({ name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(80)) })

const DeviceSchema = {
  type: 'object', required: ['id', 'restaurant_id', 'name', 'key_hint', 'enrolled_by', 'created_at', 'last_used_at', 'revoked_at', 'locked_until'],
  properties: {
    id: { type: 'integer' }, restaurant_id: { type: 'integer' }, name: { type: 'string' },
    key_hint: { type: 'string', description: 'The first characters of the key, to tell devices apart.' },
    enrolled_by: { type: 'string', enum: ['owner', 'staff'] }, enrolled_by_staff_id: { type: ['integer', 'null'] },
    created_at: { type: 'string' }, last_used_at: { type: ['string', 'null'] }, revoked_at: { type: ['string', 'null'] },
    locked_until: { type: ['string', 'null'], description: 'Set while wrong PINs keep this device locked.' },
  },
}
const EnrolledSchema = {
  ...DeviceSchema, required: [...DeviceSchema.required, 'key'],
  properties: { ...DeviceSchema.properties, key: { type: 'string', description: 'The device key (`dsk_…`), in this answer only: the `device` of `POST /restaurants/{id}/staff/pin`.' } },
}

const deviceView = (r: PinDeviceRow) => ({
  id: r.id, restaurant_id: r.store_id, name: r.name, key_hint: r.key_hint, enrolled_by: r.enrolled_by, enrolled_by_staff_id: r.enrolled_by_staff_id,
  created_at: r.created_at, last_used_at: r.last_used_at, revoked_at: r.revoked_at,
  locked_until: r.locked_until && Date.parse(r.locked_until) > Date.now() ? r.locked_until : null,
})
const listOf = (svc: Services, storeId: number) =>
  svc.db.prepare<[number], PinDeviceRow>('SELECT * FROM staff_pin_devices WHERE store_id = ? ORDER BY revoked_at IS NOT NULL, id DESC').all(storeId).map(deviceView)

async function enroll(svc: Services, storeId: number, name: string, byStaffId: number | null): Promise<Reply> {
  const out = await svc.committer.write((db) => {
    // Counted inside the write, so parallel enrollments cannot pass the cap together.
    if (activeDeviceCount(db, storeId) >= MAX_ACTIVE_DEVICES) throw new ApiError('conflict', `This store has ${MAX_ACTIVE_DEVICES} enrolled devices; revoke one first.`)
    return enrollPinDevice(db, storeId, name, byStaffId)
  })
  const row = svc.db.prepare<[number], PinDeviceRow>('SELECT * FROM staff_pin_devices WHERE id = ?').get(out.id)!
  return new Reply(201, { ...deviceView(row), key: out.key })
}

async function revoke(svc: Services, storeId: number, deviceId: string | undefined): Promise<null> {
  const tokens = await svc.committer.write((db) => revokePinDevice(db, storeId, Number(deviceId)))
  if (tokens === null) throw notFound('device')
  for (const id of tokens) svc.kds.tokenRevoked(id)
  return null
}

/**
 * Managers only, and only with a token from the password sign-in: a PIN is short and typed on
 * shared screens, so it must not be enough to let more devices in.
 */
function manager(svc: Services, p: StaffPrincipal): number {
  if (p.role !== 'manager') throw new ApiError('forbidden', 'Only a manager can manage PIN devices.')
  if (tokenMethod(svc.db, p.tokenId) !== 'password') throw new ApiError('forbidden', 'Sign in with email and password (not a PIN) to manage PIN devices.')
  return p.storeId
}

const enrollSummary = 'Enroll a device for PIN sign-in; the device key is in this answer only'
const enrollDescription = `Body \`{name}\` (e.g. "Kitchen screen 1"). Returns the device with \`key\`: store it on the device and send it as \`device\` to \`POST /restaurants/{id}/staff/pin\`. At most ${MAX_ACTIVE_DEVICES} enrolled devices per store (409 \`conflict\`).`
const revokeSummary = 'Revoke a PIN device: its key stops working and every token signed in through it is revoked (its kitchen screens close)'

export const pinDeviceRoutes = [
  route({
    method: 'GET', path: '/restaurants/{id}/pin-devices', tag, auth: 'owner', capability: 'restaurants:read', response: { type: 'array', items: DeviceSchema },
    summary: 'The store\'s PIN devices (never their keys), enrolled first, newest first',
    handler: ({ svc, principal, params }) => listOf(svc, ownedStore(svc, principal, params.id).id),
  }),
  route({
    method: 'POST', path: '/restaurants/{id}/pin-devices', tag, auth: 'owner', capability: 'restaurants:write', body: EnrollBody, status: 201, response: EnrolledSchema,
    summary: enrollSummary, description: enrollDescription,
    handler: ({ svc, principal, params, body }) => enroll(svc, ownedStore(svc, principal, params.id).id, body.name, null),
  }),
  route({
    method: 'DELETE', path: '/restaurants/{id}/pin-devices/{deviceId}', tag, auth: 'owner', capability: 'restaurants:write', status: 204,
    summary: revokeSummary,
    handler: ({ svc, principal, params }) => revoke(svc, ownedStore(svc, principal, params.id).id, params.deviceId),
  }),
  route({
    method: 'GET', path: '/staff/pin-devices', tag, auth: 'staff', response: { type: 'array', items: DeviceSchema },
    summary: 'The store\'s PIN devices (never their keys); managers signed in with a password',
    handler: ({ svc, principal }) => listOf(svc, manager(svc, principal)),
  }),
  route({
    method: 'POST', path: '/staff/pin-devices', tag, auth: 'staff', body: EnrollBody, status: 201, response: EnrolledSchema,
    summary: `${enrollSummary}; managers signed in with a password`,
    description: `${enrollDescription} Other roles, and tokens from a PIN sign-in: 403 \`forbidden\`.`,
    handler: ({ svc, principal, body }) => enroll(svc, manager(svc, principal), body.name, principal.staffId),
  }),
  route({
    method: 'DELETE', path: '/staff/pin-devices/{deviceId}', tag, auth: 'staff', status: 204,
    summary: `${revokeSummary}; managers signed in with a password`,
    handler: ({ svc, principal, params }) => revoke(svc, manager(svc, principal), params.deviceId),
  }),
]
