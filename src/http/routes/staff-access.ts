/** Tenancy for staff routes (ARCHITECTURE 7): a staff token reaches only its own store; anything else is 404. */
import { notFound } from '../../errors.ts'
import type { StaffPrincipal } from '../../auth/principals.ts'
import type { Services } from '../../services.ts'
import type { OrderRow } from '../../storage/orders.ts'
import type { StoreRow } from '../../storage/stores.ts'

export function staffStore(svc: Services, p: StaffPrincipal): StoreRow {
  const store = svc.stores.byId(p.storeId)
  if (!store) throw notFound('restaurant')
  return store
}

export function staffOrder(svc: Services, p: StaffPrincipal, orderId: string | undefined): OrderRow {
  const row = svc.orders.rowInStore(Number(orderId), p.storeId)
  if (!row) throw notFound('order')
  return row
}
