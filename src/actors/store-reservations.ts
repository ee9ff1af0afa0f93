/**
 * The store actor's tables and reservations (issue 17 item 4; docs/operations.md "Reservations").
 * Every booking write of a store is a store-actor message, so two bookings racing for the last
 * table are decided one after the other: no double booking beyond capacity, whatever the front
 * door. The shell awaits each write before the actor takes its next message, and reads what the
 * decision needs inside the write's own transaction, so even a write from elsewhere could not slip
 * between the check and the insert. `reduceReservation` is the pure decision (rules in
 * domain/reservations.ts); the SQL is in storage/reservations.ts.
 */
import type { Ref, Result } from './system.ts'
import { fail, ok } from './system.ts'
import { ApiError, notFound } from '../errors.ts'
import { canMove, freeTables, tableRefusal, type Booker, type Hold, type ReservationStatus } from '../domain/reservations.ts'
import type { Committer } from '../storage/commit.ts'
import { nowIso, type Db } from '../storage/db.ts'
import { appendEvent, type OutboxEvent } from '../storage/outbox.ts'
import {
  isDuplicateTableName, reservationReads, reservationWrites, tableReads, tableWrites,
  type NewReservation, type ReservationEdit, type ReservationRow, type TableFields, type TableRow,
} from '../storage/reservations.ts'
import type { EventRouter } from './event-router.ts'
import type { Logger } from '../log.ts'

export type TableOp =
  | { kind: 'create'; fields: TableFields }
  | { kind: 'update'; tableId: number; patch: Partial<TableFields> }
  | { kind: 'delete'; tableId: number }

/** A new booking; `table_id` null: the actor picks the smallest fitting free table. */
export type Booking = NewReservation

/** What an edit may change; `table_id` left out keeps the table if it still fits, else picks one. */
export type BookingPatch = Partial<Omit<ReservationEdit, 'ends_at'>>

/** The store actor's reservation messages (part of StoreMsg). */
export type ReservationMsg =
  | { type: 'table_write'; op: TableOp; replyTo: Ref<Result<TableRow | null>> }
  | { type: 'reservation_book'; booking: Booking; replyTo: Ref<Result<ReservationRow>> }
  | { type: 'reservation_edit'; reservationId: number; patch: BookingPatch; replyTo: Ref<Result<ReservationRow>> }
  | {
      type: 'reservation_move'; reservationId: number; to: ReservationStatus; by: Booker
      /** A customer moves only their own booking: anyone else's is a 404. */
      customerId?: number | null
      reason?: string | null; orderId?: number | null; tableId?: number | null
      replyTo: Ref<Result<ReservationRow>>
    }

/** What the shell read for a message, inside the write's transaction. */
export interface ReservationCtx {
  tables: TableRow[]
  /** Bookings holding a table during the time the message asks about. */
  holds: Hold[]
  current?: ReservationRow | undefined
  /** table_write delete: bookings still to come on the table. */
  upcoming?: number
}

export type ReservationEffect =
  | { kind: 'table_insert'; fields: TableFields }
  | { kind: 'table_update'; tableId: number; fields: TableFields }
  | { kind: 'table_delete'; tableId: number }
  | { kind: 'reservation_insert'; row: NewReservation }
  | { kind: 'reservation_edit'; id: number; edit: ReservationEdit }
  | { kind: 'reservation_status'; id: number; status: ReservationStatus; by: Booker; reason: string | null; orderId: number | null; tableId: number | null }

export type ReservationDecision = { ok: true; effect: ReservationEffect } | { ok: false; error: ApiError }

const no = (error: ApiError): ReservationDecision => ({ ok: false, error })
const yes = (effect: ReservationEffect): ReservationDecision => ({ ok: true, effect })
const taken = (why?: string) => new ApiError('no_table_available', why)
const MIN_MS = 60_000

/** The interval a message asks about (the holds the shell reads), or null when none. */
export function intervalOf(msg: ReservationMsg, current: ReservationRow | undefined): { from: string; to: string } | null {
  if (msg.type === 'reservation_book') return { from: msg.booking.starts_at, to: msg.booking.ends_at }
  if (msg.type === 'reservation_edit' && current) return editedTimes(current, msg.patch)
  if (msg.type === 'reservation_move' && msg.to === 'seated' && current) return { from: current.starts_at, to: current.ends_at }
  return null
}

