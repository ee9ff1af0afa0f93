/**
 * Push tokens across the three places devices register (drivers, staff, the owner's mobile shell):
 * a token the push service reports gone (FCM UNREGISTERED, Web Push 404/410) is removed from all
 * of them (docs/providers.md "Dead tokens").
 */
import { stmt, type Db } from './db.ts'

/** Delete `token` wherever it is registered; how many registrations went. */
export function forgetPushToken(db: Db, token: string): number {
  return stmt(db, 'DELETE FROM driver_devices WHERE device_token = ?').run(token).changes
    + stmt(db, 'DELETE FROM staff_devices WHERE device_token = ?').run(token).changes
    + stmt(db, 'DELETE FROM shell_push_devices WHERE push_token = ?').run(token).changes
}
