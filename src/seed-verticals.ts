/**
 * Demo catalogues per store type (issue 18 item 7; docs/verticals.md "Demo stores"): what
 * `dispatch seed --demo --type <store_type>` puts in the store besides the account, staff, driver,
 * customer and coupon every demo has (src/seed.ts). Goods stores get brands (src/storage/brands.ts)
 * and items with SKUs, stock and variants; car parts get fitments and links (src/storage/fitments.ts);
 * the pharmacy age-restricted items and expiring batches (src/storage/stock.ts); the hotel rooms
 * (src/storage/reservations.ts) and a room-service menu; the laundry its services and slot settings.
 * Runs inside seedDemo's transaction.
 */
import { stmt, type Db } from './storage/db.ts'
import type { StoreType } from './domain/verticals.ts'
import { createBrand } from './storage/brands.ts'
import { insertBatch } from './storage/stock.ts'
import { tableWrites } from './storage/reservations.ts'
import { insertFitment, linkMany, markUniversal } from './storage/fitments.ts'

interface DemoVariant { name: string; price?: number; stock: number }
interface DemoItem {
  name: string
  price: number // cents
  brand?: string
  stock?: number
  description?: string
  minAge?: number
  variants?: DemoVariant[]
  /** Car parts: keys of FITMENTS this part fits; 'universal' for every vehicle. */
  fits?: string[] | 'universal'
  /** Pharmacy: expiring batches, days from today and quantity. */
  batches?: [days: number, qty: number][]
}
interface DemoCategory { name: string; station?: string; items: DemoItem[] }

/** Title and slug stem of each type's demo store (the restaurant keeps seed.ts's "Demo Bistro"). */
export const DEMO_NAMES: Record<Exclude<StoreType, 'restaurant'>, { title: string; slug: string }> = {
  retail: { title: 'Demo Corner Shop', slug: 'demo-corner-shop' },
  cosmetic: { title: 'Demo Beauty', slug: 'demo-beauty' },
  clothing: { title: 'Demo Outfitters', slug: 'demo-outfitters' },
  carparts: { title: 'Demo Auto Parts', slug: 'demo-auto-parts' },
  laundry: { title: 'Demo Laundry', slug: 'demo-laundry' },
  pharmacy: { title: 'Demo Pharmacy', slug: 'demo-pharmacy' },
  hotel: { title: 'Demo Hotel', slug: 'demo-hotel' },
}

const sizes = (stock: number, names = ['S', 'M', 'L', 'XL']): DemoVariant[] => names.map((name) => ({ name, stock }))

const FITMENTS = {
  golf7: { make: 'Volkswagen', model: 'Golf', year_from: 2013, year_to: 2020, engine: null },
  golf6tdi: { make: 'Volkswagen', model: 'Golf', year_from: 2009, year_to: 2012, engine: '2.0 TDI' },
  corolla: { make: 'Toyota', model: 'Corolla', year_from: 2014, year_to: 2019, engine: null },
  civic: { make: 'Honda', model: 'Civic', year_from: 2016, year_to: 2021, engine: '1.5 VTEC Turbo' },
  f150: { make: 'Ford', model: 'F-150', year_from: 2015, year_to: 2020, engine: '5.0 V8' },
  bmw3: { make: 'BMW', model: '3 Series', year_from: 2012, year_to: 2018, engine: null },
} as const

