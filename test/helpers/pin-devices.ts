/**
 * PIN sign-in needs an enrolled device (docs/staff.md "PIN devices"): tests that sign staff in by
 * PIN enroll one here, straight into SQLite like the other fixtures, and send its key as `device`.
 */
import type { Db } from '../../src/storage/db.ts'
import { enrollPinDevice } from '../../src/auth/pin-devices.ts'

export interface DeviceFixture { id: number; key: string }

/** A device of `storeId` enrolled by the owner; `key` goes in `{pin, device: key}`. */
export function enrollDevice(db: Db, storeId: number, name = 'test device'): DeviceFixture {
  return enrollPinDevice(db, storeId, name, null)
}
