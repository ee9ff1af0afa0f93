/**
 * Owner driver management (api-v1 §4.2 `/drivers`, §2.7). The raw driver token is returned exactly
 * once, on creation and on rotation; only its SHA-256 is stored. Another owner's driver is a 404.
 */
import { route, Reply } from '../route.ts'
import { paginate, PaginatedSchema } from '../schemas.ts'
import { DriverCreate, DriverListQuery, DriverSchema, DriverUpdate, DriverWithTokenSchema } from '../delivery-schemas.ts'
import { ApiError, notFound } from '../../errors.ts'
import { newToken, sha256Hex } from '../../auth/tokens.ts'
import { normalizePhone } from '../../domain/delivery.ts'
import { nowIso } from '../../storage/db.ts'
import { driverView, type DriverRow } from '../../storage/drivers.ts'
import type { DriverLive, DriverPatch } from '../../actors/driver.ts'
import type { OwnerPrincipal } from '../../auth/principals.ts'
import type { Services } from '../../services.ts'

const DRIVERS_PER_PAGE = 50
const tag = 'Drivers'

export function ownedDriver(svc: Services, principal: OwnerPrincipal, id: string | number | undefined): DriverRow {
  const d = svc.drivers.ownedBy(Number(id), principal.ownerId)
  if (!d) throw notFound('driver')
  return d
}

/** A phone in a body: one spelling per number (so SMS login finds the driver), else 422. */
export function phoneOf(raw: string, field = 'phone'): string {
  const p = normalizePhone(raw)
  if (!p) throw new ApiError('validation_failed', undefined, { [field]: ['Use a phone number such as +15550100200.'] })
  return p
}

/** A store named in a body must be the owner's: otherwise it is a field error, not a 404. */
function ownStoreField(svc: Services, principal: OwnerPrincipal, id: number | null | undefined): void {
  if (id != null && !svc.stores.ownedBy(id, principal.ownerId)) {
    throw new ApiError('validation_failed', undefined, { restaurant_id: ['The restaurant does not exist.'] })
  }
}

export const driverRoutes = [
  route({
    method: 'GET', path: '/drivers', tag, summary: 'List your drivers (50 per page)', auth: 'owner', capability: 'drivers:read',
    query: DriverListQuery, response: PaginatedSchema(DriverSchema),
    description: 'Optional `restaurant_id` lists the drivers bound to that store.',
    handler: ({ svc, principal, query }) => {
      const page = query.page ? Number(query.page) : 1
      const { rows, total } = svc.drivers.page(principal.ownerId, page, DRIVERS_PER_PAGE, query.restaurant_id ? Number(query.restaurant_id) : undefined)
      return paginate(rows.map((d) => driverView(d)), page, DRIVERS_PER_PAGE, total)
    },
  }),
  route({
    method: 'POST', path: '/drivers', tag, summary: 'Create a driver (returns its token once)', auth: 'owner', capability: 'drivers:write',
    body: DriverCreate, status: 201, response: DriverWithTokenSchema,
    description: '`restaurant_id` binds the driver to one store; unbound drivers may serve every store of the owner. The `token` is shown only in this response.',
    handler: async ({ svc, principal, body }) => {
      const phone = phoneOf(body.phone)
      ownStoreField(svc, principal, body.restaurant_id)
      const token = newToken('driver')
      const id = await svc.committer.write((db) => Number(db.prepare('INSERT INTO drivers (owner_id, restaurant_id, name, phone, token_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)')
        .run(principal.ownerId, body.restaurant_id ?? null, body.name, phone, sha256Hex(token), nowIso()).lastInsertRowid))
      return { ...driverView(svc.drivers.byId(id)!, { connected: false, active_deliveries: [] }), token }
    },
  }),
  route({
    method: 'GET', path: '/drivers/{id}', tag, summary: 'A driver with live location, connection and active deliveries', auth: 'owner',
    capability: 'drivers:read', response: DriverSchema,
    handler: ({ svc, principal, params }) => {
      const d = ownedDriver(svc, principal, params.id)
      return svc.actors.drivers.ask<DriverLive>(d.id, (replyTo) => ({ type: 'get', replyTo }))
    },
  }),
  route({
    method: 'PUT', path: '/drivers/{id}', tag, summary: 'Update a driver', auth: 'owner', capability: 'drivers:write',
    body: DriverUpdate, response: DriverSchema, description: 'Any of `name`, `phone`, `restaurant_id` (null unbinds).',
    handler: ({ svc, principal, params, body }) => {
      const d = ownedDriver(svc, principal, params.id)
      ownStoreField(svc, principal, body.restaurant_id)
      const patch: DriverPatch = {
        name: body.name,
        phone: body.phone === undefined ? undefined : phoneOf(body.phone),
        restaurantId: body.restaurant_id,
      }
      return svc.actors.drivers.ask<DriverLive>(d.id, (replyTo) => ({ type: 'update', patch, replyTo }))
    },
  }),
  route({
    method: 'DELETE', path: '/drivers/{id}', tag, summary: 'Delete a driver', auth: 'owner', capability: 'drivers:write', status: 204,
    description: 'Refused with 409 `driver_busy` while the driver has active deliveries. Its open sockets are closed.',
    handler: async ({ svc, principal, params }) => {
      const d = ownedDriver(svc, principal, params.id)
      await svc.actors.drivers.ask<null>(d.id, (replyTo) => ({ type: 'delete', replyTo }))
      svc.actors.drivers.evict(d.id)
      return new Reply(204, null)
    },
  }),
  route({
    method: 'POST', path: '/drivers/{id}/rotate-token', tag, summary: 'Replace the driver token (returns the new one once)', auth: 'owner',
    capability: 'drivers:write', response: DriverWithTokenSchema,
    description: 'The old token, and every device token from the SMS login, stop working at once; open driver sockets are closed (code 4001).',
    handler: async ({ svc, principal, params }) => {
      const d = ownedDriver(svc, principal, params.id)
      const token = newToken('driver')
      const live = await svc.actors.drivers.ask<DriverLive>(d.id, (replyTo) => ({ type: 'rotate_token', tokenHash: sha256Hex(token), replyTo }))
      return { ...live, token }
    },
  }),
]
