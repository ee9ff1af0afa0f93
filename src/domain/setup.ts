/**
 * The setup checklist of a new account (issue 34 item 16; docs/dashboard.md "First steps"): what a
 * store needs before it can sell, each step ticked from the account's real data (read by
 * src/storage/setup.ts), never from a flag the page sets. Pure: the facts in, the steps out.
 */

/** What the checklist reads of one store of the account (null: the account has no store yet). */
export interface SetupFacts {
  store: null | {
    id: number
    title: string
    /** Weekly business hours are set (a store without them is taken as always open). */
    hasHours: boolean
    menuItems: number
    /** Active storefront tokens (a storefront or kiosk of the owner's own). */
    storefrontTokens: number
    /** The store's website was chosen or customised (a theme row exists). */
    websiteThemed: boolean
    /** Cash shifts ever opened at the store's tills. */
    tills: number
    /** Payments that succeeded at the store. */
    paymentsTaken: number
  }
  /** Drivers of the account who can deliver for this store (the store's own and the account-wide ones). */
  drivers: number
  dismissedAt: string | null
}

export type SetupStepKey = 'store' | 'hours' | 'menu' | 'channel' | 'driver' | 'payment'
/** The dashboard page where a step is done (`{site_url}/dashboard/{page}`). */
export type SetupPage = 'stores' | 'menu' | 'tokens' | 'drivers' | 'shifts'

export interface SetupStep { key: SetupStepKey; title: string; done: boolean; detail: string; page: SetupPage }
export interface SetupChecklist { store_id: number | null; steps: SetupStep[]; done: number; total: number; complete: boolean; dismissed: boolean; dismissed_at: string | null }

/**
 * The steps, in the order a new owner takes them. `onlinePayments` is the server's payment provider
 * (`PAYMENT_PROVIDER`): anything but `none` takes online payments for every store.
 */
export function setupChecklist(f: SetupFacts, onlinePayments: string): SetupChecklist {
  const s = f.store
  const online = onlinePayments !== 'none'
  const steps: SetupStep[] = [
    { key: 'store', title: 'Create your store', page: 'stores', done: s !== null,
      detail: s ? `${s.title} is set up.` : 'Name it, pick its type, currency and time zone.' },
    { key: 'hours', title: 'Set your opening hours', page: 'stores', done: !!s?.hasHours,
      detail: s?.hasHours ? 'Orders outside them are refused.' : 'Edit the store and fill in the weekly hours, so customers cannot order while you are closed.' },
    { key: 'menu', title: 'Add your menu', page: 'menu', done: (s?.menuItems ?? 0) > 0,
      detail: s && s.menuItems > 0 ? `${s.menuItems} item${s.menuItems === 1 ? '' : 's'} on the menu.` : 'Add a category and the items you sell.' },
    { key: 'channel', title: 'Open a storefront or your website', page: 'tokens', done: !!s && (s.storefrontTokens > 0 || s.websiteThemed),
      detail: s && s.storefrontTokens > 0 ? 'A storefront token is active.' : s?.websiteThemed ? 'Your website is set up.' : 'Create a storefront token for your own site or kiosk, or share your store\'s website.' },
    { key: 'driver', title: 'Add a driver', page: 'drivers', done: f.drivers > 0,
      detail: f.drivers > 0 ? `${f.drivers} driver${f.drivers === 1 ? '' : 's'} can deliver.` : 'Delivery orders need someone to take them.' },
    { key: 'payment', title: 'Set up a payment method', page: 'shifts', done: online || (!!s && (s.tills > 0 || s.paymentsTaken > 0)),
      detail: online ? `Online payments are on (${onlinePayments}).` : s && (s.tills > 0 || s.paymentsTaken > 0) ? 'Your till takes cash and card.' : 'Open a cash drawer to take cash and card at the till, or have online payments set up on the server (PAYMENT_PROVIDER).' },
  ]
  const done = steps.filter((x) => x.done).length
  return { store_id: s?.id ?? null, steps, done, total: steps.length, complete: done === steps.length, dismissed: f.dismissedAt !== null, dismissed_at: f.dismissedAt }
}
