/**
 * The plan catalog (docs/billing.md): feature keys an account can hold, the quota kinds a plan
 * limits, and the platform's own plans. Pure data and pure rules; src/storage/plans.ts keeps the
 * `plans` table in step with PLATFORM_PLANS at start-up, src/storage/entitlements.ts answers
 * "may this account do X".
 */

/** Feature keys (api-v1 §6 entitlement.changed `feature_key`). */
export const FEATURES = {
  kds: 'Kitchen display screens and their sockets.',
  analytics: 'Sales analytics (owner, staff and MCP sales_report).',
  delivery: 'Drivers, dispatch and live delivery tracking.',
  webhooks: 'Signed webhook endpoints.',
  crm: 'Customer records: the CRM customer list and detail (REST and MCP).',
  mcp: 'The admin MCP server for AI agents.',
  multi_store: 'More than one store in the account.',
  reservations: 'Table reservations.',
  apps: 'Third-party apps installed with OAuth.',
} as const
export type FeatureKey = keyof typeof FEATURES
export const FEATURE_KEYS = Object.keys(FEATURES) as FeatureKey[]
export const isFeatureKey = (s: string): s is FeatureKey => Object.hasOwn(FEATURES, s)

/** What a plan can limit, counted per account. */
export const QUOTA_KINDS = {
  stores: 'Stores in the account.',
  menu_items: 'Menu items across all the account\'s stores.',
  staff: 'Staff members across all the account\'s stores.',
  drivers: 'Drivers.',
  webhook_endpoints: 'Webhook endpoints.',
  api_tokens: 'Owner API tokens that are neither revoked nor expired.',
} as const
export type QuotaKind = keyof typeof QUOTA_KINDS
export const QUOTA_KIND_KEYS = Object.keys(QUOTA_KINDS) as QuotaKind[]

/** A kind that is absent is unlimited. */
export type Quotas = Partial<Record<QuotaKind, number>>

export interface PlanDefinition {
  key: string
  name: string
  /** Per period, minor units. */
  price: number
  /** What a reseller pays the platform per active customer on this plan per period. */
  wholesale_price: number
  currency: string
  period_days: number
  trial_days: number
  features: FeatureKey[]
  quotas: Quotas
  /** The plan of an account that never chose one. Exactly one platform plan is the default. */
  is_default?: boolean
}

/** The platform's plans. Keys are stable; prices are per 30-day period. */
export const PLATFORM_PLANS: readonly PlanDefinition[] = [
  {
    key: 'free', name: 'Free', price: 0, wholesale_price: 0, currency: 'USD', period_days: 30, trial_days: 0, is_default: true,
    features: ['kds', 'analytics', 'delivery', 'webhooks'],
    quotas: { stores: 1, menu_items: 100, staff: 5, drivers: 3, webhook_endpoints: 2, api_tokens: 5 },
  },
  {
    key: 'growth', name: 'Growth', price: 2900, wholesale_price: 1500, currency: 'USD', period_days: 30, trial_days: 14,
    features: ['kds', 'analytics', 'delivery', 'webhooks', 'crm', 'mcp', 'multi_store', 'reservations'],
    quotas: { stores: 3, menu_items: 1000, staff: 25, drivers: 25, webhook_endpoints: 10, api_tokens: 25 },
  },
  {
    key: 'pro', name: 'Pro', price: 7900, wholesale_price: 4000, currency: 'USD', period_days: 30, trial_days: 14,
    features: [...FEATURE_KEYS],
    quotas: { stores: 20, menu_items: 10_000, staff: 200, drivers: 200, webhook_endpoints: 20, api_tokens: 100 },
  },
]

/** Is one more of `kind` allowed when the account has `count` now? */
export const quotaAllows = (quotas: Quotas, kind: QuotaKind, count: number, adding = 1): boolean => {
  const limit = quotas[kind]
  return limit === undefined || count + adding <= limit
}
