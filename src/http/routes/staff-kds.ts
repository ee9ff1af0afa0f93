/**
 * Kitchen display over HTTP (api-v1 §3, §4.7; docs/kds.md): bindings of the kitchen operations
 * (src/ops/orders/kds.ts), and the kitchen screen page at `{site_url}/kds`, which stays a plain route: it
 * is an HTML page, not an operation. The socket is src/ws/kds.ts.
 */
import { randomBytes } from 'node:crypto'
import { bind } from '../bind.ts'
import { route, Reply } from '../route.ts'
import * as kds from '../../ops/orders/kds.ts'
import { kdsPage, kdsPageHeaders } from '../pages/kds.ts'

const line = { itemId: 'item_id' }

export const staffKdsRoutes = [
  bind(kds.listTickets, { method: 'GET', path: '/staff/kds', auth: 'staff' }),
  // Bump and recall take no body: it is drained unread, as before.
  bind(kds.bumpItem, { method: 'PUT', path: '/staff/kds/items/{itemId}/bump', auth: 'staff', params: line, from: 'query' }),
  bind(kds.recallItem, { method: 'PUT', path: '/staff/kds/items/{itemId}/recall', auth: 'staff', params: line, from: 'query' }),
  route({
    method: 'GET', path: '/kds', site: true, tag: 'Kitchen display', auth: 'none', produces: 'text/html; charset=utf-8',
    summary: 'Kitchen screen: PIN sign-in, live ticket cards, tap an item to bump it',
    description: 'Self-contained HTML (no external assets). Signs in with `POST /restaurants/{id}/staff/pin` and follows `{base_url}/ws/kds`; a tap on an item sends a `bump` frame.',
    handler: ({ headers }) => {
      const nonce = randomBytes(16).toString('base64')
      return new Reply(200, kdsPage(nonce), kdsPageHeaders(nonce, headers.host), 'text/html; charset=utf-8')
    },
  }),
]
