/**
 * Fitments (issue 18 item 3; api-v1 §4.2 `/fitments`; docs/verticals.md "Fitments"): the vehicles
 * a car-parts store's items fit, the links, and the menu filtered by vehicle. Only stores whose
 * vertical has the `fitment` capability have fitments: elsewhere every fitment route and a vehicle
 * filter on a menu answer 422 `not_for_store_type`, like brands on a restaurant (src/ops/menu/brands.ts).
 *
 * Fitments do not change prices or what can be ordered, so their writes go straight through the
 * group committer (durable before the reply) rather than the store actor.
 */
import * as v from 'valibot'
import { defineOp, type Access } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Id, Nullable, PageQuery, PaginatedSchema, pageOf, paginate } from '../schemas/common.ts'
import { named } from '../schemas/named.ts'
import { ApiError, notFound } from '../../errors.ts'
import { nowIso } from '../../storage/db.ts'
import { STORE_TYPES, VERTICALS, verticalOf } from '../../domain/verticals.ts'
import { YEAR_MAX, YEAR_MIN, isVehicleQuery, yearRangeErrors, type VehicleQuery } from '../../domain/fitments.ts'
import {
  deleteFitment, fitmentById, fitmentItems, fitmentPage, fittingMenu, insertFitment, itemFitments, requireStoreItem, setItemFitments, updateFitment,
  type FitmentRow,
} from '../../storage/fitments.ts'
import { menuView, type StoreMenu, type StoreRow } from '../../storage/stores.ts'
import type { Services } from '../../services.ts'
import type { OpCtx } from '../op.ts'

const tag = 'Fitments'
const read: Access = { owner: 'menu:read' }
const write: Access = { owner: 'menu:write' }
export const FITMENTS_PER_PAGE = 50

const Name = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max))
const Year = v.pipe(v.number(), v.integer(), v.minValue(YEAR_MIN), v.maxValue(YEAR_MAX))
const FitmentBody = { make: Name(60), model: Name(80), year_from: Year, year_to: Year, engine: Nullable(Name(80)) }

/** `?make=&model=&year=&engine=` (the menus' vehicle filter and the fitment list's filters). */
export const VehicleQuerySchema = v.object({
  make: v.optional(Name(60)),
  model: v.optional(Name(80)),
  year: v.optional(v.pipe(v.string(), v.regex(/^\d{4}$/, 'year must be a four-digit model year'))),
  engine: v.optional(Name(80)),
})
type VehicleQueryInput = v.InferOutput<typeof VehicleQuerySchema>

const vehicleOf = (q: VehicleQueryInput): VehicleQuery => ({
  make: q.make, model: q.model, year: q.year === undefined ? undefined : Number(q.year), engine: q.engine,
})

const str = { type: 'string' }
const int = { type: 'integer' }
const nullableStr = { anyOf: [str, { type: 'null' }] }
const fitmentProps = {
  id: int, make: str, model: str, year_from: int, year_to: int, engine: nullableStr,
  created_at: { type: 'string', format: 'date-time' }, updated_at: { type: 'string', format: 'date-time' },
}
export const FitmentSchema = named('Fitment', { type: 'object', required: Object.keys(fitmentProps), properties: fitmentProps })
const FitmentDetailSchema = named('FitmentDetail', {
  type: 'object', required: [...Object.keys(fitmentProps), 'items'],
  properties: { ...fitmentProps, items: { type: 'array', items: { type: 'object', required: ['id', 'name'], properties: { id: int, name: str } } } },
})
const ItemFitmentsSchema = named('ItemFitments', {
  type: 'object', required: ['item_id', 'universal', 'fitments'],
  properties: { item_id: int, universal: { type: 'boolean' }, fitments: { type: 'array', items: FitmentSchema } },
})

const fitmentView = (f: FitmentRow) => ({
  id: f.id, make: f.make, model: f.model, year_from: f.year_from, year_to: f.year_to, engine: f.engine, created_at: f.created_at, updated_at: f.updated_at,
})

