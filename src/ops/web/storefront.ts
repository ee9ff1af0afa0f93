/**
 * The storefront API (api-v1 §4.3; docs/storefront.md): a store's own website or kiosk calls it
 * with the store's storefront token (scopes `menu:read`, `order:write`). The token's store is the
 * only store it reaches: no operation takes a store id.
 */
import { keyCaller } from '../../domain/idempotency.ts'
import { VehicleQuerySchema, vehicleMenuView } from '../menu/fitments.ts'
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { storeOf, storefrontOf } from '../scope.ts'
import { Nullable, OrderInputSchema, OrderLineInput } from '../schemas/common.ts'
import { MenuSchema, OrderSchema, VerticalSchema } from '../schemas/named.ts'
import { placeOrder } from '../orders/order-create.ts'
import { Outcome } from '../op.ts'
import { storeSummary, type StoreRow } from '../../storage/stores.ts'
import { verticalOf } from '../../domain/verticals.ts'
import { basePrepMinutes, integrationStatus } from '../../domain/integration.ts'
import { integrationRow } from '../../storage/staff.ts'
import { StoreSettingsSchema, settingsView } from '../stores/store-settings.ts'

const tag = 'Storefront'
/** api-v1 §2.4: storefront orders are takeaway or on-table only. */
export const STOREFRONT_ORDER_TYPES = ['takeaway', 'on-table'] as const

/** The storefront order types this store accepts (api-v1 §2.4: takeaway or on-table), in that order. */
export function storefrontTypes(store: StoreRow): string[] {
  const modes = verticalOf(store.store_type).fulfillment_modes as readonly string[]
  return STOREFRONT_ORDER_TYPES.filter((t) => modes.includes(t))
}
/** api-v1 §8: at most 40 items per storefront order and 30 per line; breaches are validation failures (§7.3). */
export const STOREFRONT_LIMITS = { items: 40, perLine: 30, couponCode: 40 } as const

const StorefrontLine = v.object({
  ...OrderLineInput.entries,
  quantity: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(STOREFRONT_LIMITS.perLine, `At most ${STOREFRONT_LIMITS.perLine} per line on a storefront order.`)),
})
export const StorefrontOrderSchema = v.object({
  ...OrderInputSchema.entries,
  type: v.picklist(STOREFRONT_ORDER_TYPES, 'Storefront orders are takeaway or on-table.'),
  coupon_code: Nullable(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(STOREFRONT_LIMITS.couponCode))),
  items: v.pipe(v.array(StorefrontLine), v.minLength(1), v.maxLength(STOREFRONT_LIMITS.items, `At most ${STOREFRONT_LIMITS.items} items on a storefront order.`)),
})

export const getStorefrontMenu = defineOp({
  id: 'storefront.menu.get', tag, access: { storefront: 'menu:read' }, scope: ['store'], output: MenuSchema,
  summary: 'The token\'s store menu: items with variations, extras, extra groups and gallery (sold-out items flagged)',
  // The menu with what a storefront renders: extras grouped, and a gallery per item. Car parts
  // stores: `?make=&model=&year=&engine=` keeps the items fitting that vehicle (docs/verticals.md).
  input: VehicleQuerySchema,
  run: (ctx, input) => {
    return vehicleMenuView(ctx, input, true).map((c) => ({
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
  },
})

export const getStorefrontStore = defineOp({
  id: 'storefront.store.get', tag, access: { storefront: 'menu:read' }, scope: ['store'], summary: 'Basic store info for the storefront',
  output: { type: 'object', required: ['id', 'title', 'currency', 'order_types'], properties: {
    id: { type: 'integer' }, title: { type: 'string' }, slug: { type: 'string' }, url: { type: 'string' }, currency: { type: 'string' }, city: { type: ['string', 'null'] },
    store_type: { type: 'string' }, vertical: VerticalSchema, order_types: { type: 'array', items: { type: 'string' } }, prep_minutes: { type: 'integer' },
    business_hours: StoreSettingsSchema.properties.business_hours, timezone: { type: 'string' }, holidays: StoreSettingsSchema.properties.holidays,
    accepting_orders: { type: 'boolean', description: 'Would an order be accepted now (business hours, holidays and the accepting-orders switch; docs/stores.md)?' },
    next_opening: StoreSettingsSchema.properties.next_opening,
  } },
  run: (ctx) => {
    const store = storeOf(ctx)
    const hours = settingsView(store)
    const status = integrationStatus(integrationRow(ctx.svc.db, store.id), basePrepMinutes(store.settings), Date.now())
    return {
      ...storeSummary(store, ctx.svc.config.siteUrl),
      currency: store.currency,
      city: store.city,
      order_types: storefrontTypes(store),
      prep_minutes: status.prep_minutes,
      business_hours: hours.business_hours,
      timezone: hours.timezone,
      holidays: hours.holidays,
      accepting_orders: hours.open_now,
      next_opening: hours.next_opening,
    }
  },
})

export const createStorefrontOrder = defineOp({
  id: 'storefront.orders.create', tag, access: { storefront: 'order:write', visitor: true }, scope: ['store'],
  summary: 'Place an order for a diner (takeaway or on-table; created unpaid)',
  description: `Priced server-side; \`coupon_code\` is applied by the server. At most ${STOREFRONT_LIMITS.items} items and ${STOREFRONT_LIMITS.perLine} per line (422). Returns the order with \`track_token\` and \`continue_url\` (the page the diner continues on: live status, pay at pickup or at the table). \`Idempotency-Key\` or \`client_uuid\` make retries safe.`,
  input: StorefrontOrderSchema,
  output: { ...OrderSchema, required: [...OrderSchema.required, 'track_token', 'continue_url'], properties: { ...OrderSchema.properties, continue_url: { type: 'string', format: 'uri' } } },
  run: async (ctx, body) => {
    // The store website's guests (src/auth/visitor.ts) keep the idempotency scope the website's orders always had.
    const caller = ctx.principal?.kind === 'visitor' ? keyCaller.websiteGuest : keyCaller.storefront(storefrontOf(ctx).tokenId)
    const { coupon_code, ...rest } = body
    // `coupon_code` stays in the input so it is part of the idempotency hash.
    const input = { ...rest, coupon_code: coupon_code ?? null, source: rest.source ?? 'storefront' }
    const placed = await placeOrder(ctx.svc, {
      storeId: storeOf(ctx).id, caller, input, couponCode: coupon_code ?? null, idempotencyKey: ctx.idempotencyKey,
    })
    return new Outcome({ ...placed.value, continue_url: placed.value.track_url }, placed.meta)
  },
})

export const storefrontOps = [getStorefrontMenu, getStorefrontStore, createStorefrontOrder]
