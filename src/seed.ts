/**
 * Demo data: a complete, separate account per call (owner with a `*` token, a restaurant with a
 * menu, a sold-out item, a driver, staff of each role, a customer, a storefront token).
 * Raw secrets exist only in the returned object; the database keeps hashes.
 */
import { randomBytes, randomInt } from 'node:crypto'
import type { Db } from './storage/db.ts'
import { nowIso } from './storage/db.ts'
import { newToken, sha256Hex } from './auth/tokens.ts'
import { STOREFRONT_SCOPES } from './auth/storefront.ts'
import { hashSecretSync } from './auth/passwords.ts'
import { hashPinSync, storePinSalt } from './auth/staff.ts'
import { setAccountPlan } from './storage/plans.ts'
import type { StoreType } from './domain/verticals.ts'
import { DEMO_NAMES, demoSettings, seedCatalogue } from './seed-verticals.ts'

export interface DemoAccount {
  /** `email` and `password` sign in at `{site_url}/login` (docs/dashboard.md); `token` is an API token with `*`. */
  owner: { id: number; email: string; password: string; token: string }
  store: { id: number; slug: string; title: string; storefront_token: string; url: string }
  driver: { id: number; name: string; phone: string; token: string }
  staff: Array<{ id: number; role: string; email: string; password: string; pin: string }>
  customer: { id: number; email: string; password: string; phone: string }
  /** A storefront coupon: 10% off orders from 15.00 (docs/storefront.md "Coupons"). */
  coupon: { id: number; code: string }
}

/** Create an owner token; returns the raw token (shown once). */
export function createOwnerToken(db: Db, ownerId: number, capabilities: string[], expiresAt: string | null = null, name = ''): { id: number; token: string } {
  const token = newToken('owner')
  const r = db.prepare('INSERT INTO owner_tokens (owner_id, token_hash, token_prefix, name, capabilities, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
    .run(ownerId, sha256Hex(token), token.slice(0, 10), name, JSON.stringify(capabilities), expiresAt, nowIso())
  return { id: Number(r.lastInsertRowid), token }
}

const MENU: Array<{ name: string; station: string; items: Array<{ name: string; price: number; vegan?: boolean; halal?: boolean; popular?: boolean; calories?: number; soldOut?: boolean; variants?: Array<[string, number]>; extras?: Array<[string, number, string]> }> }> = [
  {
    name: 'Pizzas', station: 'oven', items: [
      { name: 'Margherita', price: 950, vegan: false, popular: true, calories: 800, variants: [['Small', 950], ['Large', 1350]], extras: [['Extra cheese', 150, 'Toppings'], ['Olives', 100, 'Toppings'], ['Chili oil', 50, 'Sauces']] },
      { name: 'Diavola', price: 1150, calories: 950, variants: [['Small', 1150], ['Large', 1550]], extras: [['Extra cheese', 150, 'Toppings']] },
      { name: 'Truffle Bianca', price: 1600, soldOut: true },
    ],
  },
  {
    name: 'Salads', station: 'cold', items: [
      { name: 'Garden Salad', price: 750, vegan: true, halal: true, calories: 300, extras: [['Avocado', 200, 'Add-ons']] },
      { name: 'Chicken Caesar', price: 990, halal: true, calories: 550 },
    ],
  },
  {
    name: 'Drinks', station: 'bar', items: [
      { name: 'Lemonade', price: 350, vegan: true, halal: true, calories: 120, variants: [['0.3 l', 350], ['0.5 l', 450]] },
      { name: 'Espresso', price: 250, vegan: true, halal: true, calories: 5 },
    ],
  },
]

const ROLES = ['manager', 'cashier', 'kitchen', 'waiter'] as const

/**
 * The demo store's settings (docs/stores.md). Open around the clock, in the canonical hours format,
 * so the demo (and the benches and tests that order from it) works at any hour; the owner sets
 * real hours with `PUT /restaurants/{id}/business-hours`.
 */
const DEMO_SETTINGS = {
  timezone: 'America/Chicago',
  business_hours: Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [['00:00', '24:00']]])),
  holidays: [],
  prep_minutes: 15,
  accepting_orders: true,
  public_listing: true,
  address: '742 Evergreen Terrace, Springfield',
}

