/**
 * Menu write payloads (api-v1 §4.2; the staff routes of §4.7 take the same) and their mapping to
 * store-actor menu operations. Prices arrive as JSON numbers and become integer cents here.
 */
import * as v from 'valibot'
import { toCents } from '../../domain/money.ts'
import type { CategoryData, ItemData, MenuChange, MenuOp, VariantData } from '../../storage/menu.ts'
import { Id, Money, Nullable, ShortText } from '../schemas/common.ts'
import type { Services } from '../../services.ts'
import { notFound } from '../../errors.ts'
import { itemView, variantView } from '../../storage/stores.ts'
import { verticalOf } from '../../domain/verticals.ts'
import type { StoreRow } from '../../storage/stores.ts'

/** A stock count stays an exact integer in SQLite (a huge number would be stored as a float and never run out). */
const MAX_STOCK = 1_000_000_000

const Position = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(100_000))
const Station = Nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(40)))
const Name = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(160))

export const CategoryCreate = v.object({ name: Name, position: v.optional(Position), station: Station })
export const CategoryUpdate = v.partial(CategoryCreate)

const Extra = v.object({ name: Name, price: Money, group: Nullable(ShortText(80)) })
const VariantBody = {
  name: Name,
  price: Nullable(Money),
  sku: Nullable(ShortText(80)),
  stock: Nullable(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(MAX_STOCK))),
  position: v.optional(Position),
}
export const VariantCreate = v.object(VariantBody)
export const VariantUpdate = v.partial(VariantCreate)

const itemFields = {
  /** Optional on create: without it the item goes to the store's first category (src/storage/menu.ts). */
  category_id: v.optional(Id),
  name: Name,
  price: Money,
  description: v.optional(ShortText(2000)),
  position: v.optional(Position),
  is_sold_out: v.optional(v.boolean()),
  is_popular: v.optional(v.boolean()),
  is_vegan: v.optional(v.boolean()),
  is_halal: v.optional(v.boolean()),
  calories: Nullable(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(100_000))),
  brand: Nullable(ShortText(120)),
  /** One of the store's brands (GET /restaurants/{id}/brands); `brand` alone names one by name, found or created. */
  brand_id: Nullable(Id),
  stock: Nullable(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(MAX_STOCK))),
  sku: Nullable(ShortText(80)),
  /** Minimum buyer age (age_gate verticals only; issue 18 item 4): orders need `age_confirmed: true`. */
  min_age: Nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(99))),
  images: v.optional(v.pipe(v.array(v.pipe(v.string(), v.url(), v.maxLength(2000))), v.maxLength(20))),
  extras: v.optional(v.pipe(v.array(Extra), v.maxLength(100))),
}
export const ItemCreate = v.object({ ...itemFields, variations: v.optional(v.pipe(v.array(VariantCreate), v.maxLength(100))) })
export const ItemUpdate = v.partial(v.object(itemFields))
export const SoldOutBody = v.optional(v.object({ is_sold_out: v.optional(v.boolean()) }))

type Out<S extends v.GenericSchema> = v.InferOutput<S>

const centsOrNull = (n: number | null | undefined) => (n == null ? n : toCents(n))

function itemData(b: Partial<Out<typeof ItemCreate>>): ItemData {
  const { price, extras, variations, ...rest } = b
  return {
    ...rest,
    price: price === undefined ? undefined : toCents(price),
    extras: extras?.map((e) => ({ name: e.name, price: toCents(e.price), group: e.group ?? null })),
    variations: variations?.map(variantData) as ItemData['variations'],
  } as ItemData
}
function variantData(b: Partial<Out<typeof VariantCreate>>): VariantData {
  return { ...b, price: centsOrNull(b.price) } as VariantData
}

export const menuOps = {
  createCategory: (b: Out<typeof CategoryCreate>): MenuOp => ({ op: 'category.create', data: b as CategoryData & { name: string } }),
  updateCategory: (id: number, b: Out<typeof CategoryUpdate>): MenuOp => ({ op: 'category.update', id, data: b }),
  createItem: (b: Out<typeof ItemCreate>): MenuOp => ({ op: 'item.create', data: itemData(b) as ItemData & { name: string; price: number } }),
  updateItem: (id: number, b: Out<typeof ItemUpdate>): MenuOp => ({ op: 'item.update', id, data: itemData(b) }),
  createVariant: (itemId: number, b: Out<typeof VariantCreate>): MenuOp => ({ op: 'variant.create', itemId, data: variantData(b) as VariantData & { name: string } }),
  updateVariant: (itemId: number, id: number, b: Out<typeof VariantUpdate>): MenuOp => ({ op: 'variant.update', itemId, id, data: variantData(b) }),
}

/** Send a menu op through the store actor (serialised with order pricing) and wait for durability. */
export function runMenuOp(svc: Services, storeId: number, op: MenuOp): Promise<MenuChange> {
  return svc.actors.stores.ask<MenuChange>(storeId, (replyTo) => ({ type: 'menu_write', op, replyTo }))
}

/** Read an item back as the API shows it. */
export function itemOut(svc: Services, store: StoreRow, itemId: number) {
  const found = svc.stores.item(store.id, itemId)
  if (!found) throw notFound('item')
  return itemView(found.item, verticalOf(store.store_type), svc.config.siteUrl, found.variants, found.extras)
}

export function categoryOut(svc: Services, storeId: number, id: number) {
  const c = svc.stores.category(storeId, id)
  if (!c) throw notFound('category')
  return { id: c.id, name: c.name, position: c.position, station: c.station, created_at: c.created_at }
}

export function variantOut(svc: Services, itemId: number, id: number) {
  const vr = svc.stores.variant(itemId, id)
  if (!vr) throw notFound('variant')
  return variantView(vr)
}
