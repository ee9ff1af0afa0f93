/**
 * The provider settings (docs/providers.md; README "Configuration"), read from the environment and
 * checked at start: choosing a real provider without what it needs is a configuration error (exit
 * 78, src/startup.ts), never a failure at the first message. Secrets come only from here.
 */
import { readFileSync } from 'node:fs'
import { createPrivateKey } from 'node:crypto'
import * as v from 'valibot'
import { checkUrl } from '../webhooks/ssrf.ts'
import type { RouterConfig } from './router.ts'
import type { GeocoderConfig } from './geocoder.ts'

export type SmsConfig =
  | { kind: 'dev' }
  | { kind: 'twilio'; accountSid: string; authToken: string; from: string | null; messagingServiceSid: string | null; apiBase: string }

export type SmtpTransport = string | { host: string; port: number; secure: boolean; auth?: { user: string; pass: string } }
export type EmailConfig = { kind: 'dev' } | { kind: 'smtp'; transport: SmtpTransport; from: string }

export interface VapidConfig { publicKey: string; privateKey: string; subject: string }
/** The fields of a Google service-account key file that FCM HTTP v1 needs. */
export interface ServiceAccount { client_email: string; private_key: string; private_key_id?: string; token_uri: string }
export interface FcmConfig { projectId: string; account: ServiceAccount; apiBase: string }
export type PushConfig = { kind: 'dev' } | { kind: 'live'; vapid: VapidConfig | null; fcm: FcmConfig | null; allowLoopback: boolean }

export interface ProvidersConfig { sms: SmsConfig; email: EmailConfig; push: PushConfig; timeoutMs: number; router: RouterConfig; geocoder: GeocoderConfig }

const text = v.optional(v.pipe(v.string(), v.trim()))
const httpBase = (fallback: string) => v.pipe(
  v.optional(v.string(), fallback),
  v.check((s) => { try { return ['http:', 'https:'].includes(new URL(s).protocol) } catch { return false } }, (i) => `must be an http(s) URL, got "${String(i.input)}"`),
  v.transform((s) => s.replace(/\/+$/, '')),
)
const switchOf = v.pipe(
  v.optional(v.string(), '0'),
  v.check((s) => ['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'].includes(s.trim().toLowerCase()), (i) => `must be one of 1/0, true/false, yes/no, on/off, got "${String(i.input)}"`),
  v.transform((s) => ['1', 'true', 'yes', 'on'].includes(s.trim().toLowerCase())),
)

const ProviderEnv = v.object({
  SMS_PROVIDER: v.optional(v.picklist(['dev', 'twilio'], 'must be dev or twilio'), 'dev'),
  TWILIO_ACCOUNT_SID: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^AC[0-9a-fA-F]{32}$/, 'must be AC followed by 32 hex digits'))),
  TWILIO_AUTH_TOKEN: text,
  TWILIO_FROM: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^(\+[1-9]\d{1,14}|[A-Za-z0-9 ]{1,11})$/, 'must be an E.164 number (+15551234567) or an alphanumeric sender id (11 characters at most)'))),
  TWILIO_MESSAGING_SERVICE_SID: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^MG[0-9a-fA-F]{32}$/, 'must be MG followed by 32 hex digits'))),
  SMS_API_BASE: httpBase('https://api.twilio.com'),
  EMAIL_PROVIDER: v.optional(v.picklist(['dev', 'smtp'], 'must be dev or smtp'), 'dev'),
  SMTP_URL: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^smtps?:\/\/[^/]+/, 'must be smtp://… or smtps://…'))),
  SMTP_HOST: text,
  SMTP_PORT: v.optional(v.pipe(v.string(), v.regex(/^\d{1,5}$/, 'must be a port number'), v.transform(Number), v.minValue(1), v.maxValue(65_535))),
  SMTP_USER: text,
  SMTP_PASSWORD: v.optional(v.string()),
  SMTP_SECURE: switchOf,
  EMAIL_FROM: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^([^<>]*<[^<>@\s]+@[^<>@\s]+>|[^<>@\s]+@[^<>@\s]+)$/, 'must be an address, or "Name <address>"'))),
  PUSH_PROVIDER: v.optional(v.picklist(['dev', 'live'], 'must be dev or live'), 'dev'),
  VAPID_PUBLIC_KEY: v.optional(v.pipe(v.string(), v.trim(), v.check((s) => b64urlBytes(s) === 65, 'must be the base64url public key of `npx web-push generate-vapid-keys`'))),
  VAPID_PRIVATE_KEY: v.optional(v.pipe(v.string(), v.trim(), v.check((s) => b64urlBytes(s) === 32, 'must be the base64url private key of `npx web-push generate-vapid-keys`'))),
  VAPID_SUBJECT: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^(mailto:\S+@\S+|https:\/\/\S+)$/, 'must be a mailto: address or an https: URL'))),
  FCM_PROJECT_ID: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^[a-z][a-z0-9-]{3,61}[a-z0-9]$/, 'must be a Firebase project id'))),
  FCM_SERVICE_ACCOUNT_JSON: v.optional(v.string()),
  FCM_SERVICE_ACCOUNT_FILE: text,
  FCM_API_BASE: httpBase('https://fcm.googleapis.com'),
  PUSH_ALLOW_LOOPBACK: switchOf,
  // Travel times (docs/dispatch.md "Router").
  ROUTER: v.optional(v.picklist(['straight', 'osrm'], 'must be straight or osrm'), 'straight'),
  OSRM_URL: v.optional(v.pipe(v.string(), v.trim(), v.transform((s) => s.replace(/\/+$/, '')))),
  ROUTER_TIMEOUT_MS: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number), v.minValue(100, 'must be at least 100'), v.maxValue(10_000, 'must be at most 10000')), '1500'),
  ROUTER_ALLOW_LOOPBACK: switchOf,
  // Address search (docs/providers.md "Geocoder").
  GEOCODER: v.optional(v.picklist(['none', 'nominatim'], 'must be none or nominatim'), 'none'),
  GEOCODER_URL: v.optional(v.pipe(v.string(), v.trim(), v.transform((s) => s.replace(/\/+$/, '')))),
  GEOCODER_TIMEOUT_MS: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number), v.minValue(100, 'must be at least 100'), v.maxValue(10_000, 'must be at most 10000')), '2000'),
  GEOCODER_ALLOW_LOOPBACK: switchOf,
  SITE_URL: v.optional(v.string()),
  PROVIDER_TIMEOUT_MS: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number), v.minValue(100, 'must be at least 100'), v.maxValue(60_000, 'must be at most 60000')), '5000'),
})
type Env = v.InferOutput<typeof ProviderEnv>

