/** Tenancy at lookup for owner routes (ARCHITECTURE 7): someone else's store is a 404. */
import { notFound } from '../../errors.ts'
import type { OwnerPrincipal } from '../../auth/principals.ts'
import type { Services } from '../../services.ts'
import type { StoreRow } from '../../storage/stores.ts'

export function ownedStore(svc: Services, principal: OwnerPrincipal, id: string | undefined): StoreRow {
  const store = svc.stores.ownedBy(Number(id), principal.ownerId)
  if (!store) throw notFound('restaurant')
  return store
}
