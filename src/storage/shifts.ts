/**
 * Cash shifts (issue 17 item 3; docs/operations.md "Cash shifts"; migration 017). SQL for shifts
 * lives here only.
 */
import { stmt, type Db } from './db.ts'

/** The default register of a store that has one drawer. */
export const DEFAULT_REGISTER = 'main'

/**
 * The open shift of a store's register, if any. A cash payment or refund written in the same
 * transaction names it, so the shift's expected cash is a plain sum over its rows.
 */
export function openShiftId(db: Db, storeId: number, register: string = DEFAULT_REGISTER): number | null {
  const row = stmt<[number, string], { id: number }>(db, 'SELECT id FROM shifts WHERE store_id = ? AND register = ? AND closed_at IS NULL').get(storeId, register)
  return row?.id ?? null
}