function b64urlBytes(s: string): number {
  return /^[A-Za-z0-9_-]+$/.test(s) ? Buffer.from(s, 'base64url').length : -1
}

const fail = (msg: string): never => { throw new Error(`invalid configuration: ${msg}`) }

function sms(e: Env): SmsConfig {
  if (e.SMS_PROVIDER === 'dev') return { kind: 'dev' }
  if (!e.TWILIO_ACCOUNT_SID || !e.TWILIO_AUTH_TOKEN || !(e.TWILIO_FROM || e.TWILIO_MESSAGING_SERVICE_SID)) {
    fail('SMS_PROVIDER=twilio needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM or TWILIO_MESSAGING_SERVICE_SID')
  }
  return {
    kind: 'twilio', accountSid: e.TWILIO_ACCOUNT_SID!, authToken: e.TWILIO_AUTH_TOKEN!, apiBase: e.SMS_API_BASE,
    from: e.TWILIO_FROM ?? null, messagingServiceSid: e.TWILIO_MESSAGING_SERVICE_SID ?? null,
  }
}

function email(e: Env): EmailConfig {
  if (e.EMAIL_PROVIDER === 'dev') return { kind: 'dev' }
  if (!e.EMAIL_FROM) fail('EMAIL_PROVIDER=smtp needs EMAIL_FROM')
  if (e.SMTP_URL && e.SMTP_HOST) fail('set SMTP_URL or SMTP_HOST, not both')
  if (e.SMTP_URL) return { kind: 'smtp', transport: e.SMTP_URL, from: e.EMAIL_FROM! }
  if (!e.SMTP_HOST) fail('EMAIL_PROVIDER=smtp needs SMTP_URL or SMTP_HOST')
  if (Boolean(e.SMTP_USER) !== Boolean(e.SMTP_PASSWORD)) fail('SMTP_USER and SMTP_PASSWORD go together')
  const port = e.SMTP_PORT ?? (e.SMTP_SECURE ? 465 : 587)
  return {
    kind: 'smtp', from: e.EMAIL_FROM!,
    transport: { host: e.SMTP_HOST!, port, secure: e.SMTP_SECURE, ...(e.SMTP_USER ? { auth: { user: e.SMTP_USER, pass: e.SMTP_PASSWORD! } } : {}) },
  }
}

