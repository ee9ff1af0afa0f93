/** Helpers shared by the owner delivery routes and the driver app routes. */
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { driverFeeCents } from '../../domain/delivery.ts'
import type { StoreRow } from '../../storage/stores.ts'
import type { Services } from '../../services.ts'

/** What a delivery of this store pays the driver (cents): the store's `driver_fee` setting or the default. */
export const feeOf = (store: StoreRow): number => driverFeeCents(JSON.parse(store.settings) as Record<string, unknown>)

/** Where uploaded files live: next to the database (`:memory:` databases use the temp directory). */
export function dataDir(svc: Services): string {
  return svc.config.dbPath === ':memory:' ? join(tmpdir(), 'dispatch-data') : dirname(resolve(svc.config.dbPath))
}
export const photoPath = (svc: Services, rel: string): string => join(dataDir(svc), rel)
