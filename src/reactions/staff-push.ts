/**
 * Staff push alerts (docs/staff.md "Push"), a reaction to committed events: `order.created` is
 * pushed to the devices of the store's members who work orders or the kitchen.
 */
import type { Services } from '../services.ts'
import type { OutboxEvent } from '../storage/outbox.ts'
import { effectivePermissions, parseOverrides } from '../domain/permissions.ts'
import { createPushTargets, type PushTarget } from '../storage/staff.ts'
import { EpochCache } from '../storage/auth-epoch.ts'

/** The reaction (wired in src/app.ts with the others). */
export function staffPushAlerts(svc: Services): (e: OutboxEvent) => void {
  const read = createPushTargets(svc.db)
  // Per store, the devices to alert, kept under the auth epoch (migrations 025, 027: any change to
  // devices or to a member's store, role or permissions counts, from any connection). The epoch is
  // read once for all the orders of a batch (they are published in one run after their commit)
  // instead of a read of the targets per order.
  const cache = new EpochCache<number, PushTarget[]>(svc.db)
  const alerted = (storeId: number): PushTarget[] => read(storeId).filter((d) => {
    const perms = effectivePermissions(d.role, parseOverrides(d.permissions))
    return perms.includes('orders') || perms.includes('kds')
  })
  return (e) => {
    if (e.event !== 'order.created' || e.store_id === null) return
    const storeId = e.store_id
    for (const d of cache.get(storeId, () => alerted(storeId))!) {
      svc.push.send({
        device_token: d.device_token, platform: d.platform, title: 'New order',
        body: `Order #${String(e.data.order_id)} · ${String(e.data.type ?? '')} · ${String(e.data.total ?? '')}`,
        data: { event: 'order.created', order_id: e.data.order_id, restaurant_id: e.store_id },
      }).catch((err: unknown) => svc.log.warn({ err }, 'staff push failed'))
    }
  }
}
