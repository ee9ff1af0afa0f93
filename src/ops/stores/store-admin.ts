/**
 * Editing and removing a store (issue 14 item 2; docs/stores.md "Editing a store", "Removing a
 * store"): `PUT /restaurants/{id}`, `DELETE /restaurants/{id}`, so the API does what the dashboard
 * does. Both go through the store actor (`settings_write` with `fields`): it holds the title,
 * vertical, currency and hours it prices and checks orders with, and after a removal it takes no
 * new order. The rules that need the store's orders are checked in the writing transaction
 * (src/storage/stores.ts `writeStoreFields`).
 */
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Nullable } from '../schemas/common.ts'
import { getStore } from './stores.ts'
import { StoreDetailSchema } from '../schemas/named.ts'
import { STORE_TYPES } from '../../domain/verticals.ts'
import { isTimeZone } from '../../domain/business-hours.ts'
import type { Services } from '../../services.ts'
import type { StoreFields, StoreRow } from '../../storage/stores.ts'

const tag = 'Restaurants'

const StoreUpdate = v.object({
  title: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1, 'A store needs a title.'), v.maxLength(120))),
  store_type: v.optional(v.picklist(STORE_TYPES, `Use one of: ${STORE_TYPES.join(', ')}.`)),
  currency: v.optional(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'Use an ISO 4217 code such as USD.'))),
  city: Nullable(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100))),
  address: Nullable(v.pipe(v.string(), v.trim(), v.maxLength(300))),
  timezone: v.optional(v.pipe(v.string(), v.check((tz: string) => isTimeZone(tz), 'Use an IANA time zone such as Europe/Berlin or America/New_York.'))),
})

/** Through the store actor; the reply is the row as written, once durable (or the refusal, 409). */
const writeStore = (svc: Services, storeId: number, patch: Record<string, unknown>, city: string | null | undefined, fields: StoreFields): Promise<StoreRow> =>
  svc.actors.stores.ask<StoreRow>(storeId, (replyTo) => ({ type: 'settings_write', patch, city, fields, replyTo }))

export const updateStore = defineOp({
  id: 'stores.update', tag, summary: 'Edit a store: title, store type, currency, city, address, time zone',
  description: 'Keys left out stay; `city` or `address` null clears it. The currency cannot change once the store has orders (409 `conflict`). Changing `store_type` changes the vertical (docs/verticals.md); the menu is kept. Hours and the other settings: `PUT /restaurants/{id}/settings`.',
  access: { owner: 'restaurants:write' }, scope: ['store'], input: StoreUpdate, output: StoreDetailSchema,
  run: async (ctx, input) => {
    const { title, store_type, currency, city, address, timezone } = input
    const row = await writeStore(ctx.svc, storeOf(ctx).id, { address, timezone }, city, { title, store_type, currency })
    return getStore.run({ ...ctx, scope: { ...ctx.scope, store: row } }, undefined)
  },
})

export const deleteStore = defineOp({
  id: 'stores.delete', tag, summary: 'Remove a store (refused while it has orders in progress)',
  description: 'Refused with 409 `conflict` (`details.orders_in_progress`) while any order is not delivered, completed or cancelled. The store then answers 404 on every route, leaves the store list, the plan\'s `stores` quota and the public catalog; its orders and their history are kept, and its slug is never given to another store (docs/stores.md "Removing a store").',
  access: { owner: 'restaurants:write' }, scope: ['store'], empty: true,
  run: async (ctx) => {
    await writeStore(ctx.svc, storeOf(ctx).id, { public_listing: false }, undefined, { remove: true })
  },
})

export const storeAdminOps = [updateStore, deleteStore]
