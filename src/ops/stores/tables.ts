/**
 * Tables, or rooms for hotels (issue 17 item 4; docs/operations.md "Reservations"): the bookable
 * places of a store with their capacities. Writes are store-actor messages, serialised with the
 * bookings that use the tables (actors/store-reservations.ts). A table with upcoming bookings is
 * not deleted (409 `table_has_bookings`): set `active: false` to stop new bookings on it, or move
 * the bookings first. Owner: capability `orders:read`/`orders:write` (bookings are front-of-house
 * orders' work, like the coupons); staff: permission `orders`.
 */
import * as v from 'valibot'
import { defineOp, type Access } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Id } from '../schemas/common.ts'
import { named } from '../schemas/named.ts'
import { tableKindOf } from '../../domain/reservations.ts'
import { verticalOf } from '../../domain/verticals.ts'
import { tableReads, type TableRow } from '../../storage/reservations.ts'

const tag = 'Reservations'
export const bookingRead: Access = { owner: 'orders:read', staff: 'orders' }
export const bookingWrite: Access = { owner: 'orders:write', staff: 'orders' }

const fields = {
  name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(20, 'At most 20 characters (it becomes the order\'s table number).')),
  capacity: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)),
  /** Default: `room` for hotels, `table` otherwise (the store's vertical). */
  kind: v.optional(v.picklist(['table', 'room'] as const)),
  active: v.optional(v.boolean()),
}
const tableId = { table_id: Id }

export const TableSchema = {
  type: 'object', required: ['id', 'name', 'capacity', 'kind', 'active'],
  properties: {
    id: { type: 'integer' }, name: { type: 'string' }, capacity: { type: 'integer' }, kind: { type: 'string', enum: ['table', 'room'] },
    active: { type: 'boolean', description: 'false: kept for history, not bookable' }, created_at: { type: 'string' }, updated_at: { type: 'string' },
  },
}
named('DiningTable', TableSchema)

export const tableView = (t: TableRow) => ({ id: t.id, name: t.name, capacity: t.capacity, kind: t.kind, active: t.active === 1, created_at: t.created_at, updated_at: t.updated_at })

export const listTables = defineOp({
  id: 'reservations.tables.list', tag, summary: 'The store\'s tables (rooms for hotels) with capacities', access: bookingRead, scope: ['store'], feature: 'reservations',
  output: { type: 'array', items: TableSchema },
  run: (ctx) => tableReads.list(ctx.svc.db, storeOf(ctx).id).map(tableView),
})

export const createTable = defineOp({
  id: 'reservations.tables.create', tag, summary: 'Add a table (or room)', access: bookingWrite, scope: ['store'], feature: 'reservations',
  description: 'Body `{name, capacity, kind?, active?}`; names are unique per store (case-insensitive), at most 20 characters.',
  input: v.object(fields), output: TableSchema,
  run: async (ctx, input) => {
    const store = storeOf(ctx)
    const f = { name: input.name, capacity: input.capacity, kind: input.kind ?? tableKindOf(verticalOf(store.store_type).group), active: input.active ?? true }
    return tableView(await ctx.svc.actors.stores.ask<TableRow>(store.id, (replyTo) => ({ type: 'table_write', op: { kind: 'create', fields: f }, replyTo })))
  },
})

export const updateTable = defineOp({
  id: 'reservations.tables.update', tag, summary: 'Change a table (keys left out stay)', access: bookingWrite, scope: ['store'], feature: 'reservations',
  description: 'Existing bookings keep their table when its capacity shrinks or it is deactivated; `active: false` only stops new bookings.',
  input: v.object({ ...tableId, ...v.partial(v.object(fields)).entries }), output: TableSchema,
  run: async (ctx, { table_id, ...patch }) =>
    tableView(await ctx.svc.actors.stores.ask<TableRow>(storeOf(ctx).id, (replyTo) => ({ type: 'table_write', op: { kind: 'update', tableId: table_id, patch }, replyTo }))),
})

export const deleteTable = defineOp({
  id: 'reservations.tables.delete', tag, summary: 'Delete a table without upcoming bookings', access: bookingWrite, scope: ['store'], feature: 'reservations', empty: true,
  description: 'A table with upcoming (booked or seated) bookings answers 409 `table_has_bookings`; past bookings keep their history and name no table.',
  input: v.object(tableId),
  run: async (ctx, { table_id }) => {
    await ctx.svc.actors.stores.ask<null>(storeOf(ctx).id, (replyTo) => ({ type: 'table_write', op: { kind: 'delete', tableId: table_id }, replyTo }))
  },
})

export const tableOps = [listTables, createTable, updateTable, deleteTable]
