/**
 * Every operation of the server, in one list (ARCHITECTURE "The shape" 1): HTTP bindings,
 * discovery, OpenAPI, the generated tenancy and scope tests, and next the MCP tool lists and
 * billing iterate it. A family adds its list here.
 */
import type { Op } from './op.ts'
import { deliveryFamilyOps } from './delivery/delivery-family.ts'
import { menuOpsList } from './menu/menu.ts'
import { menuPhotoOps } from './menu/menu-photos.ts'
import { fitmentOps } from './menu/fitments.ts'
import { menuReadOps } from './menu/menu-read.ts'
import { brandOps } from './menu/brands.ts'
import { orderOps } from './orders/orders.ts'
import { shipmentOps } from './orders/shipments.ts'
import { slotOps } from './orders/slots.ts'
import { storeOps } from './stores/stores.ts'
import { storefrontOps } from './web/storefront.ts'
import { customerOrderOps } from './orders/customer-orders.ts'
import { storefrontAgentOps } from './web/storefront-agent.ts'
import { customerAgentOps } from './customers/customer-agent.ts'
import { publicOps } from './web/public.ts'
import { accountOps } from './accounts/account.ts'
import { customerOps } from './customers/customers.ts'
import { couponOps } from './money/coupons.ts'
import { storefrontTokenOps } from './web/storefront-tokens.ts'
import { staffOps } from './stores/staff.ts'
import { staffAdminOps } from './stores/staff-admin.ts'
import { pinDeviceOps } from './stores/pin-devices.ts'
import { integrationOps } from './orders/integration.ts'
import { kdsOps } from './orders/kds.ts'
import { webhookOps } from './apps/webhooks.ts'
import { storeSettingsOps } from './stores/store-settings.ts'
import { deliveryZoneOps } from './delivery/delivery-zones.ts'
import { dispatchOps } from './delivery/dispatch.ts'
import { storeThemeOps } from './web/store-theme.ts'
import { themeEditorOps } from './web/theme-preview.ts'
import { catalogOps } from './web/catalog.ts'
import { resellerOps } from './accounts/reseller.ts'
import { accountPlanOps } from './accounts/account-plan.ts'
import { subscriptionOps } from './money/subscription.ts'
import { walletOps } from './money/wallet.ts'
import { devOps } from './web/dev.ts'
import { storeAdminOps } from './stores/store-admin.ts'
import { appGroupOps } from './apps/app-group.ts'
import { ownerTokenOps } from './accounts/owner-tokens.ts'
import { setupOps } from './accounts/setup.ts'
import { analyticsDailyOps } from './orders/analytics-daily.ts'
import { appOps } from './apps/apps.ts'
import { appBillingOps } from './apps/app-billing.ts'
import { appUninstallOps } from './apps/app-uninstall.ts'
import { guestOps } from './stores/guests.ts'
import { paymentOps } from './money/payments.ts'
import { shiftOps } from './money/shifts.ts'
import { refundOps } from './money/refunds.ts'
import { reservationOps } from './stores/reservations.ts'
import { tableOps } from './stores/tables.ts'
import { customerReservationOps } from './customers/customer-reservations.ts'
import { ownerSecurityOps } from './accounts/owner-security.ts'
import { ownerSignUpOps } from './accounts/owner-signup.ts'
import { changeCart, websiteCheckout } from './web/website.ts'
import { decideConsent } from './apps/oauth-consent.ts'

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
  ...ownerSecurityOps, ...ownerSignUpOps, websiteCheckout, changeCart, decideConsent,
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
