/**
 * Every operation of the server, in one list (ARCHITECTURE "The shape" 1): HTTP bindings,
 * discovery, OpenAPI, the generated tenancy and scope tests, and next the MCP tool lists and
 * billing iterate it. A family adds its list here.
 */
import type { Op } from './op.ts'
import { deliveryFamilyOps } from './delivery-family.ts'
import { menuOpsList } from './menu.ts'
import { menuPhotoOps } from './menu-photos.ts'
import { fitmentOps } from './fitments.ts'
import { menuReadOps } from './menu-read.ts'
import { brandOps } from './brands.ts'
import { orderOps } from './orders.ts'
import { shipmentOps } from './shipments.ts'
import { slotOps } from './slots.ts'
import { storeOps } from './stores.ts'
import { storefrontOps } from './storefront.ts'
import { customerOrderOps } from './customer-orders.ts'
import { storefrontAgentOps } from './storefront-agent.ts'
import { customerAgentOps } from './customer-agent.ts'
import { publicOps } from './public.ts'
import { accountOps } from './account.ts'
import { customerOps } from './customers.ts'
import { couponOps } from './coupons.ts'
import { storefrontTokenOps } from './storefront-tokens.ts'
import { staffOps } from './staff.ts'
import { staffAdminOps } from './staff-admin.ts'
import { pinDeviceOps } from './pin-devices.ts'
import { integrationOps } from './integration.ts'
import { kdsOps } from './kds.ts'
import { webhookOps } from './webhooks.ts'
import { storeSettingsOps } from './store-settings.ts'
import { deliveryZoneOps } from './delivery-zones.ts'
import { dispatchOps } from './dispatch.ts'
import { storeThemeOps } from './store-theme.ts'
import { themeEditorOps } from './theme-preview.ts'
import { catalogOps } from './catalog.ts'
import { resellerOps } from './reseller.ts'
import { accountPlanOps } from './account-plan.ts'
import { subscriptionOps } from './subscription.ts'
import { walletOps } from './wallet.ts'
import { devOps } from './dev.ts'
import { storeAdminOps } from './store-admin.ts'
import { appGroupOps } from './app-group.ts'
import { ownerTokenOps } from './owner-tokens.ts'
import { setupOps } from './setup.ts'
import { analyticsDailyOps } from './analytics-daily.ts'
import { appOps } from './apps.ts'
import { appBillingOps } from './app-billing.ts'
import { appUninstallOps } from './app-uninstall.ts'
import { guestOps } from './guests.ts'
import { paymentOps } from './payments.ts'
import { shiftOps } from './shifts.ts'
import { refundOps } from './refunds.ts'
import { reservationOps } from './reservations.ts'
import { tableOps } from './tables.ts'
import { customerReservationOps } from './customer-reservations.ts'
import { ownerSecurityOps } from './owner-security.ts'
import { ownerSignUpOps } from './owner-signup.ts'
import { websiteCheckout } from './website.ts'
import { decideConsent } from './oauth-consent.ts'

export const ALL_OPS: readonly Op[] = [
  ...deliveryFamilyOps,
  ...staffOps, ...staffAdminOps, ...pinDeviceOps, ...integrationOps, ...kdsOps,
  ...menuOpsList, ...menuPhotoOps, ...menuReadOps, ...brandOps, ...fitmentOps,
  ...orderOps, ...shipmentOps, ...slotOps,
  ...storeOps,
  ...storefrontOps,
  ...customerOrderOps,
  ...storefrontAgentOps, ...customerAgentOps,
  ...publicOps,
  ...accountOps,
  ...customerOps, ...couponOps, ...storefrontTokenOps,
  ...webhookOps,
  ...ownerSecurityOps, ...ownerSignUpOps, websiteCheckout, decideConsent,
  ...storeSettingsOps,
  ...deliveryZoneOps,
  ...dispatchOps,
  ...storeThemeOps,
  ...themeEditorOps,
  ...catalogOps,
  ...resellerOps,
  ...accountPlanOps,
  ...subscriptionOps, ...walletOps,
  ...storeAdminOps,
  ...devOps,
  ...appGroupOps,
  ...ownerTokenOps, ...analyticsDailyOps,
  ...setupOps,
  ...appOps,
  ...appBillingOps, ...appUninstallOps,
  ...guestOps,
  ...paymentOps,
  ...shiftOps, ...refundOps,
  ...tableOps, ...reservationOps, ...customerReservationOps,
]
