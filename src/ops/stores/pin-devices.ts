/**
 * PIN devices (docs/staff.md "PIN devices"): the store devices allowed to sign staff in by PIN
 * (tills, kitchen screens). The owner (capability `restaurants:read` / `restaurants:write`) or a
 * manager signed in with email and password enrolls a device once and gets its key, shown once;
 * devices are listed without keys and revoked at once, with every token signed in through them.
 */
import * as v from 'valibot'
import { defineOp, type Access, type OpCtx } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Id } from '../schemas/common.ts'
import { ApiError, notFound } from '../../errors.ts'
import { MAX_ACTIVE_DEVICES, activeDeviceCount, enrollPinDevice, revokePinDevice, type PinDeviceRow } from '../../auth/pin-devices.ts'
import { pinDeviceById, pinDevicesOfStore, staffTokenMethod } from '../../storage/staff.ts'

const tag = 'Staff'
/** Staff: every member passes the declaration; `managedStore` then admits managers with a password token only. */
const read: Access = { owner: 'restaurants:read', staff: 'any' }
const write: Access = { owner: 'restaurants:write', staff: 'any' }

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

/**
 * The store whose devices the caller manages, and the member enrolling (null for the owner).
 * Staff: managers only, and only with a token from the password sign-in: a PIN is short and typed
 * on shared screens, so it must not be enough to let more devices in.
 */
function managedStore(ctx: OpCtx): { storeId: number; byStaffId: number | null } {
  const storeId = storeOf(ctx).id
  const p = ctx.principal
  if (p?.kind !== 'staff') return { storeId, byStaffId: null }
  if (p.role !== 'manager') throw new ApiError('forbidden', 'Only a manager can manage PIN devices.')
  if (staffTokenMethod(ctx.svc.db, p.tokenId) !== 'password') throw new ApiError('forbidden', 'Sign in with email and password (not a PIN) to manage PIN devices.')
  return { storeId, byStaffId: p.staffId }
}

const staffNote = 'Owners, or managers signed in with email and password; other roles, and tokens from a PIN sign-in: 403 `forbidden`.'

export const listPinDevices = defineOp({
  id: 'staff.pin_devices.list', tag, summary: 'The store\'s PIN devices (never their keys), enrolled first, newest first',
  description: staffNote,
  access: read, scope: ['store'], output: { type: 'array', items: DeviceSchema },
  run: (ctx) => pinDevicesOfStore(ctx.svc.db, managedStore(ctx).storeId).map(deviceView),
})

export const enrollDevice = defineOp({
  id: 'staff.pin_devices.enroll', tag, summary: 'Enroll a device for PIN sign-in; the device key is in this answer only',
  description: `Body \`{name}\` (e.g. "Kitchen screen 1"). Returns the device with \`key\`: store it on the device and send it as \`device\` to \`POST /restaurants/{id}/staff/pin\`. At most ${MAX_ACTIVE_DEVICES} enrolled devices per store (409 \`conflict\`). ${staffNote}`,
  access: write, scope: ['store'], input: v.object({ name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(80)) }), output: EnrolledSchema,
  run: async (ctx, { name }) => {
    const { storeId, byStaffId } = managedStore(ctx)
    const out = await ctx.svc.committer.write((db) => {
      // Counted inside the write, so parallel enrollments cannot pass the cap together.
      if (activeDeviceCount(db, storeId) >= MAX_ACTIVE_DEVICES) throw new ApiError('conflict', `This store has ${MAX_ACTIVE_DEVICES} enrolled devices; revoke one first.`)
      return enrollPinDevice(db, storeId, name, byStaffId)
    })
    const row = pinDeviceById(ctx.svc.db, out.id)
    if (!row) throw new ApiError('internal_error', 'Enrolled device vanished.')
    return { ...deviceView(row), key: out.key }
  },
})

export const revokeDevice = defineOp({
  id: 'staff.pin_devices.revoke', tag, summary: 'Revoke a PIN device: its key stops working and every token signed in through it is revoked (its kitchen screens close)',
  description: staffNote,
  access: write, scope: ['store'], empty: true, input: v.object({ device_id: Id }),
  run: async (ctx, { device_id }) => {
    const { storeId } = managedStore(ctx)
    const tokens = await ctx.svc.committer.write((db) => revokePinDevice(db, storeId, device_id))
    if (tokens === null) throw notFound('device')
    for (const id of tokens) ctx.svc.kds.tokenRevoked(id)
  },
})

export const pinDeviceOps = [listPinDevices, enrollDevice, revokeDevice]
