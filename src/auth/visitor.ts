/**
 * A visitor of a store's own website (`{site_url}/s/{slug}`, docs/website.md; issue 33 item 1): no
 * token, one store. The website's guest checkout runs the storefront order operation as this
 * principal, which the operation's access declaration names (`visitor: true`) and the policy
 * resolves (src/auth/policy.ts `admitVisitor`, `resolveScope`), instead of a storefront principal
 * made up for the occasion. A suspended account's website admits no visitor.
 */
export interface VisitorPrincipal {
  kind: 'visitor'
  storeId: number
  ownerId: number
}
