/**
 * App billing and installations (api-v1 §4.10; docs/apps.md "Billing", "Uninstall and webhooks"):
 * bindings of src/ops/apps/app-billing.ts and src/ops/apps/app-uninstall.ts. The usage report is a site route
 * (`{site_url}/api/app/usage`) that takes HTML form fields (api-v1 §4.10), decoded to the same input.
 */
import { bind } from '../bind.ts'
import { parseFormBody } from '../body.ts'
import { appEarningsOp, reportUsage } from '../../ops/apps/app-billing.ts'
import { listInstallations, uninstallApp } from '../../ops/apps/app-uninstall.ts'

const form = (body: Buffer): unknown => Object.fromEntries(parseFormBody(body))

export const appBillingRoutes = [
  bind(reportUsage, { method: 'POST', path: '/api/app/usage', site: true, auth: 'owner', decoders: { 'application/x-www-form-urlencoded': form } }),
  bind(appEarningsOp, { method: 'GET', path: '/developer/apps/{id}/earnings', auth: 'owner', ids: { app: 'id' } }),
  bind(listInstallations, { method: 'GET', path: '/apps/installations', auth: 'owner' }),
  bind(uninstallApp, { method: 'DELETE', path: '/apps/installations/{id}', auth: 'owner', params: { id: 'id' } }),
]
