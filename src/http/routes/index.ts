/** The route table: every HTTP route of the server, in one list. */
import { appBillingRoutes } from './app-billing.ts'
import { appEmbedRoutes } from './app-embed.ts'
import { appRoutes } from './apps.ts'
import { oauthRoutes } from './oauth.ts'
import type { Route } from '../route.ts'
import { discoveryRoutes } from './discovery.ts'
import { readyzRoutes } from './readyz.ts'
import { meRoutes } from './me.ts'
import { restaurantRoutes } from './restaurants.ts'
import { mediaRoutes, menuRoutes } from './menu.ts'
import { brandRoutes } from './brands.ts'
import { fitmentRoutes } from './fitments.ts'
import { orderRoutes } from './orders.ts'
import { shipmentRoutes } from './shipments.ts'
import { analyticsRoutes } from './analytics.ts'
import { publicRoutes } from './public.ts'
import { pageRoutes } from './pages.ts'
import { driverRoutes } from './drivers.ts'
import { deliveryRoutes } from './deliveries.ts'
import { driverAppRoutes } from './driver-app.ts'
import { driverAccountRoutes } from './driver-account.ts'
import { trackPageRoutes } from './track-page.ts'
import { websiteRoutes } from './website.ts'
import { staffAuthRoutes } from './staff-auth.ts'
import { pinDeviceRoutes } from './pin-devices.ts'
import { staffRoutes } from './staff.ts'
import { staffKdsRoutes } from './staff-kds.ts'
import { staffPushRoutes } from './staff-push.ts'
import { staffIntegrationRoutes } from './staff-integration.ts'
import { couponRoutes } from './coupons.ts'
import { storefrontRoutes } from './storefront.ts'
import { customerAuthRoutes } from './customer-auth.ts'
import { customerBalanceRoutes, customerRoutes } from './customer.ts'
import { customerOrderRoutes } from './customer-orders.ts'
import { storefrontAgentRoutes } from './storefront-agent.ts'
import { customerAgentRoutes } from './customer-agent.ts'
import { staffAdminRoutes } from './staff-admin.ts'
import { storefrontTokenRoutes } from './storefront-tokens.ts'
import { webhookRoutes } from './webhooks.ts'
import { storeSettingsRoutes } from './store-settings.ts'
import { storeThemeRoutes } from './store-theme.ts'
import { catalogRoutes } from './catalog.ts'
import { resellerRoutes } from './reseller.ts'
import { accountPlanRoutes } from './account-plan.ts'
import { billingRoutes } from './billing.ts'
import { devRoutes } from './dev.ts'
import { ownerAuthRoutes } from './owner-auth.ts'
import { appGroupRoutes } from './app-group.ts'
import { ownerTokenRoutes } from './owner-tokens.ts'
import { setupRoutes } from './setup.ts'
import { analyticsDailyRoutes } from './analytics-daily.ts'
import { dashboardRoutes } from './dashboard.ts'
import { guestRoutes } from './guests.ts'
import { reservationRoutes } from './reservations.ts'
import { paymentRoutes } from './payments.ts'
import { shiftRoutes } from './shifts.ts'
import { refundRoutes } from './refunds.ts'

/** `appGroup: false` (APP_GROUP=0) leaves the app group out: 404, and absent from discovery and OpenAPI. */
export function allRoutes(opts: { appGroup?: boolean } = {}): Route[] {
  const routes: Route[] = []
  routes.push(
    ...(discoveryRoutes(() => routes) as Route[]),
    ...(readyzRoutes as Route[]),
    ...(meRoutes as Route[]),
    ...(restaurantRoutes as Route[]),
    ...(menuRoutes as Route[]),
    ...(mediaRoutes as Route[]),
    ...(brandRoutes as Route[]),
    ...(fitmentRoutes as Route[]),
    ...(orderRoutes as Route[]),
    ...(analyticsRoutes as Route[]),
    ...(publicRoutes as Route[]),
    ...(pageRoutes(() => routes) as Route[]),
    ...(driverRoutes as Route[]),
    ...(deliveryRoutes as Route[]),
    ...(driverAppRoutes as Route[]),
    ...(driverAccountRoutes as Route[]),
    ...(trackPageRoutes as Route[]),
    ...websiteRoutes,
    // Staff app, kitchen display, storefront, coupons, customer app (issue 5).
    ...(staffAuthRoutes as Route[]),
    ...(pinDeviceRoutes as Route[]),
    ...(staffRoutes as Route[]),
    ...(shipmentRoutes as Route[]),
    ...(staffKdsRoutes as Route[]),
    ...(staffPushRoutes as Route[]),
    ...(staffIntegrationRoutes as Route[]),
    ...(couponRoutes as Route[]),
    ...(storefrontRoutes as Route[]),
    ...(customerAuthRoutes as Route[]),
    ...(customerRoutes as Route[]),
    ...(customerOrderRoutes as Route[]),
    ...(storefrontAgentRoutes as Route[]),
    ...(customerAgentRoutes as Route[]),
    ...(customerBalanceRoutes as Route[]),
    ...(staffAdminRoutes as Route[]),
    ...(storefrontTokenRoutes as Route[]),
    // Webhook endpoints and the dashboard actions (issue 4).
    ...(webhookRoutes as Route[]),
    ...(storeSettingsRoutes as Route[]),
    ...(storeThemeRoutes as Route[]),
    ...(catalogRoutes as Route[]),
    // The reseller area (issue 13, api-v1 §4.8).
    ...(resellerRoutes as Route[]),
    // Plans, entitlements and store creation (issue 13).
    ...(accountPlanRoutes as Route[]),
    // The account's subscription and wallet (issue 13).
    ...(billingRoutes as Route[]),
    // Owner API tokens and the dashboard (issue 14).
    ...(ownerTokenRoutes as Route[]),
    // The dashboard's setup checklist (issue 34 item 16).
    ...(setupRoutes as Route[]),
    ...(analyticsDailyRoutes as Route[]),
    ...(dashboardRoutes as Route[]),
    // Guests and segments (issue 17 item 5).
    ...(guestRoutes as Route[]),
    ...(reservationRoutes as Route[]),
    ...(paymentRoutes as Route[]),
    // Owner sign-in, sign-up and the dashboard's session (issue 14).
    ...(ownerAuthRoutes as Route[]),
    // Third-party apps: usage billing, installations, uninstall (issue 16).
    ...(appBillingRoutes as Route[]),
    ...(appEmbedRoutes as Route[]),
    // Third-party apps: developers, review, marketplace, OAuth (issue 16, docs/apps.md).
    ...(appRoutes as Route[]),
    ...(oauthRoutes as Route[]),
    // Cash shifts (issue 17 item 3).
    ...(shiftRoutes as Route[]),
    // Refunds (issue 17 item 2).
    ...(refundRoutes as Route[]),
    ...(devRoutes(() => routes) as Route[]),
  )
  // The owner's mobile shell (api-v1 §4.9, docs/app-shell.md), unless the deployment switched it off.
  if (opts.appGroup ?? true) routes.push(...(appGroupRoutes as Route[]))
  return routes
}