const FITMENT_TYPES = STORE_TYPES.filter((t) => VERTICALS[t].capabilities.fitment).join(', ')

/** The scoped store, if its vertical has fitments (422 `not_for_store_type` otherwise). */
function fitmentStore(ctx: OpCtx): StoreRow {
  const store = storeOf(ctx)
  if (!verticalOf(store.store_type).capabilities.fitment) throw new ApiError('not_for_store_type', `Only ${FITMENT_TYPES} stores have fitments.`)
  return store
}

function checkYears(from: number, to: number): void {
  const errors = yearRangeErrors(from, to)
  if (errors) throw new ApiError('validation_failed', undefined, errors)
}

/**
 * The menu a `menu.get`-like operation shows for this query: the whole menu, or (with any vehicle
 * part) only the items fitting that vehicle plus the universal ones. A vehicle filter on a store
 * without fitments is 422 `not_for_store_type`: it cannot mean anything there.
 */
export function menuForVehicle(svc: Pick<Services, 'db' | 'stores'>, store: StoreRow, q: VehicleQueryInput | undefined): StoreMenu {
  const vehicle = vehicleOf(q ?? {})
  if (!isVehicleQuery(vehicle)) return svc.stores.menu(store.id)
  if (!verticalOf(store.store_type).capabilities.fitment) {
    const message = `Vehicle filters (make, model, year, engine) apply to ${FITMENT_TYPES} stores only.`
    const given = (['make', 'model', 'year', 'engine'] as const).filter((k) => vehicle[k] !== undefined)
    throw new ApiError('not_for_store_type', message, Object.fromEntries(given.map((k) => [k, [message]])))
  }
  return fittingMenu(svc.db, store.id, vehicle)
}

/** How a menu operation reads the vehicle filter (its OpenAPI description). */
export const VEHICLE_FILTER_DOC = 'Car parts stores: `?make=&model=&year=&engine=` keeps only the items fitting that vehicle, plus universal ones (docs/verticals.md "Fitments").'

/** The menu of the scope's store for this query (`menuForVehicle`) as clients see it, sold-out items included or left out. */
export function vehicleMenuView(ctx: OpCtx, q: VehicleQueryInput | undefined, includeSoldOut: boolean) {
  const store = storeOf(ctx)
  return menuView(menuForVehicle(ctx.svc, store, q), verticalOf(store.store_type), includeSoldOut, ctx.svc.config.siteUrl)
}

export const listFitments = defineOp({
  id: 'fitments.list', tag, summary: `List the store's fitments (vehicles), ${FITMENTS_PER_PAGE} per page`, access: read, scope: ['store'],
  description: 'Filters: `make`, `model` (case-insensitive), `year` (inside `year_from..year_to`), `engine` (fitments without an engine match every engine). Car parts stores only (422 `not_for_store_type` elsewhere).',
  input: v.object({ ...PageQuery.entries, ...VehicleQuerySchema.entries }), output: PaginatedSchema(FitmentSchema),
  run: (ctx, input) => {
    const store = fitmentStore(ctx)
    const page = pageOf(input)
    const { data, total } = fitmentPage(ctx.svc.db, store.id, vehicleOf(input), page, FITMENTS_PER_PAGE)
    return paginate(data.map(fitmentView), page, FITMENTS_PER_PAGE, total)
  },
})

const fitmentId = { fitment_id: Id }

function detail(ctx: OpCtx, storeId: number, id: number) {
  const f = fitmentById(ctx.svc.db, storeId, id)
  if (!f) throw notFound('fitment')
  return { ...fitmentView(f), items: fitmentItems(ctx.svc.db, f.id) }
}

export const getFitment = defineOp({
  id: 'fitments.get', tag, summary: 'A fitment with the items linked to it', access: read, scope: ['store'],
  input: v.object(fitmentId), output: FitmentDetailSchema,
  run: (ctx, { fitment_id }) => detail(ctx, fitmentStore(ctx).id, fitment_id),
})

