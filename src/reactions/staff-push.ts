/**
 * Staff push alerts (docs/staff.md "Push"), a reaction to committed events: `order.created` is
 * pushed to the devices of the store's members who work orders or the kitchen.
 */
import type { Services } from '../services.ts'
import type { OutboxEvent } from '../storage/outbox.ts'
import { effectivePermissions, parseOverrides } from '../domain/permissions.ts'
import { createPushTargets } from '../storage/staff.ts'

/** The reaction (wired in src/app.ts with the others). */
export function staffPushAlerts(svc: Services): (e: OutboxEvent) => void {
  const targets = createPushTargets(svc.db)
  return (e) => {
    if (e.event !== 'order.created' || e.store_id === null) return
    for (const d of targets(e.store_id)) {
      const perms = effectivePermissions(d.role, parseOverrides(d.permissions))
      if (!perms.includes('orders') && !perms.includes('kds')) continue
      svc.push.send({
        device_token: d.device_token, platform: d.platform, title: 'New order',
        body: `Order #${String(e.data.order_id)} · ${String(e.data.type ?? '')} · ${String(e.data.total ?? '')}`,
        data: { event: 'order.created', order_id: e.data.order_id, restaurant_id: e.store_id },
      }).catch((err: unknown) => svc.log.warn({ err }, 'staff push failed'))
    }
  }
}
