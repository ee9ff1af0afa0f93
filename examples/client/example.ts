/**
 * A typed client of the Dispatch API from the generated OpenAPI types (issue 20 item 7): a tiny
 * fetch wrapper, then "create an order and read it back". `npm run check:client` generates
 * `api.d.ts` from the live route table with openapi-typescript and type-checks this file, so a
 * change to the document that breaks clients fails CI. Run it against a server:
 *   DISPATCH_URL=http://localhost:4464/api/v1 DISPATCH_TOKEN=... STORE_ID=1 ITEM_ID=1 node --import tsx examples/client/example.ts
 */
import type { components, paths } from './api.d.ts'

type Order = components['schemas']['Order']
type OrderInput = components['schemas']['OrderInput']
type ApiError = components['schemas']['Error']
type CreateOrder = paths['/restaurants/{id}/orders']['post']
type ListOrdersQuery = NonNullable<paths['/restaurants/{id}/orders']['get']['parameters']['query']>

/** The JSON body of a path's operation answer for a status, as the document declares it. */
type Json<Op, Status extends number> = Op extends { responses: { [S in Status]: { content: { 'application/json': infer B } } } } ? B : never

// Compile-time checks that the generated types carry what a client relies on (each line fails
// type-checking if the document loses it): the create answer is an Order (with its `track_token`),
// `page` is an integer, `status` a closed list.
type Holds<T extends true> = T
type NotNever<T> = [T] extends [never] ? false : true
export type Checks = [
  Holds<NotNever<Json<CreateOrder, 200>>>,
  Holds<Json<CreateOrder, 200> extends Order ? true : false>,
  Holds<ListOrdersQuery['page'] extends number | undefined ? true : false>,
  Holds<'preparing' extends NonNullable<ListOrdersQuery['status']> ? true : false>,
  Holds<string extends NonNullable<ListOrdersQuery['status']> ? false : true>,
  Holds<Order['track_token'] extends string | undefined ? true : false>,
]

export class DispatchClient {
  constructor(private readonly base: string, private readonly token: string) {}

  private async call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const res = await fetch(this.base + path, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const json: unknown = await res.json()
    if (!res.ok) {
      const err = json as ApiError
      throw new Error(`${res.status} ${err.code} (${err.reason}): ${err.message}`)
    }
    return json as T
  }

  /** POST /restaurants/{id}/orders, retried safely with the same Idempotency-Key. */
  createOrder(storeId: number, input: OrderInput, idempotencyKey: string): Promise<Json<CreateOrder, 200>> {
    return this.call('POST', `/restaurants/${storeId}/orders`, input, { 'Idempotency-Key': idempotencyKey })
  }

  getOrder(storeId: number, orderId: Order['id']): Promise<Order> {
    return this.call('GET', `/restaurants/${storeId}/orders/${orderId}`)
  }

  /** `page` is an integer and `status` one of the kitchen statuses: the types say so. */
  listOrders(storeId: number, query: ListOrdersQuery = {}): Promise<components['schemas']['OrderPage']> {
    const qs = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]))
    return this.call('GET', `/restaurants/${storeId}/orders${qs.size ? `?${qs}` : ''}`)
  }
}

async function main(): Promise<void> {
  const { DISPATCH_URL, DISPATCH_TOKEN, STORE_ID, ITEM_ID } = process.env
  if (!DISPATCH_URL || !DISPATCH_TOKEN || !STORE_ID || !ITEM_ID) return
  const client = new DispatchClient(DISPATCH_URL, DISPATCH_TOKEN)
  const created = await client.createOrder(Number(STORE_ID), { type: 'takeaway', items: [{ item_id: Number(ITEM_ID), quantity: 1 }] }, crypto.randomUUID())
  const id: Order['id'] = created.id
  const again = await client.getOrder(Number(STORE_ID), id)
  const page = await client.listOrders(Number(STORE_ID), { page: 1, status: 'new' })
  console.log(`order ${again.id}: ${again.status}, total ${again.total}; ${page.total} orders in all; track at ${created.track_url ?? '-'}`)
}

await main()