export const createFitment = defineOp({
  id: 'fitments.create', tag, summary: 'Add a vehicle (make, model, year range, optional engine)', access: write, scope: ['store'],
  description: '`year_from` ≤ `year_to`, both included; no `engine` means every engine of that model and years.',
  input: v.object(FitmentBody), output: FitmentDetailSchema,
  run: async (ctx, body) => {
    const store = fitmentStore(ctx)
    checkYears(body.year_from, body.year_to)
    const id = await ctx.svc.committer.write((db) => insertFitment(db, store.id, body, nowIso()))
    return detail(ctx, store.id, id)
  },
})

export const updateFitmentOp = defineOp({
  id: 'fitments.update', tag, summary: 'Change a vehicle (fields not given keep their value)', access: write, scope: ['store'],
  input: v.object({ ...fitmentId, ...v.partial(v.object(FitmentBody)).entries }), output: FitmentDetailSchema,
  run: async (ctx, { fitment_id, ...changes }) => {
    const store = fitmentStore(ctx)
    await ctx.svc.committer.write((db) => {
      const f = fitmentById(db, store.id, fitment_id)
      if (!f) throw notFound('fitment')
      const next = {
        make: changes.make ?? f.make, model: changes.model ?? f.model, year_from: changes.year_from ?? f.year_from, year_to: changes.year_to ?? f.year_to,
        engine: changes.engine === undefined ? f.engine : changes.engine,
      }
      checkYears(next.year_from, next.year_to)
      updateFitment(db, store.id, fitment_id, next, nowIso())
    })
    return detail(ctx, store.id, fitment_id)
  },
})

export const deleteFitmentOp = defineOp({
  id: 'fitments.delete', tag, summary: 'Delete a vehicle and its links to items', access: write, scope: ['store'], empty: true,
  input: v.object(fitmentId),
  run: async (ctx, { fitment_id }) => {
    const store = fitmentStore(ctx)
    await ctx.svc.committer.write((db) => deleteFitment(db, store.id, fitment_id))
  },
})

function itemFitmentsView(ctx: OpCtx, itemId: number) {
  const r = itemFitments(ctx.svc.db, itemId)
  return { ...r, fitments: r.fitments.map(fitmentView) }
}

export const getItemFitments = defineOp({
  id: 'fitments.item.get', tag, summary: 'The vehicles an item fits', access: read, scope: ['store'],
  input: v.object({ item_id: Id }), output: ItemFitmentsSchema,
  run: (ctx, { item_id }) => {
    // Tenancy before the store-type check: another store's item is a 404 (api-v1 §1), not a 422.
    requireStoreItem(ctx.svc.db, storeOf(ctx).id, item_id)
    fitmentStore(ctx)
    return itemFitmentsView(ctx, item_id)
  },
})

export const setItemFitmentsOp = defineOp({
  id: 'fitments.item.set', tag, summary: 'Set the vehicles an item fits (replaces its links)', access: write, scope: ['store'],
  description: '`fitment_ids` replaces the item\'s links (an empty list removes them); `universal: true` marks a part that fits every vehicle, so vehicle filters keep it. A fitment of another store is 422 keyed `fitment_ids.N`.',
  input: v.object({ item_id: Id, fitment_ids: v.pipe(v.array(Id), v.maxLength(1000)), universal: v.optional(v.boolean()) }), output: ItemFitmentsSchema,
  run: async (ctx, { item_id, fitment_ids, universal }) => {
    requireStoreItem(ctx.svc.db, storeOf(ctx).id, item_id)
    const store = fitmentStore(ctx)
    await ctx.svc.committer.write((db) => setItemFitments(db, store.id, item_id, fitment_ids, universal))
    return itemFitmentsView(ctx, item_id)
  },
})

export const fitmentOps = [listFitments, getFitment, createFitment, updateFitmentOp, deleteFitmentOp, getItemFitments, setItemFitmentsOp]