const CATALOGUES: Record<Exclude<StoreType, 'restaurant'>, DemoCategory[]> = {
  retail: [
    { name: 'Snacks & drinks', items: [
      { name: 'Sea salt crisps', price: 199, brand: 'Crunchy Co', stock: 48 },
      { name: 'Sparkling water 6-pack', price: 449, brand: 'Clearspring', stock: 30 },
      { name: 'Craft lager 4-pack', price: 999, brand: 'Hopfield', stock: 24, minAge: 21, description: 'Age-restricted: confirm the buyer is 21 or over.' },
    ] },
    { name: 'Household', items: [
      { name: 'Dish soap', price: 349, brand: 'Sudsy', stock: 20, variants: [{ name: 'Lemon', stock: 10 }, { name: 'Unscented', stock: 10 }] },
      { name: 'AA batteries (8)', price: 799, brand: 'VoltMax', stock: 15 },
      { name: 'Lighter', price: 299, brand: 'Flint', stock: 40, minAge: 18 },
    ] },
  ],
  cosmetic: [
    { name: 'Skin care', items: [
      { name: 'Hydrating face cream 50 ml', price: 2400, brand: 'Aurelle', stock: 18 },
      { name: 'Vitamin C serum', price: 3200, brand: 'Glowlab', stock: 12 },
    ] },
    { name: 'Make-up', items: [
      { name: 'Matte lipstick', price: 1800, brand: 'Aurelle', variants: [{ name: 'Ruby', stock: 6 }, { name: 'Nude', stock: 8 }, { name: 'Plum', stock: 4 }] },
      { name: 'Mascara', price: 1500, brand: 'Glowlab', stock: 25 },
    ] },
  ],
  clothing: [
    { name: 'Tops', items: [
      { name: 'Organic cotton T-shirt', price: 2500, brand: 'Northwind', variants: sizes(10) },
      { name: 'Merino sweater', price: 8900, brand: 'Northwind', variants: sizes(4) },
    ] },
    { name: 'Bottoms', items: [
      { name: 'Slim chinos', price: 5900, brand: 'Fieldwear', variants: sizes(6, ['30', '32', '34', '36']) },
      { name: 'Denim jeans', price: 6900, brand: 'Fieldwear', variants: [{ name: '32/32', stock: 5 }, { name: '34/32', stock: 0 }, { name: '36/34', stock: 3 }] },
    ] },
  ],
  carparts: [
    { name: 'Brakes', items: [
      { name: 'Front brake pads', price: 4500, brand: 'StopTech', stock: 20, fits: ['golf7', 'golf6tdi', 'bmw3'] },
      { name: 'Front brake disc', price: 8900, brand: 'StopTech', stock: 8, fits: ['golf7'] },
      { name: 'Rear brake pads', price: 3900, brand: 'Brembo', stock: 14, fits: ['corolla', 'civic'] },
    ] },
    { name: 'Filters & fluids', items: [
      { name: 'Oil filter', price: 1200, brand: 'Mann', stock: 40, fits: ['golf7', 'golf6tdi', 'bmw3'] },
      { name: 'Air filter', price: 1800, brand: 'Mann', stock: 25, fits: ['corolla', 'civic', 'f150'] },
      { name: 'Engine oil 5W-30 (5 l)', price: 3900, brand: 'Castrol', stock: 30, fits: 'universal', variants: [{ name: '1 l', price: 1100, stock: 20 }, { name: '5 l', stock: 30 }] },
      { name: 'Screen wash', price: 600, brand: 'Prestone', stock: 50, fits: 'universal' },
    ] },
    { name: 'Electrical', items: [
      { name: 'Spark plugs (set of 4)', price: 2800, brand: 'NGK', stock: 16, fits: ['civic', 'corolla', 'golf7'] },
      { name: 'Battery 70 Ah', price: 11900, brand: 'Varta', stock: 6, fits: ['golf7', 'bmw3', 'f150'] },
    ] },
  ],
  laundry: [
    { name: 'Wash & fold', items: [
      { name: 'Wash & fold (per 5 kg bag)', price: 1500, description: 'Washed, dried and folded; back in 48 h.' },
      { name: 'Bedding set', price: 1800 },
    ] },
    { name: 'Dry cleaning', items: [
      { name: 'Shirt', price: 400 },
      { name: 'Suit (2 pieces)', price: 1600 },
      { name: 'Dress', price: 1400 },
    ] },
  ],
  pharmacy: [
    { name: 'Pain & fever', items: [
      { name: 'Paracetamol 500 mg (16)', price: 299, brand: 'Medix', batches: [[20, 30], [200, 50]] },
      { name: 'Ibuprofen 200 mg (24)', price: 449, brand: 'Medix', batches: [[365, 40]] },
    ] },
    { name: 'Cough & cold', items: [
      { name: 'Cough syrup with codeine', price: 899, brand: 'Pharmacare', minAge: 18, batches: [[90, 12]], description: 'Age-restricted: confirm the buyer is 18 or over.' },
      { name: 'Nasal spray', price: 549, brand: 'Pharmacare', batches: [[-5, 4], [120, 20]] },
    ] },
    { name: 'Wellbeing', items: [
      { name: 'Nicotine gum 2 mg', price: 1299, brand: 'QuitWell', minAge: 18, stock: 25 },
      { name: 'Vitamin D3 (90)', price: 899, brand: 'Sunvita', stock: 35 },
    ] },
  ],
  hotel: [
    { name: 'Breakfast', station: 'kitchen', items: [
      { name: 'Continental breakfast', price: 1800 },
      { name: 'Eggs Benedict', price: 1600 },
    ] },
    { name: 'All day', station: 'kitchen', items: [
      { name: 'Club sandwich', price: 1700 },
      { name: 'Caesar salad', price: 1400 },
    ] },
    { name: 'Drinks', station: 'bar', items: [
      { name: 'Espresso', price: 400 },
      { name: 'Bottle of house wine', price: 3200 },
    ] },
  ],
}

