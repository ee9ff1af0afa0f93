/**
 * The storefront API (api-v1 §4.3; docs/storefront.md): a store's own website or kiosk calls it
 * with the store's `X-Storefront-Token` (scopes `menu:read`, `order:write`), from any origin
 * (CORS is answered by the front door). The token's store is the only store it reaches: no route
 * takes a store id.
 */
import * as v from 'valibot'
import { route, Reply } from '../route.ts'
import { Nullable, OrderInputSchema, OrderLineInput } from '../schemas.ts'
import { MenuSchema, OrderSchema, VerticalSchema } from '../docs-schemas.ts'
import { notFound } from '../../errors.ts'
import { menuView, storeSummary } from '../../storage/stores.ts'
import { verticalOf } from '../../domain/verticals.ts'
import type { Services } from '../../services.ts'
import { createOrder } from './orders.ts'
import { couponHooks } from './coupons.ts'
import { integrationStatus } from './staff-integration.ts'

const tag = 'Storefront'
/** api-v1 §2.4: storefront orders are takeaway or on-table only. */
export const STOREFRONT_ORDER_TYPES = ['takeaway', 'on-table'] as const
/** api-v1 §8: at most 40 items per storefront order and 30 per line; breaches are validation failures (§7.3). */
export const STOREFRONT_LIMITS = { items: 40, perLine: 30 } as const

const StorefrontLine = v.object({
  ...OrderLineInput.entries,
  quantity: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(STOREFRONT_LIMITS.perLine, `At most ${STOREFRONT_LIMITS.perLine} per line on a storefront order.`)),
})
export const StorefrontOrderSchema = v.object({
  ...OrderInputSchema.entries,
  type: v.picklist(STOREFRONT_ORDER_TYPES, 'Storefront orders are takeaway or on-table.'),
  coupon_code: Nullable(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(40))),
  items: v.pipe(v.array(StorefrontLine), v.minLength(1), v.maxLength(STOREFRONT_LIMITS.items, `At most ${STOREFRONT_LIMITS.items} items on a storefront order.`)),
})

const storeOf = (svc: Services, id: number) => {
  const s = svc.stores.byId(id)
  if (!s) throw notFound('restaurant')
  return s
}

/** The menu with what a storefront renders: variations, extras, extras grouped, and a gallery per item. */
function storefrontMenu(svc: Services, storeId: number) {
  const store = storeOf(svc, storeId)
  return menuView(svc.stores.menu(storeId), verticalOf(store.store_type), true).map((c) => ({
    ...c,
    items: c.items.map((i) => {
      const groups = new Map<string, typeof i.extras>()
      for (const e of i.extras) {
        const name = e.group ?? 'Extras'
        groups.set(name, [...(groups.get(name) ?? []), e])
      }
      return { ...i, groups: [...groups].map(([name, extras]) => ({ name, extras })), gallery: i.images }
    }),
  }))
}

export const storefrontRoutes = [
  route({
    method: 'GET', path: '/storefront/menu', tag, auth: 'storefront', permission: 'menu:read', response: MenuSchema,
    summary: 'The token\'s store menu: items with variations, extras, extra groups and gallery (sold-out items flagged)',
    handler: ({ svc, principal }) => storefrontMenu(svc, principal.storeId),
  }),
  route({
    method: 'GET', path: '/storefront/restaurant', tag, auth: 'storefront', permission: 'menu:read', summary: 'Basic store info for the storefront',
    response: { type: 'object', required: ['id', 'title', 'currency', 'order_types'], properties: {
      id: { type: 'integer' }, title: { type: 'string' }, slug: { type: 'string' }, url: { type: 'string' }, currency: { type: 'string' }, city: { type: ['string', 'null'] },
      store_type: { type: 'string' }, vertical: VerticalSchema, order_types: { type: 'array', items: { type: 'string' } }, prep_minutes: { type: 'integer' },
      business_hours: {}, accepting_orders: { type: 'boolean' },
    } },
    handler: ({ svc, principal }) => {
      const store = storeOf(svc, principal.storeId)
      const settings = JSON.parse(store.settings) as { business_hours?: unknown }
      const status = integrationStatus(svc, store.id)
      const modes = verticalOf(store.store_type).fulfillment_modes as readonly string[]
      return {
        ...storeSummary(store, svc.config.siteUrl),
        currency: store.currency,
        city: store.city,
        order_types: STOREFRONT_ORDER_TYPES.filter((t) => modes.includes(t)),
        prep_minutes: status.prep_minutes,
        business_hours: settings.business_hours ?? null,
        accepting_orders: true,
      }
    },
  }),
  route({
    method: 'POST', path: '/storefront/orders', tag, auth: 'storefront', permission: 'order:write', body: StorefrontOrderSchema, status: 201,
    summary: 'Place an order for a diner (takeaway or on-table; created unpaid)',
    description: `Priced server-side; \`coupon_code\` is applied by the server. At most ${STOREFRONT_LIMITS.items} items and ${STOREFRONT_LIMITS.perLine} per line (422). Returns the order with \`track_token\` and \`continue_url\` (the page the diner continues on: live status, pay at pickup or at the table). \`Idempotency-Key\` or \`client_uuid\` make retries safe.`,
    headers: [{ name: 'Idempotency-Key', description: 'Makes the request safe to retry.' }],
    response: { ...OrderSchema, required: [...OrderSchema.required, 'track_token', 'continue_url'], properties: { ...OrderSchema.properties, continue_url: { type: 'string', format: 'uri' } } },
    handler: async ({ svc, principal, body, headers }) => {
      const { coupon_code, ...rest } = body
      const input = { ...rest, coupon_code: coupon_code ?? null, source: rest.source ?? 'storefront' }
      const created = await createOrder(svc, principal.storeId, `storefront:${principal.tokenId}`, input, headers['idempotency-key'], null,
        coupon_code ? couponHooks(svc, principal.storeId, coupon_code) : undefined)
      const body2 = { ...created.order, continue_url: created.order.track_url }
      return new Reply(created.replayed ? 200 : 201, body2, created.replayed ? { 'Idempotent-Replayed': 'true' } : {})
    },
  }),
]
