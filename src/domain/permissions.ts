/**
 * Staff roles and permissions (api-v1 §2.7 "Staff", §4.7): pure. A member's effective set is the
 * role's defaults plus per-staff grants minus per-staff revokes (docs/staff.md "Permissions").
 */

export const STAFF_PERMISSIONS = ['orders', 'menu_edit', 'coupons', 'analytics', 'kds', 'customers'] as const
export type StaffPermission = (typeof STAFF_PERMISSIONS)[number]

export const STAFF_ROLES = ['manager', 'cashier', 'kitchen', 'waiter'] as const
export type StaffRole = (typeof STAFF_ROLES)[number]

/** Defaults per role; the spec names the roles and permissions but not the mapping, so we chose it. */
export const ROLE_DEFAULTS: Readonly<Record<StaffRole, readonly StaffPermission[]>> = {
  manager: STAFF_PERMISSIONS,
  cashier: ['orders', 'coupons', 'customers'],
  kitchen: ['kds'],
  waiter: ['orders', 'kds'],
}

export interface PermissionOverrides { grant?: readonly string[]; revoke?: readonly string[] }

export const isPermission = (p: unknown): p is StaffPermission => typeof p === 'string' && (STAFF_PERMISSIONS as readonly string[]).includes(p)
export const isRole = (r: unknown): r is StaffRole => typeof r === 'string' && (STAFF_ROLES as readonly string[]).includes(r)

/** (defaults ∪ grant) − revoke, in catalog order; unknown names in overrides are ignored. */
export function effectivePermissions(role: string, overrides: PermissionOverrides | null | undefined): StaffPermission[] {
  const set = new Set<StaffPermission>(isRole(role) ? ROLE_DEFAULTS[role] : [])
  for (const p of overrides?.grant ?? []) if (isPermission(p)) set.add(p)
  for (const p of overrides?.revoke ?? []) if (isPermission(p)) set.delete(p)
  return STAFF_PERMISSIONS.filter((p) => set.has(p))
}

/** Parse the `staff.permissions` column (JSON `{grant, revoke}` or NULL); garbage counts as none. */
export function parseOverrides(json: string | null): PermissionOverrides {
  if (!json) return {}
  try {
    const o = JSON.parse(json) as unknown
    if (!o || typeof o !== 'object') return {}
    const { grant, revoke } = o as Record<string, unknown>
    return { grant: Array.isArray(grant) ? grant.filter(isPermission) : [], revoke: Array.isArray(revoke) ? revoke.filter(isPermission) : [] }
  } catch {
    return {}
  }
}
