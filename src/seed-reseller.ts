/**
 * `dispatch seed --reseller` (docs/billing.md "Resellers", issue 13 item 6): a reseller account with
 * a plan of its own (on the Growth platform plan) and two customer accounts, each on that paid plan
 * with a store and a funded wallet. Every token is an owner token with `*`, shown once here.
 * The printed shape is a contract: exactly {reseller: {id, token}, customers: [{id, token, store_id}]}.
 */
import { randomBytes } from 'node:crypto'
import type { Db } from './storage/db.ts'
import { nowIso } from './storage/db.ts'
import { createOwnerToken } from './seed.ts'
import { planByKey } from './storage/plans.ts'
import { createStore } from './storage/accounts.ts'
import { credit } from './storage/wallet.ts'
import { grantReseller, insertAccount, insertResellerPlan, startCustomerPlan } from './storage/reseller.ts'

export interface ResellerSeed {
  reseller: { id: number; token: string }
  customers: Array<{ id: number; token: string; store_id: number }>
}

/** The retail price of the seeded plan (minor units) and what each customer's wallet starts with. */
export const SEED_PLAN_PRICE = 3900
export const SEED_WALLET = 10_000

/** Make an account a reseller (CLI `dispatch account create --reseller`, `dispatch reseller grant`). */
export { grantReseller }

export function seedReseller(db: Db): ResellerSeed {
  const suffix = randomBytes(3).toString('hex')
  return db.transaction((): ResellerSeed => {
    const now = nowIso()
    const resellerId = insertAccount(db, { name: `Demo Reseller ${suffix}`, email: `reseller+${suffix}@demo.dispatch.local` }, now)
    grantReseller(db, resellerId, now)
    const reseller = { id: resellerId, token: createOwnerToken(db, resellerId, ['*'], null, 'seed').token }
    const base = planByKey(db, 'growth')
    if (!base) throw new Error('platform plan "growth" is missing: syncPlatformPlans runs first')
    const plan = insertResellerPlan(db, resellerId, {
      key: `r${resellerId}-growth-${suffix}`, name: 'Reseller Growth', basePlanId: base.id, price: SEED_PLAN_PRICE, currency: base.currency,
      periodDays: base.period_days, trialDays: 0, features: base.features, quotas: base.quotas,
    }, now)
    const customers = [1, 2].map((n) => {
      const id = insertAccount(db, { name: `Reseller Customer ${n} ${suffix}`, email: `customer${n}+${suffix}@demo.dispatch.local`, resellerId }, now)
      startCustomerPlan(db, id, plan.key, now)
      const store = createStore(db, id, { title: `Reseller Bistro ${n} ${suffix}`, city: 'Springfield' })
      credit(db, id, SEED_WALLET, 'top_up', 'seed', `reseller:${resellerId}`)
      return { id, token: createOwnerToken(db, id, ['*'], null, 'seed').token, store_id: store.id }
    })
    return { reseller, customers }
  }).immediate()
}