/** The service-account key (JSON text or a file), reduced to what the JWT grant needs. */
function serviceAccount(e: Env): ServiceAccount {
  if (e.FCM_SERVICE_ACCOUNT_JSON && e.FCM_SERVICE_ACCOUNT_FILE) fail('set FCM_SERVICE_ACCOUNT_JSON or FCM_SERVICE_ACCOUNT_FILE, not both')
  let raw = e.FCM_SERVICE_ACCOUNT_JSON
  if (!raw && e.FCM_SERVICE_ACCOUNT_FILE) {
    try { raw = readFileSync(e.FCM_SERVICE_ACCOUNT_FILE, 'utf8') } catch (err) { fail(`FCM_SERVICE_ACCOUNT_FILE cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`) }
  }
  if (!raw) return fail('FCM_PROJECT_ID needs FCM_SERVICE_ACCOUNT_JSON or FCM_SERVICE_ACCOUNT_FILE')
  let json: Partial<ServiceAccount>
  // The parser's message could quote the key: only say that it is not JSON.
  try { json = JSON.parse(raw) as Partial<ServiceAccount> } catch { return fail('the FCM service account is not JSON') }
  if (typeof json.client_email !== 'string' || typeof json.private_key !== 'string') fail('the FCM service account needs client_email and private_key')
  try { createPrivateKey(json.private_key!) } catch { fail('the FCM service account private_key is not a PEM private key') }
  const tokenUri = typeof json.token_uri === 'string' ? json.token_uri : 'https://oauth2.googleapis.com/token'
  if (!/^https?:\/\//.test(tokenUri)) fail('the FCM service account token_uri must be an http(s) URL')
  return { client_email: json.client_email!, private_key: json.private_key!, private_key_id: typeof json.private_key_id === 'string' ? json.private_key_id : undefined, token_uri: tokenUri }
}

function push(e: Env): PushConfig {
  if (e.PUSH_PROVIDER === 'dev') return { kind: 'dev' }
  const vapidSet = [e.VAPID_PUBLIC_KEY, e.VAPID_PRIVATE_KEY, e.VAPID_SUBJECT].filter(Boolean).length
  if (vapidSet !== 0 && vapidSet !== 3) fail('VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY and VAPID_SUBJECT go together')
  const vapid = vapidSet === 3 ? { publicKey: e.VAPID_PUBLIC_KEY!, privateKey: e.VAPID_PRIVATE_KEY!, subject: e.VAPID_SUBJECT! } : null
  if ((e.FCM_SERVICE_ACCOUNT_JSON || e.FCM_SERVICE_ACCOUNT_FILE) && !e.FCM_PROJECT_ID) fail('an FCM service account needs FCM_PROJECT_ID')
  const fcm = e.FCM_PROJECT_ID ? { projectId: e.FCM_PROJECT_ID, account: serviceAccount(e), apiBase: e.FCM_API_BASE } : null
  if (!vapid && !fcm) fail('PUSH_PROVIDER=live needs VAPID_* (web push) or FCM_PROJECT_ID with a service account (android, ios), or both')
  return { kind: 'live', vapid, fcm, allowLoopback: e.PUSH_ALLOW_LOOPBACK }
}

/**
 * The URL of an outside service the operator switched on (OSRM_URL, GEOCODER_URL), or null while it
 * is off: required when on, a mistake when off, and held to the webhook SSRF rules
 * (src/webhooks/ssrf.ts): https to a public host; http only to loopback when allowed.
 */
function serviceUrl(on: boolean, url: string | undefined, allowLoopback: boolean, names: { url: string; on: string; off: string }): string | null {
  if (!on) {
    if (url) fail(`${names.url} is set but ${names.off}: set ${names.on} to use it`)
    return null
  }
  if (!url) return fail(`${names.on} needs ${names.url}`)
  const checked = checkUrl(url, allowLoopback)
  if (!checked.ok) fail(`${names.url}: ${checked.reason}`)
  return url
}

function router(e: Env): RouterConfig {
  const url = serviceUrl(e.ROUTER === 'osrm', e.OSRM_URL, e.ROUTER_ALLOW_LOOPBACK, { url: 'OSRM_URL', on: 'ROUTER=osrm', off: 'ROUTER is straight' })
  return url === null ? { kind: 'straight' } : { kind: 'osrm', url, timeoutMs: e.ROUTER_TIMEOUT_MS, allowLoopback: e.ROUTER_ALLOW_LOOPBACK }
}

function geocoder(e: Env): GeocoderConfig {
  const url = serviceUrl(e.GEOCODER === 'nominatim', e.GEOCODER_URL, e.GEOCODER_ALLOW_LOOPBACK, { url: 'GEOCODER_URL', on: 'GEOCODER=nominatim', off: 'GEOCODER is none' })
  if (url === null) return { kind: 'none' }
  // Nominatim's usage policy: a client names itself (and where it runs).
  const userAgent = `dispatch-server (${e.SITE_URL?.trim() || 'self-hosted'})`
  return { kind: 'nominatim', url, timeoutMs: e.GEOCODER_TIMEOUT_MS, allowLoopback: e.GEOCODER_ALLOW_LOOPBACK, userAgent }
}

/** Parse and check the provider variables of `env`; throws `invalid configuration: …` (one line). */
export function providersConfig(env: Record<string, string | undefined>): ProvidersConfig {
  const parsed = v.safeParse(ProviderEnv, env)
  if (!parsed.success) fail(parsed.issues.map((i) => `${v.getDotPath(i)}: ${i.message}`).join('; '))
  const e = parsed.output as Env
  return { sms: sms(e), email: email(e), push: push(e), timeoutMs: e.PROVIDER_TIMEOUT_MS, router: router(e), geocoder: geocoder(e) }
}
