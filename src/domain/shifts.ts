/**
 * Cash shift arithmetic (issue 17 item 3; docs/operations.md "Cash shifts"): pure, integer cents.
 * The drawer should hold its opening float plus the cash it took (tips included: a cash tip goes
 * into the same drawer) minus the cash it paid back; over/short is what was counted minus that.
 */

/** What a shift's rows add up to, in cents (storage/shifts.ts sums them). */
export interface ShiftFigures {
  openingFloat: number
  /** Succeeded cash payments of the shift: amount + tip. */
  cashTaken: number
  /** Succeeded card payments of the shift: amount + tip (not in the drawer; reported for the close-out). */
  cardTaken: number
  /** Completed cash refunds of the shift. */
  cashRefunded: number
}

/** A shift's totals as the API shows them, in cents; `counted` and `overShort` are null while it is open. */
export interface ShiftTotals extends ShiftFigures {
  expectedCash: number
  countedCash: number | null
  overShort: number | null
}

/** Expected cash in the drawer: float + cash taken − cash refunded. */
export const expectedCash = (f: ShiftFigures): number => f.openingFloat + f.cashTaken - f.cashRefunded

/**
 * The totals of a shift. A closed shift reports the expected cash recorded when it was closed
 * (`recordedExpected`), so its close-out never changes afterwards; an open one reports the live sum.
 */
export function shiftTotals(f: ShiftFigures, counted: number | null, recordedExpected: number | null = null): ShiftTotals {
  const expected = recordedExpected ?? expectedCash(f)
  return { ...f, expectedCash: expected, countedCash: counted, overShort: counted === null ? null : counted - expected }
}