/** Store settings a type's demo adds to the demo defaults (laundry: its pickup/drop-off slots). */
export function demoSettings(type: StoreType): Record<string, unknown> {
  if (type === 'laundry') return { pickup_slots: { slot_minutes: 60, capacity: 4, lead_minutes: 60, days_ahead: 14 } }
  if (type === 'cosmetic') return { appointments: { slot_minutes: 30, capacity: 2, lead_minutes: 60, days_ahead: 30, duration_minutes: 45 } }
  return {}
}

const isoDay = (from: string, days: number): string => new Date(Date.parse(from) + days * 86_400_000).toISOString().slice(0, 10)

/** Write the demo catalogue of `type` into store `storeId` (not the restaurant's: seed.ts has it). */
export function seedCatalogue(db: Db, storeId: number, type: Exclude<StoreType, 'restaurant'>, now: string): void {
  const brands = new Map<string, number>()
  const brandId = (name: string) => {
    let id = brands.get(name)
    if (id === undefined) brands.set(name, (id = createBrand(db, storeId, { name }, now)))
    return id
  }
  const fitmentIds = new Map<string, number>()
  if (type === 'carparts') for (const [key, f] of Object.entries(FITMENTS)) fitmentIds.set(key, insertFitment(db, storeId, f, now))

  const insCat = stmt(db, 'INSERT INTO menu_categories (store_id, name, position, station, created_at) VALUES (?, ?, ?, ?, ?)')
  const insItem = stmt(db, `INSERT INTO menu_items (store_id, category_id, name, description, price, position, brand, brand_id, stock, sku, min_age, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const insVariant = stmt(db, 'INSERT INTO item_variants (item_id, name, price, sku, stock, position, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
  let sku = 1000
  CATALOGUES[type].forEach((cat, cpos) => {
    const catId = Number(insCat.run(storeId, cat.name, cpos, cat.station ?? null, now).lastInsertRowid)
    cat.items.forEach((it, ipos) => {
      const itemSku = `${type.slice(0, 3).toUpperCase()}-${++sku}`
      const stock = it.batches ? it.batches.filter(([d]) => d >= 0).reduce((n, [, q]) => n + q, 0) : it.variants ? null : it.stock ?? null
      const itemId = Number(insItem.run(storeId, catId, it.name, it.description ?? '', it.price, ipos, it.brand ?? null, it.brand ? brandId(it.brand) : null,
        stock, itemSku, it.minAge ?? null, now, now).lastInsertRowid)
      it.variants?.forEach((vr, vpos) => insVariant.run(itemId, vr.name, vr.price ?? null, `${itemSku}-${vpos + 1}`, vr.stock, vpos, now, now))
      for (const [days, quantity] of it.batches ?? []) insertBatch(db, itemId, { batch_code: `LOT-${itemId}-${days}`, expires_on: isoDay(now, days), quantity }, now)
      if (it.fits === 'universal') markUniversal(db, storeId, [itemId])
      else if (it.fits) linkMany(db, it.fits.map((k) => [fitmentIds.get(k)!, itemId] as const))
    })
  })
  if (type === 'hotel') {
    for (const [i, capacity] of [2, 2, 3, 4, 2].entries()) tableWrites.insert(db, storeId, { name: `Room ${101 + i}`, capacity, kind: 'room', active: true }, now)
  }
}