/** `type` other than the restaurant: that vertical's demo store and catalogue (src/seed-verticals.ts; `dispatch seed --demo --type`). */
export function seedDemo(db: Db, siteUrl: string, type: StoreType = 'restaurant'): DemoAccount {
  const suffix = randomBytes(3).toString('hex')
  const now = nowIso()
  const password = () => randomBytes(9).toString('base64url')
  return db.transaction((): DemoAccount => {
    const email = `owner+${suffix}@demo.dispatch.local`
    // The demo owner signs in to the dashboard at once: a password, and the address counts as confirmed.
    const ownerPassword = password()
    const ownerId = Number(db.prepare('INSERT INTO owners (name, email, password_hash, email_verified_at, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(`Demo Owner ${suffix}`, email, hashSecretSync(ownerPassword), now, now).lastInsertRowid)
    // The demo shows every feature (KDS, analytics, delivery, webhooks, CRM, MCP): the Pro plan.
    setAccountPlan(db, ownerId, 'pro', now)
    const ownerToken = createOwnerToken(db, ownerId, ['*'], null, 'demo')

    const names = type === 'restaurant' ? { slug: 'demo-bistro', title: 'Demo Bistro' } : DEMO_NAMES[type]
    const slug = `${names.slug}-${suffix}`
    const title = `${names.title} ${suffix}`
    const storeId = Number(db.prepare(`INSERT INTO stores (owner_id, title, slug, template, store_type, currency, city, settings, created_at)
      VALUES (?, ?, ?, 'classic', ?, 'USD', 'Springfield', ?, ?)`)
      .run(ownerId, title, slug, type, JSON.stringify({ ...DEMO_SETTINGS, ...demoSettings(type) }), now).lastInsertRowid)
    const storefrontToken = newToken('storefront')
    // All three scopes, named rather than left to the column default: the demo token also opens the storefront MCP server (docs/mcp-storefront.md).
    db.prepare('INSERT INTO storefront_tokens (store_id, token_hash, scopes, created_at) VALUES (?, ?, ?, ?)').run(storeId, sha256Hex(storefrontToken), JSON.stringify(STOREFRONT_SCOPES), now)

    const insCat = db.prepare('INSERT INTO menu_categories (store_id, name, position, station, created_at) VALUES (?, ?, ?, ?, ?)')
    const insItem = db.prepare(`INSERT INTO menu_items (store_id, category_id, name, description, price, position, is_sold_out, is_popular, is_vegan, is_halal, calories, created_at, updated_at)
      VALUES (?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    const insVariant = db.prepare('INSERT INTO item_variants (item_id, name, price, position, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
    const insExtra = db.prepare('INSERT INTO item_extras (item_id, name, price, group_name, position) VALUES (?, ?, ?, ?, ?)')
    if (type !== 'restaurant') seedCatalogue(db, storeId, type, now)
    else MENU.forEach((cat, cpos) => {
      const catId = Number(insCat.run(storeId, cat.name, cpos, cat.station, now).lastInsertRowid)
      cat.items.forEach((it, ipos) => {
        const itemId = Number(insItem.run(storeId, catId, it.name, it.price, ipos, it.soldOut ? 1 : 0, it.popular ? 1 : 0, it.vegan ? 1 : 0, it.halal ? 1 : 0, it.calories ?? null, now, now).lastInsertRowid)
        it.variants?.forEach(([n, p], vpos) => insVariant.run(itemId, n, p, vpos, now, now))
        it.extras?.forEach(([n, p, g], epos) => insExtra.run(itemId, n, p, g, epos))
      })
    })

    const driverToken = newToken('driver')
    const driverPhone = `+1555${String(randomInt(0, 10_000_000)).padStart(7, '0')}`
    const driverId = Number(db.prepare('INSERT INTO drivers (owner_id, restaurant_id, name, phone, token_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(ownerId, storeId, 'Dana Driver', driverPhone, sha256Hex(driverToken), now).lastInsertRowid)

    const insStaff = db.prepare('INSERT INTO staff (store_id, name, email, role, password_hash, pin_hash, station, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
    const usedPins = new Set<string>()
    const staff = ROLES.map((role) => {
      let pin: string
      do pin = String(randomInt(0, 1_000_000)).padStart(6, '0')
      while (usedPins.has(pin))
      usedPins.add(pin)
      const pw = password()
      const staffEmail = `${role}+${suffix}@demo.dispatch.local`
      const id = Number(insStaff.run(storeId, `Demo ${role}`, staffEmail, role, hashSecretSync(pw), hashPinSync(pin, storePinSalt(db, storeId)), role === 'kitchen' ? 'oven' : null, now).lastInsertRowid)
      return { id, role, email: staffEmail, password: pw, pin }
    })

    const customerPassword = password()
    const customerEmail = `customer+${suffix}@demo.dispatch.local`
    const customerPhone = `+1555${String(randomInt(0, 10_000_000)).padStart(7, '0')}`
    const customerId = Number(db.prepare('INSERT INTO customers (store_id, name, email, phone, password_hash, consents, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(storeId, 'Casey Customer', customerEmail, customerPhone, hashSecretSync(customerPassword), JSON.stringify({ marketing: false }), now, now).lastInsertRowid)

    const couponId = Number(db.prepare(`INSERT INTO coupons (store_id, code, kind, value, min_order, usage_limit, created_at, updated_at)
      VALUES (?, 'WELCOME10', 'percent', 10, 1500, 100, ?, ?)`).run(storeId, now, now).lastInsertRowid)

    return {
      owner: { id: ownerId, email, password: ownerPassword, token: ownerToken.token },
      store: { id: storeId, slug, title, storefront_token: storefrontToken, url: `${siteUrl}/s/${slug}` },
      driver: { id: driverId, name: 'Dana Driver', phone: driverPhone, token: driverToken },
      staff,
      customer: { id: customerId, email: customerEmail, password: customerPassword, phone: customerPhone },
      coupon: { id: couponId, code: 'WELCOME10' },
    }
  }).immediate()
}
