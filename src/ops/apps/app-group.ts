/**
 * The app group (api-v1 §4.9; docs/app-shell.md): the owner's mobile shell app, which wraps the
 * dashboard in a web view (the Hotwire Native pattern). It signs in with the owner's email and
 * password and holds a shell token per device; it reads who it is and how to behave, registers for
 * pushes, and opens the dashboard through a one-time handoff nonce that becomes a web session.
 */
import * as v from 'valibot'
import { defineOp, type OpCtx } from '../op.ts'
import { RevokedSchema } from '../schemas/common.ts'
import { ApiError, notFound } from '../../errors.ts'
import type { Services } from '../../services.ts'
import { nowIso } from '../../storage/db.ts'
import { newToken, sha256Hex } from '../../auth/tokens.ts'
import { ownerById } from '../../storage/owners.ts'
import { accountPlan, hasFeature } from '../../storage/entitlements.ts'
import { FEATURE_KEYS } from '../../domain/plans.ts'
import {
  claimHandoff, handoffSessionsOf, insertHandoff, insertShellToken, registerShellPush, revokeShellToken, setHandoffSession,
  pushDevicesOfToken, shellTokenById, unregisterShellPush,
} from '../../storage/app-group.ts'
import { checkOwnerPassword } from '../accounts/owner-auth.ts'
import { endOwnerSession, startOwnerSession } from '../accounts/owner-sessions.ts'

const tag = 'App group'

/** A shell token lives 90 days; the shell signs in again after that (docs/app-shell.md "Tokens"). */
export const SHELL_TOKEN_DAYS = 90
/** A handoff nonce is good for one use within 60 seconds (issue 14 item 4). */
export const HANDOFF_SECONDS = 60
/** Shells older than this are told to update (`GET /app/config` `update_required`). */
export const MIN_SHELL_VERSION = { ios: '1.0.0', android: '1.0.0' } as const
/** Where the shell's web view starts: the dashboard's home. */
const DASHBOARD_PATH = '/dashboard'

type ShellPrincipal = Extract<NonNullable<OpCtx['principal']>, { kind: 'shell' }>
/** The shell calling an app-group operation (identity only from its token). */
function shellOf(ctx: OpCtx): ShellPrincipal {
  if (ctx.principal?.kind !== 'shell') throw new ApiError('internal_error', 'Operation needs a shell principal.')
  return ctx.principal
}

// ---- schemas --------------------------------------------------------------------------------------

const Platform = v.picklist(['ios', 'android'])
const Text = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max))
/** The installation: its stable id, platform and shell version. A bare string is taken as the id. */
const DeviceInput = v.union([
  v.object({ id: Text(120), platform: Platform, name: v.optional(Text(80)), app_version: v.optional(v.pipe(v.string(), v.regex(/^\d{1,4}(\.\d{1,4}){0,2}$/, 'A version is like 1.4.2.'))) }),
  Text(120),
])
const LoginInput = v.object({
  email: v.pipe(v.string(), v.trim(), v.email(), v.maxLength(254)),
  password: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  device: DeviceInput,
  /** The current TOTP code when the account has two-factor sign-in on. */
  otp: v.optional(v.pipe(v.string(), v.regex(/^\d{6}$/, 'A TOTP code is 6 digits.'))),
})
const PushToken = v.pipe(v.string(), v.trim(), v.minLength(8), v.maxLength(4096))

const OwnerSchema = { type: 'object', required: ['id', 'name', 'email'], properties: { id: { type: 'integer' }, name: { type: 'string' }, email: { type: 'string' } } }
const DeviceSchema = {
  type: 'object', required: ['id', 'platform'],
  properties: { id: { type: 'string' }, name: { type: 'string' }, platform: { type: 'string' }, app_version: { type: ['string', 'null'] } },
}
const LoginSchema = {
  type: 'object', required: ['token', 'token_type', 'expires_at', 'owner'],
  properties: { token: { type: 'string' }, token_type: { type: 'string', enum: ['Bearer'] }, expires_at: { type: 'string', format: 'date-time' }, owner: OwnerSchema, device: DeviceSchema },
}

function ownerView(svc: Services, ownerId: number) {
  const o = ownerById(svc.db, ownerId)
  // The token resolved a moment ago and owners are never deleted while they hold one.
  if (!o) throw new ApiError('internal_error', 'Owner vanished.')
  return { id: o.id, name: o.name, email: o.email }
}

function deviceView(svc: Services, tokenId: number) {
  const t = shellTokenById(svc.db, tokenId)
  if (!t) throw new ApiError('internal_error', 'Shell token vanished.')
  return { id: t.device, name: t.device_name, platform: t.platform, app_version: t.app_version }
}

