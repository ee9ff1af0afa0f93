/**
 * `dispatch seed --demo --type <store_type> --json` (issue 18 item 7; docs/verticals.md "Demo
 * stores"): for every store type the JSON of the default demo, a store of that type with its
 * vertical's catalogue (brands and stock for goods, fitments for car parts, age-restricted and
 * expiring items for the pharmacy, rooms for the hotel, slot settings for the laundry), and the store
 * takes an order through the API. No --type stays the restaurant demo; an unknown type is refused.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { runCli } from '../src/cli.ts'
import { STORE_TYPES, VERTICALS } from '../src/domain/verticals.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const env = { DB_PATH: s.dbPath, SITE_URL: s.site, LOG_LEVEL: 'silent' }
const db = s.app.svc.db

type Item = { id: number; name: string; is_sold_out: boolean; stock?: number | null; brand?: string | null; min_age?: number | null; variations: { id: number; stock: number | null }[] }

for (const type of STORE_TYPES) {
  t.test(`seed --demo --type ${type} --json gives a working ${type} store`, async (t) => {
    const r = runCli(['seed', '--demo', '--type', type, '--json'], env)
    t.equal(r.code, 0, r.out)
    const demo = JSON.parse(r.out)
    t.match(demo, { owner: { id: Number, token: /^dso_/ }, store: { id: Number, slug: String, storefront_token: /^dss_/ }, driver: { token: String }, customer: { email: String } })
    t.equal(demo.staff.length, 4)
    const req = (method: string, path: string, body?: unknown) => s.req(method, path, { token: demo.owner.token, body })

    const detail = await req('GET', `/restaurants/${demo.store.id}`)
    t.equal(detail.body.store_type, type)
    const menu = (await req('GET', `/restaurants/${demo.store.id}/menu`)).body as { items: Item[] }[]
    const items = menu.flatMap((c) => c.items)
    t.ok(menu.length >= 2 && items.length >= 4, 'several categories and items')
    const vertical = VERTICALS[type]

    if (vertical.capabilities.goods_fields) {
      t.ok(items.every((i) => typeof i.brand === 'string'), 'goods items carry a brand')
      t.ok(items.some((i) => i.stock != null || i.variations.some((v) => v.stock != null)), 'stock counts')
      t.ok((db.prepare('SELECT COUNT(*) FROM brands WHERE store_id = ?').pluck().get(demo.store.id) as number) >= 2, 'brand rows')
    }
    if (type === 'clothing') t.ok(items.every((i) => i.variations.length > 0), 'sizes as variants')
    if (type === 'carparts') {
      const fits = await req('GET', `/restaurants/${demo.store.id}/fitments`)
      t.ok(fits.body.total >= 5, 'fitments')
      const golf = (await req('GET', `/restaurants/${demo.store.id}/menu?make=volkswagen&model=golf&year=2015`)).body as { items: Item[] }[]
      const names = golf.flatMap((c) => c.items.map((i) => i.name))
      t.ok(names.includes('Front brake pads') && names.includes('Screen wash'), 'the vehicle filter finds linked and universal parts')
      t.notOk(names.includes('Rear brake pads'), 'and not parts for other cars')
    }
    if (type === 'pharmacy') {
      const gated = items.find((i) => i.min_age === 18)
      t.ok(gated, 'an age-restricted item')
      t.ok((db.prepare('SELECT COUNT(*) FROM item_batches b JOIN menu_items i ON i.id = b.item_id WHERE i.store_id = ?').pluck().get(demo.store.id) as number) >= 4, 'expiry batches')
      const refused = await req('POST', `/restaurants/${demo.store.id}/orders`, { type: 'delivery', address: '1 Main St', items: [{ item_id: gated!.id, quantity: 1 }] })
      t.match(refused.body, { code: 'validation_failed', reason: 'age_confirmation_required' }, 'its orders need the age confirmation')
    }
    if (type === 'retail') t.ok(items.some((i) => i.min_age != null), 'age-restricted goods')
    if (type === 'hotel') t.equal(db.prepare("SELECT COUNT(*) FROM dining_tables WHERE store_id = ? AND kind = 'room'").pluck().get(demo.store.id), 5, 'rooms')
    if (type === 'laundry') t.match(detail.body.settings.pickup_slots, { slot_minutes: 60, capacity: 4 }, 'pickup slot settings')

    // Order something: an item (or a variant) in stock, by a mode this vertical offers without a schedule.
    const item = items.find((i) => !i.is_sold_out && (i.stock == null || i.stock > 0) && (i.variations.length === 0 || i.variations.some((v) => v.stock == null || v.stock > 0)))!
    const variant = item.variations.find((v) => v.stock == null || v.stock > 0)
    const mode = (vertical.fulfillment_modes as string[]).includes('delivery') ? { type: 'delivery', address: '1 Main St' } : { type: 'takeaway' }
    const o = await req('POST', `/restaurants/${demo.store.id}/orders`, { ...mode, age_confirmed: true, items: [{ item_id: item.id, quantity: 1, ...(variant ? { variation: variant.id } : {}) }] })
    t.equal(o.status, 200, JSON.stringify(o.body))
  })
}

t.test('without --type the demo is the restaurant; an unknown type is refused', async (t) => {
  const demo = JSON.parse(runCli(['seed', '--demo', '--json'], env).out)
  t.match(demo.store.slug, /^demo-bistro-/)
  t.equal((await s.req('GET', `/restaurants/${demo.store.id}`, { token: demo.owner.token })).body.store_type, 'restaurant')
  t.throws(() => runCli(['seed', '--demo', '--type', 'spaceport', '--json'], env), /unknown --type "spaceport"/)
})
