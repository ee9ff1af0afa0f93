/**
 * Owner driver management (api-v1 §4.2 `/drivers`, §2.7). The raw driver token is returned exactly
 * once, on creation and on rotation; only its SHA-256 is stored. Another owner's driver is a 404,
 * resolved by the policy (`scope: ['driver']`) before the input is validated. Changes to an
 * existing driver go through its actor, so they never race the driver app or its socket.
 */
import { defineOp, type Access } from '../op.ts'
import { ownerOf, scopedDriverOf } from '../scope.ts'
import { paginate, PaginatedSchema } from '../schemas/common.ts'
import { DriverCreate, DriverListQuery, DriverSchema, DriverUpdate, DriverWithTokenSchema } from '../schemas/delivery.ts'
import { phoneOf } from './delivery-views.ts'
import { ApiError } from '../../errors.ts'
import { newToken, sha256Hex } from '../../auth/tokens.ts'
import { nowIso } from '../../storage/db.ts'
import { driverView, insertDriver } from '../../storage/drivers.ts'
import { requireQuota } from '../../storage/entitlements.ts'
import type { DriverLive, DriverPatch } from '../../actors/driver.ts'
import type { Services } from '../../services.ts'

const DRIVERS_PER_PAGE = 50
const tag = 'Drivers'
const read: Access = { owner: 'drivers:read' }
const write: Access = { owner: 'drivers:write' }

/** A store named in an input must be the owner's: otherwise it is a field error, not a 404. */
function ownStoreField(svc: Services, ownerId: number, id: number | null | undefined): void {
  if (id != null && !svc.stores.ownedBy(id, ownerId)) {
    throw new ApiError('validation_failed', undefined, { restaurant_id: ['The restaurant does not exist.'] })
  }
}

export const listDrivers = defineOp({
  id: 'drivers.list', tag, summary: 'List your drivers (50 per page)', access: read, scope: [],
  description: 'Optional `restaurant_id` lists the drivers bound to that store.',
  input: DriverListQuery, output: PaginatedSchema(DriverSchema),
  run: (ctx, query) => {
    const page = query.page ? Number(query.page) : 1
    const { rows, total } = ctx.svc.drivers.page(ownerOf(ctx).ownerId, page, DRIVERS_PER_PAGE, query.restaurant_id ? Number(query.restaurant_id) : undefined)
    return paginate(rows.map((d) => driverView(d)), page, DRIVERS_PER_PAGE, total)
  },
})

export const createDriver = defineOp({
  id: 'drivers.create', feature: 'delivery', tag, summary: 'Create a driver (returns its token once)', access: write, scope: [],
  description: '`restaurant_id` binds the driver to one store; unbound drivers may serve every store of the owner. The `token` is shown only in this response.',
  input: DriverCreate, output: DriverWithTokenSchema,
  run: async (ctx, input) => {
    const { ownerId } = ownerOf(ctx)
    const phone = phoneOf(input.phone)
    ownStoreField(ctx.svc, ownerId, input.restaurant_id)
    const token = newToken('driver')
    const row = { ownerId, restaurantId: input.restaurant_id ?? null, name: input.name, phone, tokenHash: sha256Hex(token), at: nowIso() }
    // The plan's drivers quota, in the inserting transaction (docs/billing.md).
    const id = await ctx.svc.committer.write((db) => { requireQuota(db, ownerId, 'drivers'); return insertDriver(db, row) })
    return { ...driverView(ctx.svc.drivers.byId(id)!, { connected: false, active_deliveries: [] }), token }
  },
})

export const getDriver = defineOp({
  id: 'drivers.get', tag, summary: 'A driver with live location, connection and active deliveries', access: read, scope: ['driver'],
  output: DriverSchema,
  run: (ctx) => ctx.svc.actors.drivers.ask<DriverLive>(scopedDriverOf(ctx).id, (replyTo) => ({ type: 'get', replyTo })),
})

export const updateDriver = defineOp({
  id: 'drivers.update', tag, summary: 'Update a driver', access: write, scope: ['driver'],
  description: 'Any of `name`, `phone`, `restaurant_id` (null unbinds).',
  input: DriverUpdate, output: DriverSchema,
  run: (ctx, input) => {
    const d = scopedDriverOf(ctx)
    ownStoreField(ctx.svc, d.owner_id, input.restaurant_id)
    const patch: DriverPatch = { name: input.name, phone: input.phone === undefined ? undefined : phoneOf(input.phone), restaurantId: input.restaurant_id }
    return ctx.svc.actors.drivers.ask<DriverLive>(d.id, (replyTo) => ({ type: 'update', patch, replyTo }))
  },
})

export const deleteDriver = defineOp({
  id: 'drivers.delete', tag, summary: 'Delete a driver', access: write, scope: ['driver'], empty: true,
  description: 'Refused with 409 `driver_busy` while the driver has active deliveries. Its open sockets are closed.',
  run: async (ctx) => {
    const { id } = scopedDriverOf(ctx)
    await ctx.svc.actors.drivers.ask<null>(id, (replyTo) => ({ type: 'delete', replyTo }))
    // Retired once nothing is in flight: requests queued behind the delete get their 404 from
    // the actor first (issue 10 #5), and a later one meets a fresh actor that finds no row.
    ctx.svc.actors.drivers.evict(id)
  },
})

export const rotateDriverToken = defineOp({
  id: 'drivers.rotate_token', tag, summary: 'Replace the driver token (returns the new one once)', access: write, scope: ['driver'],
  description: 'The old token, and every device token from the SMS login, stop working at once; open driver sockets are closed (code 4001).',
  output: DriverWithTokenSchema,
  run: async (ctx) => {
    const token = newToken('driver')
    const live = await ctx.svc.actors.drivers.ask<DriverLive>(scopedDriverOf(ctx).id, (replyTo) => ({ type: 'rotate_token', tokenHash: sha256Hex(token), replyTo }))
    return { ...live, token }
  },
})

export const driverOps = [listDrivers, createDriver, getDriver, updateDriver, deleteDriver, rotateDriverToken]
