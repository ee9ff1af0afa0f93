/**
 * Cash shifts (issue 17 item 3; docs/operations.md "Cash shifts"): a staff member with `orders`
 * (or the owner, `orders:write`) opens a register's shift with a counted float; cash payments and
 * refunds taken while it is open name it; closing records the counted cash against the expected
 * cash. Owner and staff routes bind to the same operations.
 *
 * One open shift per register: open and close are each ONE committer write that checks and writes
 * in the same transaction. The group committer runs writes one after another on the one
 * connection, so the check cannot race another open (the second of two concurrent opens sees the
 * first's row and answers 409); the partial unique index `shifts_one_open` stays the last guard.
 * We chose this over a store-actor message because a shift's rule reads only SQLite rows (no
 * in-memory state of the store actor) and payments stamp their shift inside their own transaction,
 * so serialising through the committer is exactly as strong and keeps the store actor unchanged.
 */
import * as v from 'valibot'
import { defineOp, type Access, type OpCtx } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Id, Money, PageQuery, PaginatedSchema, pageOf, paginate } from '../schemas/common.ts'
import { named } from '../schemas/named.ts'
import { ApiError, invalidField, notFound } from '../../errors.ts'
import { centsToDecimalString, fromCents, toCents } from '../../domain/money.ts'
import { shiftTotals } from '../../domain/shifts.ts'
import { nowIso } from '../../storage/db.ts'
import { appendEvent, type OutboxEvent } from '../../storage/outbox.ts'
import { DEFAULT_REGISTER, closeShift, figuresOf, insertShift, isOpenShiftConflict, openShiftId, shiftInStore, shiftPage, type ShiftWithFigures } from '../../storage/shifts.ts'

const tag = 'Shifts'
const read: Access = { owner: 'orders:read', staff: 'orders' }
const write: Access = { owner: 'orders:write', staff: 'orders' }
export const SHIFTS_PER_PAGE = 30

/** A register's name: the drawer a shift counts (default `main`). */
export const Register = v.pipe(v.string(), v.trim(), v.regex(/^[A-Za-z0-9 _.-]{1,40}$/, 'Use 1 to 40 letters, digits, spaces, . _ or -.'))

const num = { type: 'number' }
const nullableNum = { type: ['number', 'null'] }
const nullableInt = { type: ['integer', 'null'] }
export const ShiftSchema = named('Shift', {
  type: 'object',
  required: ['id', 'restaurant_id', 'register', 'status', 'opened_at', 'closed_at', 'totals'],
  properties: {
    id: { type: 'integer' }, restaurant_id: { type: 'integer' }, register: { type: 'string' },
    status: { type: 'string', enum: ['open', 'closed'] },
    opened_by_staff_id: nullableInt, closed_by_staff_id: nullableInt,
    opened_at: { type: 'string', format: 'date-time' }, closed_at: { type: ['string', 'null'], format: 'date-time' },
    note: { type: ['string', 'null'] },
    totals: {
      type: 'object',
      description: 'expected_cash = opening_float + cash_taken − cash_refunded; over_short = counted_cash − expected_cash (null while open). Cash and card taken include tips.',
      required: ['opening_float', 'cash_taken', 'card_taken', 'cash_refunded', 'expected_cash', 'counted_cash', 'over_short'],
      properties: { opening_float: num, cash_taken: num, card_taken: num, cash_refunded: num, expected_cash: num, counted_cash: nullableNum, over_short: nullableNum },
    },
  },
})

/** The API view of a shift with its totals (money as JSON numbers, api-v1 §2). */
export function shiftView(r: ShiftWithFigures) {
  const t = shiftTotals(figuresOf(r), r.counted_cash, r.closed_at ? r.expected_cash : null)
  return {
    id: r.id, restaurant_id: r.store_id, register: r.register, status: r.closed_at ? 'closed' : 'open',
    opened_by_staff_id: r.opened_by_staff_id, closed_by_staff_id: r.closed_by_staff_id,
    opened_at: r.opened_at, closed_at: r.closed_at, note: r.note,
    totals: {
      opening_float: fromCents(t.openingFloat), cash_taken: fromCents(t.cashTaken), card_taken: fromCents(t.cardTaken),
      cash_refunded: fromCents(t.cashRefunded), expected_cash: fromCents(t.expectedCash),
      counted_cash: t.countedCash === null ? null : fromCents(t.countedCash), over_short: t.overShort === null ? null : fromCents(t.overShort),
    },
  }
}

/** The staff member acting (null: the owner), recorded as who opened or closed a shift, took a payment or gave a refund. */
export const staffIdOf = (ctx: OpCtx): number | null => (ctx.principal?.kind === 'staff' ? ctx.principal.staffId : null)

const shiftId = { shift_id: Id }
const alreadyOpen = (register: string) => new ApiError('shift_already_open', `Register "${register}" already has an open shift; close it first.`)

export const listShifts = defineOp({
  id: 'shifts.list', tag, summary: 'A store\'s cash shifts, newest first (30 per page); query `status`, `register`',
  access: read, scope: ['store'],
  input: v.object({ ...PageQuery.entries, status: v.optional(v.picklist(['open', 'closed'])), register: v.optional(Register) }),
  output: PaginatedSchema(ShiftSchema),
  run: (ctx, input) => {
    const page = pageOf(input)
    const { data, total } = shiftPage(ctx.svc.db, storeOf(ctx).id, page, SHIFTS_PER_PAGE, { status: input.status, register: input.register })
    return paginate(data.map(shiftView), page, SHIFTS_PER_PAGE, total)
  },
})

