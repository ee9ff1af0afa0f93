/**
 * The customer app's orders (api-v1 §4.5; docs/customers.md): own history and placing an order.
 * Identity comes only from the token: no input names a customer, and a body's `customer_id` is
 * never read.
 */
import { keyCaller } from '../../domain/idempotency.ts'
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { customerOf } from '../scope.ts'
import { Id, Nullable, OrderInputSchema, PageQuery, PaginatedSchema, pageOf, paginate } from '../schemas/common.ts'
import { OrderSchema } from '../schemas/named.ts'
import { placeOrder } from './order-create.ts'
import { StorefrontOrderSchema } from '../web/storefront.ts'
import { ApiError } from '../../errors.ts'
import { customerAddresses, customers } from '../../storage/customers.ts'

const tag = 'Customer app'
const ORDERS_PER_PAGE = 30

/** Customer orders: the §2.4 input plus `address_id` (a saved address fills `address`). */
/**
 * `coupon_code`: an addition to api-v1 §2.4, which names it for the storefront only — a customer
 * ordering delivery expects the store's code to work too (issue 34 item 8); redeemed by the store
 * actor exactly as a storefront order's.
 */
const CustomerOrderBody = v.object({ ...OrderInputSchema.entries, address_id: Nullable(Id), coupon_code: StorefrontOrderSchema.entries.coupon_code })

export const listCustomerOrders = defineOp({
  id: 'customer.orders.list', tag, summary: 'Own order history, newest first (30 per page)', access: { customer: true }, scope: [],
  input: PageQuery, output: PaginatedSchema(OrderSchema),
  run: (ctx, input) => {
    const me = customerOf(ctx)
    const page = pageOf(input)
    const { data, total } = ctx.svc.orders.customerPage(me.storeId, me.customerId, page, ORDERS_PER_PAGE)
    return paginate(data, page, ORDERS_PER_PAGE, total)
  },
})

export const createCustomerOrder = defineOp({
  id: 'customer.orders.create', tag, summary: 'Place an order as the signed-in customer (item structure of api-v1 §2.4)',
  description: 'The customer is the token\'s; name and phone default to the profile; `address_id` fills `address` (and `lat`/`lng` and `delivery_notes`, unless given) from a saved address. `coupon_code` (an addition to api-v1 §2.4, which names it for the storefront) is redeemed as on the storefront, for every mode including delivery. Returns the order with `track_token`. `Idempotency-Key` or `client_uuid` make retries safe.',
  access: { customer: true }, scope: [],
  input: CustomerOrderBody, output: OrderSchema,
  run: (ctx, body) => {
    const me = customerOf(ctx)
    const profile = customers.byId(ctx.svc.db, me.customerId)
    const { address_id, coupon_code, ...input } = body
    let address = input.address ?? null
    let position = { lat: input.lat ?? null, lng: input.lng ?? null }
    // Blank notes are no notes: the saved address's fill in (a website form posts an empty field).
    let deliveryNotes = input.delivery_notes?.trim() ? input.delivery_notes : null
    if (address_id != null) {
      const saved = customerAddresses.own(ctx.svc.db, me.customerId, address_id)
      if (!saved) throw new ApiError('validation_failed', undefined, { address_id: ['No such saved address.'] })
      address = saved.address
      // A saved address brings its own position (delivery zones, docs/dispatch.md) unless the body names one.
      if (position.lat === null && position.lng === null && saved.lat != null && saved.lng != null) position = { lat: saved.lat, lng: saved.lng }
      // And its notes for the driver (issue 34 item 4), unless the body gives its own.
      deliveryNotes ??= saved.notes
    }
    const order = {
      ...input, address, ...position, delivery_notes: deliveryNotes,
      customer_name: input.customer_name ?? profile?.name ?? null, phone: input.phone ?? profile?.phone ?? null, source: input.source ?? 'customer_app',
    }
    // `coupon_code` stays in the input so it is part of the idempotency hash (as on the storefront).
    return placeOrder(ctx.svc, { storeId: me.storeId, caller: keyCaller.customer(me.customerId), input: { ...order, coupon_code: coupon_code ?? null }, customerId: me.customerId, couponCode: coupon_code ?? null, idempotencyKey: ctx.idempotencyKey })
  },
})

export const customerOrderOps = [listCustomerOrders, createCustomerOrder]