/** Ends the web sessions a device's handoffs started (signing the shell out signs its web view out). */
async function endHandoffSessions(svc: Services, tokenIds: readonly number[]): Promise<void> {
  for (const id of handoffSessionsOf(svc.db, tokenIds)) await endOwnerSession(svc, id)
}

// ---- sign-in and sign-out ----------------------------------------------------------------------------

export const appLogin = defineOp({
  id: 'app.auth.login', tag, summary: 'Shell sign-in: email + password (+ `otp`) for a device → a shell token',
  description: 'Body `{email, password, device, otp?}`; `device` is `{id, platform: ios|android, name?, app_version?}` (or just the installation id). Returns `{token, token_type, expires_at, owner, device}`: send the token as `Authorization: Bearer` to the `/app` routes only. An earlier token of the same device is revoked. Refused as the web sign-in refuses (docs/dashboard.md "Signing in"): wrong email or password 401 `unauthenticated`; two-factor on and no `otp` 401 `two_factor_required`, a wrong or reused code 422 `otp_invalid`; email not verified 403 `email_not_verified`; suspended account 403 `account_suspended`; the same budget as the web sign-in, per address (10 a minute) and wrong attempts per account (5 in 15 minutes), then 429 `rate_limited`.',
  access: { public: true }, scope: [], input: LoginInput, output: LoginSchema,
  run: async (ctx, input) => {
    const { svc } = ctx
    // The web sign-in's own check: the same limits (per address, failures per account), TOTP and refusals.
    const { ownerId } = await checkOwnerPassword(svc, { email: input.email, password: input.password, otp: input.otp }, ctx.ip)
    const device = typeof input.device === 'string'
      ? { id: input.device, platform: 'unknown', name: input.device, app_version: null }
      : { id: input.device.id, platform: input.device.platform, name: input.device.name ?? '', app_version: input.device.app_version ?? null }
    const token = newToken('shell')
    const nowMs = Date.now()
    const expiresAt = nowIso(nowMs + SHELL_TOKEN_DAYS * 86_400_000)
    const { replaced, droppedPush } = await svc.committer.write((db) => insertShellToken(db, {
      ownerId, tokenHash: sha256Hex(token), device: device.id, deviceName: device.name, platform: device.platform,
      appVersion: device.app_version, now: nowIso(nowMs), expiresAt,
    }))
    for (const d of droppedPush) await svc.push.unregister?.({ device_token: d.push_token, platform: d.platform })
    await endHandoffSessions(svc, replaced)
    return { token, token_type: 'Bearer', expires_at: expiresAt, owner: ownerView(svc, ownerId), device }
  },
})

export const appLogout = defineOp({
  id: 'app.auth.logout', tag, summary: 'Sign this device out',
  description: 'Revokes the presented shell token, forgets its push registrations and ends the web sessions its handoffs started. Other devices stay signed in. Answers `{revoked: true}`, as every sign-out of a device does.',
  access: { shell: true }, scope: [], output: RevokedSchema,
  run: async (ctx) => {
    const me = shellOf(ctx)
    const pushes = pushDevicesOfToken(ctx.svc.db, me.tokenId)
    await ctx.svc.committer.write((db) => revokeShellToken(db, me.tokenId, nowIso()))
    for (const d of pushes) await ctx.svc.push.unregister?.({ device_token: d.push_token, platform: d.platform })
    await endHandoffSessions(ctx.svc, [me.tokenId])
    return { revoked: true }
  },
})

// ---- who and how ----------------------------------------------------------------------------------

export const appMe = defineOp({
  id: 'app.me.get', tag, summary: 'The signed-in owner, this device and the account\'s stores',
  access: { shell: true }, scope: [],
  output: {
    type: 'object', required: ['owner', 'device', 'stores'],
    properties: {
      owner: OwnerSchema, device: DeviceSchema, token_expires_at: { type: 'string', format: 'date-time' },
      stores: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' }, title: { type: 'string' }, slug: { type: 'string' } } } },
    },
  },
  run: (ctx) => {
    const me = shellOf(ctx)
    const stores = ctx.svc.stores.page(me.ownerId, 1, 100).rows.map((s) => ({ id: s.id, title: s.title, slug: s.slug }))
    return { owner: ownerView(ctx.svc, me.ownerId), device: deviceView(ctx.svc, me.tokenId), token_expires_at: me.expiresAt, stores }
  },
})

/** `1.4.2` < `1.10` compares numerically, part by part; a missing version is not "too old". */
export function versionBelow(version: string | null, min: string): boolean {
  if (!version) return false
  const a = version.split('.').map(Number)
  const b = min.split('.').map(Number)
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0)
    if (d !== 0) return d < 0
  }
  return false
}