export const getShift = defineOp({
  id: 'shifts.get', tag, summary: 'A cash shift with its totals (float, cash and card taken, cash refunded, expected, counted, over/short)',
  access: read, scope: ['store'], input: v.object(shiftId), output: ShiftSchema,
  run: (ctx, { shift_id }) => {
    const row = shiftInStore(ctx.svc.db, storeOf(ctx).id, shift_id)
    if (!row) throw notFound('shift')
    return shiftView(row)
  },
})

export const openShift = defineOp({
  id: 'shifts.open', tag, summary: 'Open a cash shift on a register with its counted float',
  description: 'Body `{opening_float, register?}` (register default `main`). One open shift per register: a second answers 409 `shift_already_open`. Emits `shift.opened`.',
  access: write, scope: ['store'],
  input: v.object({ opening_float: Money, register: v.optional(Register) }), output: ShiftSchema,
  run: async (ctx, input) => {
    const store = storeOf(ctx)
    const register = input.register ?? DEFAULT_REGISTER
    const staffId = staffIdOf(ctx)
    const now = nowIso()
    let event!: OutboxEvent
    let row: ShiftWithFigures
    try {
      row = await ctx.svc.committer.write((db) => {
        // Checked in the inserting transaction (see the header): the friendly 409 before the index's.
        if (openShiftId(db, store.id, register) !== null) throw alreadyOpen(register)
        const id = insertShift(db, { storeId: store.id, register, staffId, openingFloat: toCents(input.opening_float), now })
        const r = shiftInStore(db, store.id, id)!
        event = appendEvent(db, { ownerId: store.owner_id, storeId: store.id, ...shiftOpenedEvent(r) })
        return r
      })
    } catch (err) {
      if (isOpenShiftConflict(err)) throw alreadyOpen(register)
      throw err
    }
    ctx.svc.events.publish([event])
    return shiftView(row)
  },
})

export const closeShiftOp = defineOp({
  id: 'shifts.close', tag, summary: 'Close a cash shift with the counted cash',
  description: 'Body `{counted_cash, note?}`. Records the expected cash (float + cash taken − cash refunded) and the counted cash; over/short is their difference. A closed shift cannot be closed again (409 `shift_closed`). Emits `shift.closed`.',
  access: write, scope: ['store'],
  // counted_cash is required, but checked in `run` after the shift is found: another store's shift is
  // a 404 whatever the body says (api-v1 §1; the policy resolves only stores and orders). Found, checked
  // and closed in one transaction, so the shift is read once.
  input: v.object({ ...shiftId, counted_cash: v.optional(Money), note: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(500)))) }), output: ShiftSchema,
  run: async (ctx, input) => {
    const store = storeOf(ctx)
    const counted = input.counted_cash
    const staffId = staffIdOf(ctx)
    const now = nowIso()
    let event!: OutboxEvent
    // The sums are taken in the closing transaction: every payment committed before it counts, and
    // one committed after it finds the shift closed and names none.
    const row = await ctx.svc.committer.write((db) => {
      const open = shiftInStore(db, store.id, input.shift_id)
      if (!open) throw notFound('shift')
      if (counted === undefined) throw invalidField('counted_cash', 'Send the counted cash.')
      if (open.closed_at) throw new ApiError('shift_closed')
      const t = shiftTotals(figuresOf(open), toCents(counted))
      if (!closeShift(db, open.id, { staffId, expectedCash: t.expectedCash, countedCash: t.countedCash!, note: input.note ?? null, now })) throw new ApiError('shift_closed')
      const r = shiftInStore(db, store.id, open.id)!
      event = appendEvent(db, { ownerId: store.owner_id, storeId: store.id, ...shiftClosedEvent(r) })
      return r
    })
    ctx.svc.events.publish([event])
    return shiftView(row)
  },
})

/** `shift.opened` (api-v1 §6; payload in src/domain/webhook-events.ts). */
export const shiftOpenedEvent = (r: ShiftWithFigures) => ({
  event: 'shift.opened',
  data: { shift_id: r.id, restaurant_id: r.store_id, register: r.register, staff_id: r.opened_by_staff_id, opened_at: r.opened_at, opening_float: centsToDecimalString(r.opening_float) },
})

/** `shift.closed` (api-v1 §6): `closing_total` is the counted cash, `over_short` counted − expected. */
export const shiftClosedEvent = (r: ShiftWithFigures) => {
  const t = shiftTotals(figuresOf(r), r.counted_cash, r.expected_cash)
  return {
    event: 'shift.closed',
    data: {
      shift_id: r.id, restaurant_id: r.store_id, register: r.register, staff_id: r.closed_by_staff_id, opened_at: r.opened_at, closed_at: r.closed_at,
      opening_float: centsToDecimalString(r.opening_float), closing_total: centsToDecimalString(t.countedCash ?? 0),
      expected_cash: centsToDecimalString(t.expectedCash), counted_cash: centsToDecimalString(t.countedCash ?? 0), over_short: centsToDecimalString(t.overShort ?? 0),
    },
  }
}

export const shiftOps = [listShifts, getShift, openShift, closeShiftOp]