/** A moved booking keeps its length. */
function editedTimes(current: ReservationRow, patch: BookingPatch): { from: string; to: string } {
  if (patch.starts_at === undefined) return { from: current.starts_at, to: current.ends_at }
  const length = Date.parse(current.ends_at) - Date.parse(current.starts_at)
  return { from: patch.starts_at, to: nowIso(Date.parse(patch.starts_at) + Math.max(length, MIN_MS)) }
}

/** Pure: the write a reservation message asks for, or why not. */
export function reduceReservation(msg: ReservationMsg, ctx: ReservationCtx): ReservationDecision {
  switch (msg.type) {
    case 'table_write':
      return tableDecision(msg.op, ctx)
    case 'reservation_book': {
      const b = msg.booking
      if (b.table_id !== null) {
        const why = tableRefusal(ctx.tables.find((t) => t.id === b.table_id), ctx.holds, b.starts_at, b.ends_at, b.party_size)
        return why ? no(taken(why)) : yes({ kind: 'reservation_insert', row: b })
      }
      const table = freeTables(ctx.tables, ctx.holds, b.starts_at, b.ends_at, b.party_size)[0]
      return table ? yes({ kind: 'reservation_insert', row: { ...b, table_id: table.id } }) : no(taken())
    }
    case 'reservation_edit': {
      const cur = ctx.current
      if (!cur) return no(notFound('reservation'))
      if (cur.status !== 'booked') return no(new ApiError('invalid_transition', `A ${cur.status} reservation cannot be changed.`))
      const { from, to } = editedTimes(cur, msg.patch)
      const party = msg.patch.party_size ?? cur.party_size
      let tableId: number | null
      if (msg.patch.table_id != null) {
        const why = tableRefusal(ctx.tables.find((t) => t.id === msg.patch.table_id), ctx.holds, from, to, party, cur.id)
        if (why) return no(taken(why))
        tableId = msg.patch.table_id
      } else {
        // Keep the table if it still takes the booking; else the smallest that does.
        const keep = cur.table_id !== null && tableRefusal(ctx.tables.find((t) => t.id === cur.table_id), ctx.holds, from, to, party, cur.id) === null
        tableId = keep ? cur.table_id : freeTables(ctx.tables, ctx.holds, from, to, party, cur.id)[0]?.id ?? null
        if (tableId === null) return no(taken())
      }
      const p = msg.patch
      return yes({
        kind: 'reservation_edit', id: cur.id,
        edit: {
          table_id: tableId, name: p.name ?? cur.name, phone: p.phone !== undefined ? p.phone : cur.phone, email: p.email !== undefined ? p.email : cur.email,
          party_size: party, starts_at: from, ends_at: to, note: p.note !== undefined ? p.note : cur.note,
        },
      })
    }
    case 'reservation_move': {
      const cur = ctx.current
      if (!cur || (msg.customerId != null && cur.customer_id !== msg.customerId)) return no(notFound('reservation'))
      if (!canMove(cur.status, msg.to)) return no(new ApiError('invalid_transition', `A ${cur.status} reservation cannot become ${msg.to}.`))
      let tableId: number | null = null
      if (msg.to === 'seated' && msg.tableId != null && msg.tableId !== cur.table_id) {
        // Seated at another table than booked: it must take the party for the rest of the booking.
        const why = tableRefusal(ctx.tables.find((t) => t.id === msg.tableId), ctx.holds, cur.starts_at, cur.ends_at, cur.party_size, cur.id)
        if (why) return no(taken(why))
        tableId = msg.tableId
      }
      return yes({ kind: 'reservation_status', id: cur.id, status: msg.to, by: msg.by, reason: msg.reason ?? null, orderId: msg.orderId ?? null, tableId })
    }
    default: {
      const never: never = msg
      return never
    }
  }
}

function tableDecision(op: TableOp, ctx: ReservationCtx): ReservationDecision {
  switch (op.kind) {
    case 'create':
      return yes({ kind: 'table_insert', fields: op.fields })
    case 'update': {
      const cur = ctx.tables.find((t) => t.id === op.tableId)
      if (!cur) return no(notFound('table'))
      const f = op.patch
      return yes({ kind: 'table_update', tableId: cur.id, fields: { name: f.name ?? cur.name, capacity: f.capacity ?? cur.capacity, kind: f.kind ?? cur.kind, active: f.active ?? cur.active === 1 } })
    }
    case 'delete': {
      if (!ctx.tables.some((t) => t.id === op.tableId)) return no(notFound('table'))
      // Upcoming guests would silently lose their table: the owner moves or cancels them first.
      if ((ctx.upcoming ?? 0) > 0) return no(new ApiError('table_has_bookings', `The table has ${ctx.upcoming} upcoming booking(s); move or cancel them first.`))
      return yes({ kind: 'table_delete', tableId: op.tableId })
    }
    default: {
      const never: never = op
      return never
    }
  }
}

