/**
 * Starter menus a new store can start from (issue 12 item 6, docs/mcp-catalog.md): categories and
 * items with prices, applied through the ordinary menu operations (src/ops/web/catalog.ts
 * `applyStarterMenu`), so they are validated and counted against the plan like any item. Prices are
 * in the store's currency as the API writes them (major units, api-v1 §2.3); owners edit them after.
 */
import type { StoreType } from './verticals.ts'

export interface StarterItem {
  name: string
  price: number
  description?: string
  is_popular?: boolean
  is_vegan?: boolean
  is_halal?: boolean
  variations?: Array<{ name: string; price: number | null }>
  extras?: Array<{ name: string; price: number; group: string | null }>
}

export interface StarterCategory {
  name: string
  /** Kitchen-display station for the category's lines (docs/kds.md). */
  station?: string
  items: StarterItem[]
}

export interface StarterMenu {
  key: string
  title: string
  description: string
  /** Store types it suits (api-v1 §2.2); applying it to another type is allowed. */
  store_types: StoreType[]
  categories: StarterCategory[]
}

/** Two sizes: Regular at the item's price, Large at its own. */
const size = (large: number) => [{ name: 'Regular', price: null }, { name: 'Large', price: large }]
const toppings = [
  { name: 'Extra cheese', price: 1.5, group: 'Toppings' },
  { name: 'Mushrooms', price: 1, group: 'Toppings' },
  { name: 'Jalapeños', price: 1, group: 'Toppings' },
]
const milk = [
  { name: 'Oat milk', price: 0.5, group: 'Milk' },
  { name: 'Extra shot', price: 0.8, group: 'Coffee' },
]

export const STARTER_MENUS: readonly StarterMenu[] = [
  {
    key: 'pizzeria',
    title: 'Pizzeria',
    description: 'Classic pizzas in two sizes with toppings, starters, desserts and drinks.',
    store_types: ['restaurant'],
    categories: [
      {
        name: 'Pizzas', station: 'oven', items: [
          { name: 'Margherita', price: 9, description: 'Tomato, mozzarella, basil.', is_popular: true, variations: size(13), extras: toppings },
          { name: 'Pepperoni', price: 11, description: 'Tomato, mozzarella, pepperoni.', is_popular: true, variations: size(15), extras: toppings },
          { name: 'Quattro Formaggi', price: 12, description: 'Mozzarella, gorgonzola, parmesan, fontina.', variations: size(16), extras: toppings },
          { name: 'Marinara', price: 8, description: 'Tomato, garlic, oregano; no cheese.', is_vegan: true, variations: size(12), extras: toppings },
        ],
      },
      {
        name: 'Starters', station: 'kitchen', items: [
          { name: 'Garlic Bread', price: 4.5, description: 'Oven-baked with garlic butter.' },
          { name: 'Bruschetta', price: 5.5, description: 'Tomato, basil, olive oil.', is_vegan: true },
        ],
      },
      { name: 'Desserts', items: [{ name: 'Tiramisu', price: 5.5 }] },
      {
        name: 'Drinks', items: [
          { name: 'Still Water', price: 2, is_vegan: true },
          { name: 'Cola', price: 2.5, is_vegan: true },
        ],
      },
    ],
  },
  {
    key: 'cafe',
    title: 'Café',
    description: 'Espresso drinks, tea, pastries and a few light lunches.',
    store_types: ['restaurant'],
    categories: [
      {
        name: 'Coffee', station: 'bar', items: [
          { name: 'Espresso', price: 2.2, is_vegan: true, extras: milk },
          { name: 'Cappuccino', price: 3.2, is_popular: true, variations: size(3.9), extras: milk },
          { name: 'Flat White', price: 3.5, extras: milk },
          { name: 'Latte', price: 3.5, variations: size(4.2), extras: milk },
        ],
      },
      {
        name: 'Tea', station: 'bar', items: [
          { name: 'English Breakfast Tea', price: 2.5, is_vegan: true },
          { name: 'Green Tea', price: 2.5, is_vegan: true },
        ],
      },
      {
        name: 'Pastries', items: [
          { name: 'Butter Croissant', price: 2.8, is_popular: true },
          { name: 'Cinnamon Roll', price: 3.2 },
          { name: 'Banana Bread', price: 3, is_vegan: true },
        ],
      },
      {
        name: 'Lunch', station: 'kitchen', items: [
          { name: 'Avocado Toast', price: 7.5, description: 'Sourdough, avocado, chili flakes.', is_vegan: true },
          { name: 'Chicken Club Sandwich', price: 8.5, is_halal: true },
        ],
      },
    ],
  },
  {
    key: 'burger_bar',
    title: 'Burger bar',
    description: 'Burgers with add-ons, sides, shakes and soft drinks.',
    store_types: ['restaurant'],
    categories: [
      {
        name: 'Burgers', station: 'grill', items: [
          { name: 'Classic Burger', price: 10, description: 'Beef patty, lettuce, tomato, house sauce.', is_popular: true, is_halal: true, variations: [{ name: 'Single', price: null }, { name: 'Double', price: 14 }], extras: [{ name: 'Cheese', price: 1, group: 'Add-ons' }, { name: 'Bacon', price: 1.5, group: 'Add-ons' }] },
          { name: 'Chicken Burger', price: 10, description: 'Crispy chicken, slaw, pickles.', is_halal: true },
          { name: 'Veggie Burger', price: 9.5, description: 'Black bean patty, avocado, vegan mayo.', is_vegan: true },
        ],
      },
      {
        name: 'Sides', station: 'fryer', items: [
          { name: 'Fries', price: 3.5, is_vegan: true, variations: size(4.5) },
          { name: 'Onion Rings', price: 4 },
        ],
      },
      {
        name: 'Drinks', items: [
          { name: 'Vanilla Milkshake', price: 5 },
          { name: 'Lemonade', price: 3, is_vegan: true },
        ],
      },
    ],
  },
  {
    key: 'corner_shop',
    title: 'Corner shop',
    description: 'Everyday groceries: dairy and bread, snacks, drinks and household basics.',
    store_types: ['retail'],
    categories: [
      {
        name: 'Dairy & Bread', items: [
          { name: 'Whole Milk 1 l', price: 1.3 },
          { name: 'Free-Range Eggs (6)', price: 2.4 },
          { name: 'Sliced Bread', price: 1.9 },
          { name: 'Butter 250 g', price: 2.6 },
        ],
      },
      {
        name: 'Snacks', items: [
          { name: 'Salted Crisps', price: 1.2 },
          { name: 'Milk Chocolate Bar', price: 1.1 },
        ],
      },
      {
        name: 'Drinks', items: [
          { name: 'Sparkling Water 1.5 l', price: 0.9 },
          { name: 'Orange Juice 1 l', price: 2.2 },
        ],
      },
      {
        name: 'Household', items: [
          { name: 'Toilet Paper (4 rolls)', price: 3.5 },
          { name: 'Washing-up Liquid', price: 1.8 },
        ],
      },
    ],
  },
]

export const STARTER_KEYS = STARTER_MENUS.map((m) => m.key)

export const starterMenu = (key: string): StarterMenu | undefined => STARTER_MENUS.find((m) => m.key === key)

export const starterItemCount = (m: StarterMenu): number => m.categories.reduce((n, c) => n + c.items.length, 0)
