/**
 * Helpers for the staff app, storefront and customer app tests (issue 5). The people fixtures
 * (staff, customers, storefront tokens) are built in ./fixtures.ts, the one fixture builder, and
 * re-exported here for the tests that import them from this module.
 */
export { createCustomer, createStaff, createStorefrontToken, type CustomerFixture, type StaffFixture } from './fixtures.ts'

/** Wait until `cond()` holds (polling), for effects that follow a reply (events, pushes). */
export async function until(cond: () => boolean, timeoutMs = 2000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 10))
  }
}
