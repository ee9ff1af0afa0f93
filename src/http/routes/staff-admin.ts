/**
 * The owner's side of the staff app (docs/staff.md "Managing staff"): members of a store with a
 * role, per-staff permission overrides, a KDS station, a password and an optional PIN. The spec
 * names staff tokens, roles and overrides (api-v1 §2.7, §5) but no way to create them; these
 * routes are that way (capability `restaurants:read` / `restaurants:write`).
 *
 * Secrets are stored only as slow hashes; a PIN must be unique within its store because the PIN
 * alone picks the member at sign-in. Changing a password signs the member out everywhere,
 * changing a PIN signs out the devices that used it; deleting a member closes its kitchen screens.
 */
import * as v from 'valibot'
import { route, Reply } from '../route.ts'
import { ApiError, notFound } from '../../errors.ts'
import { hashSecret, verifySecret } from '../../auth/passwords.ts'
import { hashPin, saltOf, sameHash, storePinSalt } from '../../auth/staff.ts'
import { STAFF_PERMISSIONS, STAFF_ROLES, parseOverrides } from '../../domain/permissions.ts'
import type { Services } from '../../services.ts'
import type { Db } from '../../storage/db.ts'
import { nowIso } from '../../storage/db.ts'
import type { StaffRow } from '../../auth/staff.ts'
import { ownedStore } from './owner-access.ts'
import { StaffSchema, staffView } from './staff-auth.ts'

const tag = 'Staff'
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
const member = (svc: Services, storeId: number, id: string | undefined) => {
  const r = svc.db.prepare<[number, number], StaffRow>('SELECT * FROM staff WHERE id = ? AND store_id = ?').get(Number(id), storeId)
  if (!r) throw notFound('staff member')
  return r
}
const emailTaken = () => new ApiError('validation_failed', undefined, { email: ['Another member of this store uses this email.'] })
const isUnique = (err: unknown) => err instanceof Error && /UNIQUE constraint failed/.test(err.message)

/** The PIN's hash with the store's salt, refused when another member of the store has the same PIN. */
async function pinHashFor(svc: Services, storeId: number, pin: string, exceptId: number | null): Promise<string> {
  const salt = await svc.committer.write((db) => storePinSalt(db, storeId))
  const hash = await hashPin(pin, salt)
  const others = svc.db.prepare<[number, number], { pin_hash: string }>('SELECT pin_hash FROM staff WHERE store_id = ? AND pin_hash IS NOT NULL AND id != ?').all(storeId, exceptId ?? 0)
  const clash = others.some((o) => saltOf(o.pin_hash) === salt && sameHash(o.pin_hash, hash)) ||
    (await Promise.all(others.filter((o) => saltOf(o.pin_hash) !== salt).map((o) => verifySecret(pin, o.pin_hash)))).some(Boolean)
  if (clash) throw new ApiError('validation_failed', undefined, { pin: ['Another member of this store uses this PIN; PINs pick the member, so they must differ.'] })
  return hash
}

/** Re-checked inside the write: two members given the same PIN at once cannot both keep it. */
function assertPinFree(db: Db, storeId: number, pinHash: string | null | undefined, exceptId: number) {
  if (pinHash && db.prepare('SELECT 1 FROM staff WHERE store_id = ? AND pin_hash = ? AND id != ?').get(storeId, pinHash, exceptId)) {
    throw new ApiError('validation_failed', undefined, { pin: ['Another member of this store uses this PIN; PINs pick the member, so they must differ.'] })
  }
}

/** Revoke tokens of a member (all, or those of one sign-in method) and close their kitchen sockets. */
function revokeTokens(db: Db, staffId: number, method: 'password' | 'pin' | null): number[] {
  const ids = db.prepare<[number], { id: number; method: string }>('SELECT id, method FROM staff_tokens WHERE staff_id = ? AND revoked_at IS NULL').all(staffId)
    .filter((t) => method === null || t.method === method).map((t) => t.id)
  const stmt = db.prepare('UPDATE staff_tokens SET revoked_at = ? WHERE id = ?')
  for (const id of ids) stmt.run(nowIso(), id)
  return ids
}

const overridesJson = (p: { grant: string[]; revoke: string[] } | undefined) =>
  p === undefined ? undefined : p.grant.length || p.revoke.length ? JSON.stringify({ grant: [...new Set(p.grant)], revoke: [...new Set(p.revoke)] }) : null

