/**
 * The owner's side of the staff app (docs/staff.md "Managing staff"): members of a store with a
 * role, per-staff permission overrides, a KDS station, a password and an optional PIN. The spec
 * names staff tokens, roles and overrides (api-v1 §2.7, §5) but no way to create them; these
 * operations are that way (capability `restaurants:read` / `restaurants:write`).
 *
 * Secrets are stored only as slow hashes; a PIN must be unique within its store because the PIN
 * alone picks the member at sign-in. Changing a password signs the member out everywhere,
 * changing a PIN signs out the devices that used it; deleting a member closes its kitchen screens.
 */
import * as v from 'valibot'
import { defineOp, type Access } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Id } from '../schemas/common.ts'
import { StaffSchema, staffView } from './staff.ts'
import { ApiError, notFound } from '../../errors.ts'
import { hashSecret, verifySecret } from '../../auth/passwords.ts'
import { hashPin, saltOf, sameHash, storePinSalt } from '../../auth/staff.ts'
import { STAFF_PERMISSIONS, STAFF_ROLES, parseOverrides } from '../../domain/permissions.ts'
import {
  deleteStaff, insertStaff, pinHashTaken, pinHashesOfStore, revokeStaffTokens, staffInStore, staffOfStore, updateStaff,
  type StaffChanges, type StaffRow,
} from '../../storage/staff.ts'
import type { Db } from '../../storage/db.ts'
import { requireQuota } from '../../storage/entitlements.ts'
import type { Services } from '../../services.ts'

const tag = 'Staff'
const read: Access = { owner: 'restaurants:read' }
const write: Access = { owner: 'restaurants:write' }

const Permission = v.picklist(STAFF_PERMISSIONS)
const fields = {
  name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(120)),
  email: v.pipe(v.string(), v.trim(), v.toLowerCase(), v.email(), v.maxLength(254)),
  role: v.picklist(STAFF_ROLES),
  password: v.pipe(v.string(), v.minLength(8, 'Use at least 8 characters.'), v.maxLength(200)),
  pin: v.optional(v.nullable(v.pipe(v.string(), v.regex(/^\d{4,8}$/, 'A PIN is 4 to 8 digits.')))),
  station: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(40)))),
  permissions: v.optional(v.object({ grant: v.optional(v.array(Permission), []), revoke: v.optional(v.array(Permission), []) })),
}
const StaffCreate = v.object(fields)
const StaffUpdate = v.object({
  staff_id: Id,
  ...v.partial(v.object(fields)).entries,
  two_factor_enabled: v.optional(v.literal(false, 'Two-factor sign-in is turned on by the member (POST /staff/2fa/setup); the owner can only turn it off.')),
})

const AdminStaffSchema = {
  ...StaffSchema,
  required: [...StaffSchema.required, 'has_pin', 'overrides'],
  properties: {
    ...StaffSchema.properties,
    has_pin: { type: 'boolean' },
    overrides: { type: 'object', properties: { grant: { type: 'array', items: { type: 'string' } }, revoke: { type: 'array', items: { type: 'string' } } } },
    created_at: { type: 'string' },
  },
}

const adminView = (r: StaffRow) => {
  const o = parseOverrides(r.permissions)
  return { ...staffView(r), has_pin: r.pin_hash !== null, overrides: { grant: o.grant ?? [], revoke: o.revoke ?? [] }, created_at: r.created_at }
}
/** A member of this store; another store's member is not found. */
const member = (svc: Services, storeId: number, id: number): StaffRow => {
  const r = staffInStore(svc.db, id, storeId)
  if (!r) throw notFound('staff member')
  return r
}
const emailTaken = () => new ApiError('validation_failed', undefined, { email: ['Another member of this store uses this email.'] })
const isUnique = (err: unknown) => err instanceof Error && /UNIQUE constraint failed/.test(err.message)
const pinTaken = () => new ApiError('validation_failed', undefined, { pin: ['Another member of this store uses this PIN; PINs pick the member, so they must differ.'] })

/** The PIN's hash with the store's salt, refused when another member of the store has the same PIN. */
async function pinHashFor(svc: Services, storeId: number, pin: string, exceptId: number | null): Promise<string> {
  const salt = await svc.committer.write((db) => storePinSalt(db, storeId))
  const hash = await hashPin(pin, salt)
  const others = pinHashesOfStore(svc.db, storeId, exceptId ?? 0)
  const clash = others.some((o) => saltOf(o.pin_hash) === salt && sameHash(o.pin_hash, hash)) ||
    (await Promise.all(others.filter((o) => saltOf(o.pin_hash) !== salt).map((o) => verifySecret(pin, o.pin_hash)))).some(Boolean)
  if (clash) throw pinTaken()
  return hash
}

/** Re-checked inside the write: two members given the same PIN at once cannot both keep it. */
function assertPinFree(db: Db, storeId: number, pinHash: string | null | undefined, exceptId: number) {
  if (pinHash && pinHashTaken(db, storeId, pinHash, exceptId)) throw pinTaken()
}

