/**
 * Third-party app scopes (api-v1 §4.10, §5): what an owner can grant an app, and the owner
 * capabilities each scope carries on /api/v1. Pure: no I/O.
 */
import type { Capability } from './capabilities.ts'

export const APP_SCOPES = ['menu:read', 'menu:write', 'orders:read', 'orders:write', 'analytics:read', 'restaurant:read', 'mcp:use'] as const
export type AppScope = (typeof APP_SCOPES)[number]

export const isAppScope = (s: string): s is AppScope => (APP_SCOPES as readonly string[]).includes(s)

/**
 * Scope → owner capability (design: "app tokens on /api/v1 are owner principals"). `restaurant:read`
 * is the store reads; `mcp:use` carries no capability of its own: it only opens the admin MCP server.
 * Never `*`, `read` or `write`: account-wide operations (tokens, subscription, wallet, reseller) stay refused.
 */
const SCOPE_CAPABILITY: Record<AppScope, Capability | null> = {
  'restaurant:read': 'restaurants:read',
  'menu:read': 'menu:read',
  'menu:write': 'menu:write',
  'orders:read': 'orders:read',
  'orders:write': 'orders:write',
  'analytics:read': 'analytics:read',
  'mcp:use': null,
}

export function capabilitiesForScopes(scopes: readonly string[]): Capability[] {
  const out: Capability[] = []
  for (const s of scopes) {
    const c = isAppScope(s) ? SCOPE_CAPABILITY[s] : null
    if (c && !out.includes(c)) out.push(c)
  }
  return out
}

/** Scopes in the canonical order of APP_SCOPES, duplicates dropped (so equal sets compare equal). */
export const normalizeScopes = (scopes: readonly string[]): AppScope[] => APP_SCOPES.filter((s) => scopes.includes(s))

/** What installs agree to (migration 015 `terms`): scopes and price, money in minor units. */
export interface AppTerms {
  scopes: string[]
  pricing: 'free' | 'recurring' | 'usage'
  /** Minor units: per 30-day period (recurring) or per reported unit (usage); 0 when free. */
  price: number
  /** Usage apps: most charged per period, minor units; null for none. */
  cap: number | null
  currency: string
}

/** Does a change from `a` to `b` need review (§9 rule 4: price or scopes)? */
export function termsChanged(a: AppTerms, b: AppTerms): boolean {
  const sa = normalizeScopes(a.scopes).join(' ')
  const sb = normalizeScopes(b.scopes).join(' ')
  return sa !== sb || a.pricing !== b.pricing || a.price !== b.price || a.cap !== b.cap || a.currency !== b.currency
}
