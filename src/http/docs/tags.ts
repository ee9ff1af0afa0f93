/** What each tag of the OpenAPI document groups, with the guide under docs/ that explains it (issue 20 item 7). */
const TAGS: Record<string, [string, string?]> = {
  Account: ['The owner account: plans, entitlements, stores it may create, its API tokens.', 'billing'],
  Analytics: ['Order and revenue figures of a store (api-v1 §2.6).'],
  'App group': ['The owner\'s mobile shell app (api-v1 §4.9): device sign-in and the hand-off into the dashboard.', 'app-shell'],
  Apps: ['Third-party apps: developers, review, marketplace, installations, usage billing (api-v1 §4.10).', 'apps'],
  Billing: ['The account\'s subscription, wallet and invoices.', 'billing'],
  Catalog: ['The public catalog across stores: search stores and items.', 'mcp-catalog'],
  Coupons: ['Discount codes of a store, applied by the store when an order names one.', 'orders'],
  'Customer app': ['The customer app (api-v1 §4.5): sign-in, profile, addresses, orders, balances.', 'customers'],
  Customers: ['The store\'s customer records (CRM), store credit and gift cards.', 'customers'],
  Dashboard: ['The owner\'s web dashboard pages (web session; site root).', 'dashboard'],
  Deliveries: ['Delivery orders of a store: assigning drivers, offers, delivery status, proof of delivery.', 'drivers'],
  Developers: ['Developer helpers: platform overview, docs search, webhook events, theme tools.', 'mcp-dev'],
  Discovery: ['The index of the API, this document, the docs and health.'],
  'Driver app': ['The driver app (api-v1 §4.6): shift, live location, offers, deliveries, earnings.', 'drivers'],
  Drivers: ['The owner\'s drivers: create, update, rotate tokens.', 'drivers'],
  'Kitchen display': ['Kitchen screens (KDS): tickets per station, bump and recall.', 'kds'],
  Menu: ['Menu categories, items, variants and sold-out toggles (api-v1 §2.3).', 'stores'],
  OAuth: ['OAuth 2.0 authorization code flow for third-party apps (site root).', 'apps'],
  Orders: ['Orders: create (priced by the server, idempotent), list, read, kitchen status (api-v1 §2.4).', 'orders'],
  'Owner sign-in': ['Owner sign-up, sign-in, password reset and two-factor sign-in (site root).', 'dashboard'],
  Public: ['No credential: public menu, tracking by token.', 'realtime'],
  Reseller: ['Resellers acting for the accounts they manage (api-v1 §4.8).', 'billing'],
  Restaurants: ['Stores (restaurants and other store types): list, read, settings, theme, staff and tokens (api-v1 §2.2).', 'stores'],
  Staff: ['The staff app (api-v1 §4.7) and the owner\'s management of staff members.', 'staff'],
  'Store website': ['The store\'s own website on its theme (site root): pages, cart and checkout forms.', 'website'],
  Storefront: ['The storefront API (api-v1 §4.3): a per-store token for menus and orders from a store\'s own site or kiosk.', 'storefront'],
  Webhooks: ['Webhook endpoints and their deliveries; the events are listed under `webhooks` (api-v1 §6).', 'webhooks'],
}

/** The tag objects for `tags`, sorted; a tag nobody described yet still gets a line. */
export function tagObjects(names: Iterable<string>, guideUrl: (name: string) => string): Array<Record<string, unknown>> {
  return [...new Set(names)].sort().map((name) => {
    const [description, guide] = TAGS[name] ?? [`Operations tagged ${name}.`]
    return { name, description, ...(guide ? { externalDocs: { description: `Guide: docs/${guide}.md`, url: guideUrl(guide) } } : {}) }
  })
}