export const appConfig = defineOp({
  id: 'app.config.get', tag, summary: 'How the shell should look and behave for this account',
  description: 'Branding, the features the account holds now (from its plan and entitlements), the dashboard start URL, the path-configuration addresses, the minimum supported shell version per platform and whether this device must update.',
  access: { shell: true }, scope: [],
  output: {
    type: 'object', required: ['branding', 'features', 'start_url', 'min_shell_version', 'path_configuration'],
    properties: {
      branding: { type: 'object' }, plan: { type: 'object' }, features: { type: 'object', additionalProperties: { type: 'boolean' } },
      start_url: { type: 'string' }, session_url: { type: 'string' }, path_configuration: { type: 'object' },
      min_shell_version: { type: 'object' }, update_required: { type: 'boolean' },
    },
  },
  run: (ctx) => {
    const me = shellOf(ctx)
    const { config, db } = ctx.svc
    const owner = ownerView(ctx.svc, me.ownerId)
    const plan = accountPlan(db, me.ownerId)
    const device = deviceView(ctx.svc, me.tokenId)
    const min = MIN_SHELL_VERSION[device.platform as keyof typeof MIN_SHELL_VERSION] ?? null
    return {
      branding: { app_name: 'Dispatch', account_name: owner.name, primary_color: '#1d4ed8', background_color: '#ffffff' },
      plan: { key: plan.key, name: plan.name },
      features: Object.fromEntries(FEATURE_KEYS.map((f) => [f, hasFeature(db, me.ownerId, f)])),
      start_url: `${config.siteUrl}${DASHBOARD_PATH}`,
      session_url: `${config.baseUrl}/app/session`,
      path_configuration: {
        ios: `${config.baseUrl}/app/path-configuration/ios.json`,
        android: `${config.baseUrl}/app/path-configuration/android.json`,
      },
      min_shell_version: MIN_SHELL_VERSION,
      update_required: min !== null && versionBelow(device.app_version, min),
    }
  },
})

// ---- push devices ---------------------------------------------------------------------------------

export const appRegisterDevice = defineOp({
  id: 'app.devices.register', tag, summary: 'Receive pushes on this device',
  description: 'Body `{push_token, platform?}` (the APNs or FCM token; `platform` defaults to the one given at sign-in). Registering a push token again moves it to this device. The push provider is told (docs/app-shell.md "Push").',
  access: { shell: true }, scope: [],
  input: v.object({ push_token: PushToken, platform: v.optional(Platform) }),
  output: { type: 'object', required: ['registered', 'push_token', 'platform'], properties: { registered: { type: 'boolean' }, push_token: { type: 'string' }, platform: { type: 'string' } } },
  run: async (ctx, { push_token, platform }) => {
    const me = shellOf(ctx)
    const p = platform ?? me.platform
    if (p !== 'ios' && p !== 'android') throw new ApiError('validation_failed', undefined, { platform: ['Say which platform this device is: ios or android.'] })
    await ctx.svc.committer.write((db) => registerShellPush(db, me.ownerId, me.tokenId, push_token, p, nowIso()))
    await ctx.svc.push.register?.({ device_token: push_token, platform: p, owner_id: me.ownerId })
    return { registered: true, push_token, platform: p }
  },
})

export const appUnregisterDevice = defineOp({
  id: 'app.devices.unregister', tag, summary: 'Stop pushes on this device',
  description: '`unregistered` is false when the push token was not registered to this account (another account\'s is never touched).',
  access: { shell: true }, scope: [],
  input: v.object({ push_token: PushToken }),
  output: { type: 'object', required: ['unregistered'], properties: { unregistered: { type: 'boolean' } } },
  run: async (ctx, { push_token }) => {
    const me = shellOf(ctx)
    const unregistered = await ctx.svc.committer.write((db) => unregisterShellPush(db, me.ownerId, push_token))
    if (unregistered) await ctx.svc.push.unregister?.({ device_token: push_token, platform: me.platform })
    return { unregistered }
  },
})

// ---- handoff into the web view -------------------------------------------------------------------------

