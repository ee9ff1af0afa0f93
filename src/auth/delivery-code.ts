/**
 * The proof-of-delivery code (docs/drivers.md "Proof of delivery"). It must be shown to whoever
 * holds the order's tracking link and to nobody else, so it is derived from the track token
 * (HMAC-SHA256, 4 digits) rather than stored: the tracking capability is the secret.
 */
import { createHmac } from 'node:crypto'
import { POD_CODE_DIGITS } from '../domain/delivery.ts'

export function deliveryCode(trackToken: string): string {
  const mac = createHmac('sha256', trackToken).update('proof-of-delivery/v1').digest()
  return String(mac.readUInt32BE(0) % 10 ** POD_CODE_DIGITS).padStart(POD_CODE_DIGITS, '0')
}
