/**
 * A sample store context with every object of the reference filled in: validate_theme renders
 * every template with it (so strict mode finds mistakes static checks cannot see, such as a
 * wrong field of a loop variable), the tests and docs use it too.
 */
import { checkoutModes } from '../domain/checkout-modes.ts'
import type { ThemeContext } from './render.ts'
import { weekView } from '../domain/business-hours.ts'

const item = (id: number, name: string, price: number, category_id: number, extra: Record<string, unknown> = {}) => ({
  id, name, price, category_id, description: '', url: `/s/sample/items/${id}`, image_url: null, thumb_url: null, available: true,
  dietary: [], attributes: {}, variations: [], extras: [], ...extra,
})

const margherita = item(1, 'Margherita', 950, 1, {
  description: 'Tomato, mozzarella, basil.', dietary: ['vegetarian'],
  variations: [{ id: 1, name: 'Regular', price: 950 }, { id: 2, name: 'Large', price: 1250 }],
  extras: [{ id: 1, name: 'Extra cheese', price: 150 }],
})
const diavola = item(2, 'Diavola', 1150, 1, { description: 'Spicy salami.' })
const lemonade = item(3, 'Lemonade', 350, 2, { dietary: ['vegan', 'gluten_free'], available: false })
const olives = item(4, 'Olive oil 500 ml', 890, 3, { attributes: { brand: 'Frantoio', size: '500 ml' } })

const categories = [
  { id: 1, name: 'Pizza', url: '/s/sample/menu#pizza', items: [margherita, diavola] },
  { id: 2, name: 'Drinks', url: '/s/sample/menu#drinks', items: [lemonade] },
  { id: 3, name: 'Pantry', url: '/s/sample/menu#pantry', items: [olives] },
]

const line = { item_id: 1, name: 'Margherita', quantity: 2, variation: 'Large', extras: ['Extra cheese'], unit_price: 1400, line_total: 2800 }

export function sampleContext(template = 'home'): ThemeContext {
  return {
    store: {
      id: 7, name: 'Pizza Roma', slug: 'pizza-roma', url: '/s/pizza-roma', store_type: 'restaurant', currency: 'EUR',
      city: 'Lisbon', address: 'Rua Augusta 1', phone: '+351 21 000 0000', is_open: true, next_opening: null,
      hours: [{ day: 'mon', opens: '11:00', closes: '22:00' }, { day: 'tue', opens: '11:00', closes: '22:00' }],
      week: weekView({ mon: [['11:00', '22:00']], tue: [['11:00', '22:00']], sat: [['00:00', '24:00']] }),
      fulfillment_modes: ['takeaway', 'on-table', 'delivery'], modes: checkoutModes(['takeaway', 'on-table', 'delivery']), default_mode: 'delivery', account_url: '/s/pizza-roma/account',
    },
    customer: { name: 'Ana', email: 'ana@example.com', phone: '+351910000000', addresses: [{ id: 1, label: 'Home', address: 'Rua Augusta 10, Lisbon', is_default: true, delivery: { deliverable: true, fee: 250, estimate: '2026-06-01T19:40:00+01:00' } }] },
    form: { csrf_token: 'sample-csrf', errors: [{ field: 'coupon_code', message: 'This coupon has expired.' }], values: { customer_name: 'Ana' } },
    menu: { categories, items: categories.flatMap((c) => c.items), url: '/s/pizza-roma/menu' },
    item: margherita,
    cart: { lines: [line], item_count: 2, subtotal: 2800, discount: 0, total: 2800, coupon: null, url: '/s/pizza-roma/cart', checkout_url: '/s/pizza-roma/checkout' },
    order: { id: 1042, number: '1042', status: 'preparing', type: 'takeaway', lines: [line], total: 2800, created_at: '2026-11-22T20:30:00.000+00:00', track_url: '/track/sample' },
    request: { path: `/s/pizza-roma/${template === 'home' ? '' : template}`, locale: 'en', nonce: 'sample-nonce', page_type: template },
    page: { title: 'Pizza Roma', description: 'Order from Pizza Roma', template },
  }
}
