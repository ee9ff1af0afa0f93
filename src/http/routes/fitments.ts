/** Fitments of car-parts stores (issue 18 item 3; docs/verticals.md "Fitments"): bindings of src/ops/menu/fitments.ts. */
import { bind } from '../bind.ts'
import * as fit from '../../ops/menu/fitments.ts'

const store = { store: 'id' } as const
const fitment = { fitmentId: 'fitment_id' } as const
const item = { itemId: 'item_id' } as const

export const fitmentRoutes = [
  bind(fit.listFitments, { method: 'GET', path: '/restaurants/{id}/fitments', auth: 'owner', ids: store }),
  bind(fit.createFitment, { method: 'POST', path: '/restaurants/{id}/fitments', auth: 'owner', ids: store }),
  bind(fit.getFitment, { method: 'GET', path: '/restaurants/{id}/fitments/{fitmentId}', auth: 'owner', ids: store, params: fitment }),
  bind(fit.updateFitmentOp, { method: 'PATCH', path: '/restaurants/{id}/fitments/{fitmentId}', auth: 'owner', ids: store, params: fitment }),
  bind(fit.deleteFitmentOp, { method: 'DELETE', path: '/restaurants/{id}/fitments/{fitmentId}', auth: 'owner', ids: store, params: fitment }),
  bind(fit.getItemFitments, { method: 'GET', path: '/restaurants/{id}/menu/items/{itemId}/fitments', auth: 'owner', ids: store, params: item }),
  bind(fit.setItemFitmentsOp, { method: 'PUT', path: '/restaurants/{id}/menu/items/{itemId}/fitments', auth: 'owner', ids: store, params: item }),
]