export const appSession = defineOp({
  id: 'app.session.create', tag, summary: 'A one-time handoff nonce that opens the dashboard in the web view',
  description: `Returns \`{nonce, expires_in: ${HANDOFF_SECONDS}, url}\`. Load \`url\` (\`GET /app/handoff/{nonce}\`, optionally with \`?next=/dashboard/…\`) in the web view within ${HANDOFF_SECONDS} seconds: it sets the web session cookie and redirects into the dashboard, once.`,
  access: { shell: true }, scope: [],
  output: { type: 'object', required: ['nonce', 'expires_in', 'url'], properties: { nonce: { type: 'string' }, expires_in: { type: 'integer' }, url: { type: 'string' } } },
  run: async (ctx) => {
    const me = shellOf(ctx)
    const nonce = newToken('shell').slice(4)
    const nowMs = Date.now()
    await ctx.svc.committer.write((db) => insertHandoff(db, me.ownerId, me.tokenId, sha256Hex(nonce), nowIso(nowMs), nowIso(nowMs + HANDOFF_SECONDS * 1000)))
    return { nonce, expires_in: HANDOFF_SECONDS, url: `${ctx.svc.config.baseUrl}/app/handoff/${nonce}` }
  },
})

/** Only dashboard addresses of this site: anything else (another host, `//evil`, `/login`) lands on the dashboard's home. */
export function handoffTarget(next: string | undefined): string {
  if (!next || !/^\/dashboard(?:[/?#][^\\\s]*)?$/.test(next) || next.includes('//')) return DASHBOARD_PATH
  return next
}

/**
 * Redeem a handoff nonce (`GET /app/handoff/{nonce}`, a redirect, not JSON): once, within its 60
 * seconds, while its shell token is live and the account is not suspended. Anything else is 404
 * `not_found` and no cookie, so a replayed or leaked link opens nothing.
 */
export async function redeemHandoff(svc: Services, nonce: string, meta: { ip: string; userAgent: string; next?: string }): Promise<{ location: string; setCookie: string }> {
  if (!/^[A-Za-z0-9_-]{20,64}$/.test(nonce)) throw notFound('handoff')
  const claim = await svc.committer.write((db) => claimHandoff(db, sha256Hex(nonce), nowIso()))
  if (!claim || svc.accounts.suspended(claim.owner_id)) throw notFound('handoff')
  const { setCookie, sessionId } = await startOwnerSession(svc, claim.owner_id, { ip: meta.ip, userAgent: meta.userAgent, via: 'handoff' })
  await svc.committer.write((db) => setHandoffSession(db, claim.id, sessionId))
  return { location: `${svc.config.siteUrl}${handoffTarget(meta.next)}`, setCookie }
}

// ---- path configuration --------------------------------------------------------------------------------

/**
 * The rules the shell applies to every URL it is asked to visit (Hotwire Native path configuration;
 * docs/app-shell.md "Path configuration"): patterns are regular expressions over the path, later
 * rules override earlier ones. Dashboard pages open in the web view; forms that create or edit open
 * as modals; the shell's own screens (sign-in, settings) are native; anything off the site opens in
 * the system browser (the shell checks the host itself: patterns only see paths).
 */
export function pathConfiguration(platform: 'ios' | 'android') {
  // Android's Hotwire Native names the screen by a `uri`; iOS picks the view controller by `view_controller`.
  const web = platform === 'android' ? { uri: 'hotwire://fragment/web' } : { view_controller: 'web' }
  const modal = platform === 'android' ? { uri: 'hotwire://fragment/web/modal', context: 'modal' } : { view_controller: 'web', context: 'modal' }
  return {
    settings: { min_shell_version: MIN_SHELL_VERSION[platform], start_path: DASHBOARD_PATH },
    rules: [
      { patterns: ['.*'], properties: { ...web, context: 'default', pull_to_refresh_enabled: true } },
      { patterns: ['^/dashboard(/.*)?$'], properties: { ...web, context: 'default', pull_to_refresh_enabled: true } },
      { patterns: ['/new$', '/edit$', '/tokens/create$', '/webhooks/create$'], properties: { ...modal, pull_to_refresh_enabled: false } },
      { patterns: ['^/login$', '^/signup$'], properties: { ...(platform === 'android' ? { uri: 'hotwire://fragment/sign_in' } : { view_controller: 'sign_in' }), context: 'modal', presentation: 'replace_root' } },
      { patterns: ['^/app/native/settings$'], properties: { ...(platform === 'android' ? { uri: 'hotwire://fragment/settings' } : { view_controller: 'settings' }), context: 'default' } },
      { patterns: ['^/s/', '^/track/', '^/api/', '^/docs'], properties: { ...(platform === 'android' ? { uri: 'hotwire://fragment/browser' } : { view_controller: 'safari' }), context: 'default', external: true } },
      { patterns: ['^/logout$'], properties: { ...web, presentation: 'replace_root' } },
    ],
  }
}

export const appGroupOps = [appLogin, appLogout, appMe, appConfig, appRegisterDevice, appUnregisterDevice, appSession]