/** `reservation.created` (api-v1 §6; catalog in domain/webhook-events.ts). */
export const reservationCreatedEvent = (r: ReservationRow) => ({
  event: 'reservation.created',
  data: { reservation_id: r.id, restaurant_id: r.store_id, party_size: r.party_size, reserved_for: r.starts_at, ends_at: r.ends_at, guest_name: r.name, table_id: r.table_id, customer_id: r.customer_id, source: r.source },
})

/** `reservation.cancelled`; `source` is who cancelled it. */
export const reservationCancelledEvent = (r: ReservationRow, by: Booker) => ({
  event: 'reservation.cancelled',
  data: { reservation_id: r.id, restaurant_id: r.store_id, reserved_for: r.starts_at, reason: r.cancel_reason, table_id: r.table_id, customer_id: r.customer_id, source: by },
})

/** What the reservation writes need: narrower than the store actor's dependencies (ARCHITECTURE 4). */
export interface ReservationDeps { committer: Committer; events: Pick<EventRouter, 'publish'>; log: Logger }

function readCtx(db: Db, storeId: number, msg: ReservationMsg, now: string): ReservationCtx {
  const current = msg.type === 'reservation_edit' || msg.type === 'reservation_move' ? reservationReads.byId(db, storeId, msg.reservationId) : undefined
  const span = intervalOf(msg, current)
  const upcoming = msg.type === 'table_write' && msg.op.kind === 'delete' ? tableReads.upcomingOn(db, msg.op.tableId, now) : undefined
  return { tables: tableReads.list(db, storeId), holds: span ? reservationReads.holds(db, storeId, span.from, span.to) : [], current, ...(upcoming !== undefined ? { upcoming } : {}) }
}

function apply(db: Db, storeId: number, ownerId: number, e: ReservationEffect, now: string, events: OutboxEvent[]): TableRow | ReservationRow | null {
  switch (e.kind) {
    case 'table_insert':
      return tableWrites.insert(db, storeId, e.fields, now)
    case 'table_update':
      return tableWrites.update(db, storeId, e.tableId, e.fields, now) ?? null
    case 'table_delete':
      tableWrites.remove(db, storeId, e.tableId)
      return null
    case 'reservation_insert': {
      const row = reservationWrites.insert(db, e.row)
      events.push(appendEvent(db, { ownerId, storeId, ...reservationCreatedEvent(row) }))
      return row
    }
    case 'reservation_edit':
      return reservationWrites.edit(db, e.id, e.edit, now)
    case 'reservation_status': {
      const row = reservationWrites.status(db, e.id, { status: e.status, reason: e.reason, orderId: e.orderId, tableId: e.tableId }, now)
      if (e.status === 'cancelled') events.push(appendEvent(db, { ownerId, storeId, ...reservationCancelledEvent(row, e.by) }))
      return row
    }
    default: {
      const never: never = e
      return never
    }
  }
}

/**
 * Shell: decide and write one reservation message in one transaction, durable before the reply
 * (ARCHITECTURE 5); events go to the router after the commit. Resolves to the reply, never rejects.
 */
export async function applyReservationMsg(deps: ReservationDeps, storeId: number, ownerId: number, msg: ReservationMsg, now: string): Promise<Result<unknown>> {
  const events: OutboxEvent[] = []
  try {
    const value = await deps.committer.write((db) => {
      events.length = 0
      const d = reduceReservation(msg, readCtx(db, storeId, msg, now))
      if (!d.ok) throw d.error
      return apply(db, storeId, ownerId, d.effect, now, events)
    })
    if (events.length) deps.events.publish(events)
    return ok(value)
  } catch (err) {
    if (isDuplicateTableName(err)) return fail(new ApiError('validation_failed', undefined, { name: ['A table with this name already exists.'] }))
    if (err instanceof ApiError) return fail(err)
    deps.log.error({ err, storeId, msg: msg.type }, 'reservation write failed')
    return fail(new ApiError('internal_error'))
  }
}
