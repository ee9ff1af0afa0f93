/**
 * A browser's push subscription as this server stores it (docs/providers.md "Registering a
 * browser"): the device token of platform `web` is the JSON of the browser's PushSubscription,
 * `{"endpoint": "https://…", "keys": {"p256dh": "…", "auth": "…"}}` (W3C Push API;
 * `JSON.stringify(await registration.pushManager.subscribe(…))`).
 */
export interface WebSubscription { endpoint: string; keys: { p256dh: string; auth: string } }

const B64URL = /^[A-Za-z0-9_-]+={0,2}$/

/** The subscription in `token`, or null when it is not one (keys of the sizes RFC 8291 uses). */
export function parseWebSubscription(token: string): WebSubscription | null {
  let j: { endpoint?: unknown; keys?: { p256dh?: unknown; auth?: unknown } }
  try { j = JSON.parse(token) as typeof j } catch { return null }
  if (!j || typeof j !== 'object' || typeof j.endpoint !== 'string' || !j.keys || typeof j.keys !== 'object') return null
  const { p256dh, auth } = j.keys
  if (typeof p256dh !== 'string' || typeof auth !== 'string' || !B64URL.test(p256dh) || !B64URL.test(auth)) return null
  if (Buffer.from(p256dh, 'base64url').length !== 65 || Buffer.from(auth, 'base64url').length !== 16) return null
  let url: URL
  try { url = new URL(j.endpoint) } catch { return null }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null
  return { endpoint: j.endpoint, keys: { p256dh, auth } }
}

/** The message for a `device_token` that is not a subscription (the register routes' validation). */
export const WEB_TOKEN_HINT = 'For platform web, send the browser\'s PushSubscription as JSON: {"endpoint", "keys": {"p256dh", "auth"}}.'

/** For the register routes' schemas: a `web` device's token must be a subscription (valibot `forward` + `partialCheck`). */
export const webTokenIsSubscription = (i: { device_token: string; platform: string }): boolean =>
  i.platform !== 'web' || parseWebSubscription(i.device_token) !== null
