/**
 * The app group (api-v1 §4.9; docs/app-shell.md): bindings of src/ops/apps/app-group.ts, plus the two
 * addresses that are not JSON operations — the handoff redirect that sets the web session cookie,
 * and the static path-configuration documents. Left out of the route table when APP_GROUP=0.
 */
import * as v from 'valibot'
import { bind } from '../bind.ts'
import { Reply, route } from '../route.ts'
import * as app from '../../ops/apps/app-group.ts'

const tag = 'App group'

const pathConfigurationRoute = (platform: 'ios' | 'android') => route({
  method: 'GET', path: `/app/path-configuration/${platform}.json`, tag, auth: 'none',
  summary: `Path configuration of the ${platform === 'ios' ? 'iOS' : 'Android'} shell (which URLs open as modals, natively or in the browser)`,
  description: 'Hotwire Native path configuration: `{settings, rules: [{patterns, properties}]}`; later rules override earlier ones (docs/app-shell.md "Path configuration").',
  response: { type: 'object', required: ['settings', 'rules'], properties: { settings: { type: 'object' }, rules: { type: 'array', items: { type: 'object' } } } },
  handler: () => app.pathConfiguration(platform),
})

export const appGroupRoutes = [
  // No route-level limit: the operation spends the web sign-in's budget (per address and per account), one budget for both doors.
  bind(app.appLogin, { method: 'POST', path: '/app/auth/login', auth: 'none' }),
  // No input: a body, if any, is drained unread.
  bind(app.appLogout, { method: 'POST', path: '/app/auth/logout', auth: 'shell', from: 'query' }),
  bind(app.appMe, { method: 'GET', path: '/app/me', auth: 'shell' }),
  bind(app.appConfig, { method: 'GET', path: '/app/config', auth: 'shell' }),
  bind(app.appRegisterDevice, { method: 'POST', path: '/app/devices', auth: 'shell' }),
  bind(app.appUnregisterDevice, { method: 'POST', path: '/app/devices/unregister', auth: 'shell' }),
  bind(app.appSession, { method: 'POST', path: '/app/session', auth: 'shell', from: 'query' }),
  route({
    method: 'GET', path: '/app/handoff/{nonce}', tag, auth: 'none',
    summary: 'Open the dashboard in the shell\'s web view: sets the web session cookie and redirects (303), once',
    description: `The nonce comes from \`POST /app/session\` and is good once, within ${app.HANDOFF_SECONDS} seconds. Answers 303 to the dashboard (\`next\`, a \`/dashboard…\` path, else its home) with the \`dsid\` session cookie. A used, expired, unknown or signed-out nonce: 404 \`not_found\` and no cookie.`,
    query: v.object({ next: v.optional(v.pipe(v.string(), v.maxLength(500))) }),
    status: 303, redirect: 'To the dashboard page (`next`, else its home), with the `dsid` session cookie in `Set-Cookie`; no body.',
    handler: async ({ svc, params, query, headers, ip }) => {
      const r = await app.redeemHandoff(svc, params.nonce!, { ip, userAgent: headers['user-agent'] ?? '', next: query.next })
      // The nonce is in this address: keep it out of caches and of the next page's Referer.
      return new Reply(303, null, { Location: r.location, 'Set-Cookie': r.setCookie, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' })
    },
  }),
  pathConfigurationRoute('ios'),
  pathConfigurationRoute('android'),
]