const description = 'Body `{name, email, role: manager|cashier|kitchen|waiter, password (8+), pin? (4–8 digits, unique in the store), station?, permissions?: {grant?: [], revoke?: []}}`. Effective permissions are the role\'s defaults plus `grant` minus `revoke` (docs/staff.md "Permissions").'

export const staffAdminRoutes = [
  route({
    method: 'GET', path: '/restaurants/{id}/staff', tag, auth: 'owner', capability: 'restaurants:read', response: { type: 'array', items: AdminStaffSchema },
    summary: 'The store\'s staff members with role, overrides and effective permissions',
    handler: ({ svc, principal, params }) => {
      const store = ownedStore(svc, principal, params.id)
      return svc.db.prepare<[number], StaffRow>('SELECT * FROM staff WHERE store_id = ? ORDER BY id').all(store.id).map(adminView)
    },
  }),
  route({
    method: 'POST', path: '/restaurants/{id}/staff', tag, auth: 'owner', capability: 'restaurants:write', body: StaffCreate, status: 201, response: AdminStaffSchema,
    summary: 'Add a staff member', description,
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      const [passwordHash, pinHash] = await Promise.all([hashSecret(body.password), body.pin ? pinHashFor(svc, store.id, body.pin, null) : null])
      try {
        const id = await svc.committer.write((db) => {
          assertPinFree(db, store.id, pinHash, 0)
          return Number(db.prepare('INSERT INTO staff (store_id, name, email, role, password_hash, pin_hash, permissions, station, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
            .run(store.id, body.name, body.email, body.role, passwordHash, pinHash, overridesJson(body.permissions) ?? null, body.station ?? null, nowIso()).lastInsertRowid)
        })
        return new Reply(201, adminView(member(svc, store.id, String(id))))
      } catch (err) {
        throw isUnique(err) ? emailTaken() : err
      }
    },
  }),
  route({
    method: 'PUT', path: '/restaurants/{id}/staff/{staffId}', tag, auth: 'owner', capability: 'restaurants:write', body: StaffUpdate, response: AdminStaffSchema,
    summary: 'Change a staff member: role, overrides, station, password, PIN',
    description: `${description} Fields left out stay; \`pin: null\` removes the PIN; \`permissions\` replaces the overrides; \`two_factor_enabled: false\` turns two-factor sign-in off (a lost phone). A new password signs the member out on every device, a new or removed PIN on the devices signed in by PIN. Role and permission changes apply to existing tokens at once.`,
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      const cur = member(svc, store.id, params.staffId)
      const [passwordHash, pinHash] = await Promise.all([
        body.password !== undefined ? hashSecret(body.password) : undefined,
        body.pin ? pinHashFor(svc, store.id, body.pin, cur.id) : body.pin,
      ])
      const cols = Object.entries({
        name: body.name, email: body.email, role: body.role, station: body.station, permissions: overridesJson(body.permissions),
        password_hash: passwordHash, pin_hash: pinHash,
        ...(body.two_factor_enabled === false ? { totp_secret: null, totp_pending: null, totp_last_step: null } : {}),
      }).filter(([, x]) => x !== undefined)
      let revoked: number[] = []
      try {
        revoked = await svc.committer.write((db) => {
          assertPinFree(db, store.id, pinHash, cur.id)
          if (cols.length) db.prepare(`UPDATE staff SET ${cols.map(([k]) => `${k} = ?`).join(', ')} WHERE id = ?`).run(...cols.map(([, x]) => x), cur.id)
          if (passwordHash !== undefined) return revokeTokens(db, cur.id, null)
          if (pinHash !== undefined) return revokeTokens(db, cur.id, 'pin')
          return []
        })
      } catch (err) {
        throw isUnique(err) ? emailTaken() : err
      }
      for (const id of revoked) svc.kds.tokenRevoked(id)
      return adminView(member(svc, store.id, params.staffId))
    },
  }),
  route({
    method: 'DELETE', path: '/restaurants/{id}/staff/{staffId}', tag, auth: 'owner', capability: 'restaurants:write', status: 204,
    summary: 'Remove a staff member (its tokens stop working, its kitchen screens close)',
    handler: async ({ svc, principal, params }) => {
      const store = ownedStore(svc, principal, params.id)
      const cur = member(svc, store.id, params.staffId)
      const revoked = await svc.committer.write((db) => {
        const ids = revokeTokens(db, cur.id, null)
        db.prepare('DELETE FROM staff WHERE id = ?').run(cur.id)
        return ids
      })
      for (const id of revoked) svc.kds.tokenRevoked(id)
      return null
    },
  }),
]