const overridesJson = (p: { grant: string[]; revoke: string[] } | undefined) =>
  p === undefined ? undefined : p.grant.length || p.revoke.length ? JSON.stringify({ grant: [...new Set(p.grant)], revoke: [...new Set(p.revoke)] }) : null

const description = 'Body `{name, email, role: manager|cashier|kitchen|waiter, password (8+), pin? (4–8 digits, unique in the store), station?, permissions?: {grant?: [], revoke?: []}}`. Effective permissions are the role\'s defaults plus `grant` minus `revoke` (docs/staff.md "Permissions").'

export const listStaff = defineOp({
  id: 'staff.members.list', tag, summary: 'The store\'s staff members with role, overrides and effective permissions',
  access: read, scope: ['store'], output: { type: 'array', items: AdminStaffSchema },
  run: (ctx) => staffOfStore(ctx.svc.db, storeOf(ctx).id).map(adminView),
})

export const createStaff = defineOp({
  id: 'staff.members.create', tag, summary: 'Add a staff member', description,
  access: write, scope: ['store'], input: StaffCreate, output: AdminStaffSchema,
  run: async (ctx, input) => {
    const { svc } = ctx
    const store = storeOf(ctx)
    const [passwordHash, pinHash] = await Promise.all([hashSecret(input.password), input.pin ? pinHashFor(svc, store.id, input.pin, null) : null])
    let id: number
    try {
      id = await svc.committer.write((db) => {
        assertPinFree(db, store.id, pinHash, 0)
        // The plan's staff quota, in the inserting transaction (docs/billing.md).
        requireQuota(db, store.owner_id, 'staff')
        return insertStaff(db, store.id, {
          name: input.name, email: input.email, role: input.role, password_hash: passwordHash, pin_hash: pinHash,
          permissions: overridesJson(input.permissions) ?? null, station: input.station ?? null,
        })
      })
    } catch (err) {
      throw isUnique(err) ? emailTaken() : err
    }
    return adminView(member(svc, store.id, id))
  },
})

export const updateStaffMember = defineOp({
  id: 'staff.members.update', tag, summary: 'Change a staff member: role, overrides, station, password, PIN',
  description: `${description} Fields left out stay; \`pin: null\` removes the PIN; \`permissions\` replaces the overrides; \`two_factor_enabled: false\` turns two-factor sign-in off (a lost phone). A new password signs the member out on every device, a new or removed PIN on the devices signed in by PIN. Role and permission changes apply to existing tokens at once.`,
  access: write, scope: ['store'], input: StaffUpdate, output: AdminStaffSchema,
  run: async (ctx, input) => {
    const { svc } = ctx
    const store = storeOf(ctx)
    const cur = member(svc, store.id, input.staff_id)
    const [passwordHash, pinHash] = await Promise.all([
      input.password !== undefined ? hashSecret(input.password) : undefined,
      input.pin ? pinHashFor(svc, store.id, input.pin, cur.id) : input.pin,
    ])
    const changes: StaffChanges = {
      name: input.name, email: input.email, role: input.role, station: input.station, permissions: overridesJson(input.permissions),
      password_hash: passwordHash, pin_hash: pinHash,
      ...(input.two_factor_enabled === false ? { totp_secret: null, totp_pending: null, totp_last_step: null } : {}),
    }
    let revoked: number[]
    try {
      revoked = await svc.committer.write((db) => {
        assertPinFree(db, store.id, pinHash, cur.id)
        updateStaff(db, cur.id, changes)
        if (passwordHash !== undefined) return revokeStaffTokens(db, cur.id, null)
        if (pinHash !== undefined) return revokeStaffTokens(db, cur.id, 'pin')
        return []
      })
    } catch (err) {
      throw isUnique(err) ? emailTaken() : err
    }
    // Signed-out tokens close their kitchen screens now, not at their next frame.
    for (const id of revoked) svc.kds.tokenRevoked(id)
    // Role and permission changes reach open sockets too: one without `kds` loses its screens (4003).
    svc.realtime.credentialsChanged({ staffId: cur.id })
    return adminView(member(svc, store.id, cur.id))
  },
})

export const deleteStaffMember = defineOp({
  id: 'staff.members.delete', tag, summary: 'Remove a staff member (its tokens stop working, its kitchen screens close)',
  access: write, scope: ['store'], empty: true, input: v.object({ staff_id: Id }),
  run: async (ctx, { staff_id }) => {
    const { svc } = ctx
    const cur = member(svc, storeOf(ctx).id, staff_id)
    const revoked = await svc.committer.write((db) => {
      const ids = revokeStaffTokens(db, cur.id, null)
      deleteStaff(db, cur.id)
      return ids
    })
    for (const id of revoked) svc.kds.tokenRevoked(id)
  },
})

export const staffAdminOps = [listStaff, createStaff, updateStaffMember, deleteStaffMember]
