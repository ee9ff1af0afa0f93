/**
 * Staff push devices (api-v1 §4.7 "push"; docs/staff.md "Push"): a device token belongs to one
 * staff member at a time (registering it again moves it). New orders are pushed to the devices of
 * the store's members who work orders or the kitchen.
 */
import * as v from 'valibot'
import { route } from '../route.ts'
import type { Services } from '../../services.ts'
import { nowIso } from '../../storage/db.ts'
import { effectivePermissions, parseOverrides } from '../../domain/permissions.ts'

const tag = 'Staff'
const DeviceToken = v.pipe(v.string(), v.trim(), v.minLength(8), v.maxLength(4096))
const RegisterBody = v.object({ device_token: DeviceToken, platform: v.picklist(['ios', 'android', 'web']) })
const UnregisterBody = v.object({ device_token: DeviceToken })

export const staffPushRoutes = [
  route({
    method: 'POST', path: '/staff/push/register-device', tag, auth: 'staff', body: RegisterBody, summary: 'Receive push alerts (new orders) on this device',
    description: 'Body `{device_token, platform: ios|android|web}`. Registering a token again (also from another member) moves it to the caller.',
    response: { type: 'object', required: ['registered'], properties: { registered: { type: 'boolean' }, device_token: { type: 'string' }, platform: { type: 'string' } } },
    handler: async ({ svc, principal, body }) => {
      const now = nowIso()
      await svc.committer.write((db) => db.prepare(`INSERT INTO staff_devices (staff_id, device_token, platform, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (device_token) DO UPDATE SET staff_id = excluded.staff_id, platform = excluded.platform, updated_at = excluded.updated_at`)
        .run(principal.staffId, body.device_token, body.platform, now, now))
      return { registered: true, device_token: body.device_token, platform: body.platform }
    },
  }),
  route({
    method: 'POST', path: '/staff/push/unregister-device', tag, auth: 'staff', body: UnregisterBody, summary: 'Stop push alerts on this device',
    description: '`unregistered` is false when the token was not registered to the caller (someone else\'s token is never touched).',
    response: { type: 'object', required: ['unregistered'], properties: { unregistered: { type: 'boolean' } } },
    handler: async ({ svc, principal, body }) => {
      const r = await svc.committer.write((db) => db.prepare('DELETE FROM staff_devices WHERE device_token = ? AND staff_id = ?').run(body.device_token, principal.staffId))
      return { unregistered: r.changes > 0 }
    },
  }),
]

/** Push `order.created` to the store's members with `orders` or `kds`; returns the unsubscribe. */
export function staffPushAlerts(svc: Services): () => void {
  const devices = svc.db.prepare<[number], { device_token: string; platform: string; role: string; permissions: string | null }>(
    'SELECT d.device_token, d.platform, s.role, s.permissions FROM staff_devices d JOIN staff s ON s.id = d.staff_id WHERE s.store_id = ?',
  )
  return svc.events.subscribe((e) => {
    if (e.event !== 'order.created' || e.store_id === null) return
    for (const d of devices.all(e.store_id)) {
      const perms = effectivePermissions(d.role, parseOverrides(d.permissions))
      if (!perms.includes('orders') && !perms.includes('kds')) continue
      svc.push.send({
        device_token: d.device_token, platform: d.platform, title: 'New order',
        body: `Order #${String(e.data.order_id)} · ${String(e.data.type ?? '')} · ${String(e.data.total ?? '')}`,
        data: { event: 'order.created', order_id: e.data.order_id, restaurant_id: e.store_id },
      }).catch((err: unknown) => svc.log.warn({ err }, 'staff push failed'))
    }
  })
}
