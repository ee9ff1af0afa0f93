/**
 * The app embed page (api-v1 §4.10 `{site_url}/apps/{appId}/embed`; docs/apps.md "Embedding"): the
 * app's `embed_url` in an iframe inside the dashboard frame, and a small script that fetches fresh
 * session tokens from `{site_url}/apps/{appId}/session-token` (same origin, the session cookie) and
 * hands them to the iframe with postMessage addressed to the app's origin only: at load, every
 * 45 s (tokens live 60 s), and when the app asks (`{type: "dispatch:session-token-request"}`).
 */
import { esc } from '../html.ts'

/** JSON inside a <script>: no `</script>` or `<!--` can end it early. */
const js = (v: unknown): string => JSON.stringify(v).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')

/** Headers: scripts and styles of this response only (nonce), frames from the app's origin only. */
export function embedHeaders(nonce: string, appOrigin: string): Record<string, string> {
  return {
    'Content-Security-Policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; frame-src ${appOrigin}; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
  }
}

export interface EmbedPageInput { appName: string; embedUrl: string; appOrigin: string; tokenPath: string; nonce: string }

export function embedPage(p: EmbedPageInput): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(p.appName)} · Apps · Dashboard</title>
<link rel="icon" href="data:,">
<style nonce="${esc(p.nonce)}">html,body{margin:0;height:100%;font:16px system-ui,sans-serif}body{display:flex;flex-direction:column}
header{display:flex;gap:1rem;align-items:center;padding:.5rem 1rem;border-bottom:1px solid #ccc}h1{font-size:1.1rem;margin:0}
iframe{flex:1;border:0;width:100%}#status{margin-left:auto;color:#555}</style>
</head><body>
<header><a href="/dashboard/apps">← Apps</a><h1>${esc(p.appName)}</h1><p id="status" role="status"></p></header>
<iframe id="app" title="${esc(p.appName)}" src="${esc(p.embedUrl)}" sandbox="allow-scripts allow-forms allow-same-origin allow-popups allow-downloads"></iframe>
<script nonce="${esc(p.nonce)}">
(() => {
  const ORIGIN = ${js(p.appOrigin)}
  const TOKEN_URL = ${js(p.tokenPath)}
  const frame = document.getElementById('app')
  const status = document.getElementById('status')
  async function send() {
    try {
      const r = await fetch(TOKEN_URL, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      if (!r.ok) {
        const why = await r.json().then((b) => b && b.message, () => null)
        status.textContent = r.status === 404 ? 'This app is no longer installed.' : why || 'Could not get a session token (' + r.status + ').'
        return
      }
      const t = await r.json()
      // Addressed to the app's origin only: a page navigated elsewhere in the frame gets nothing.
      frame.contentWindow.postMessage({ type: 'dispatch:session-token', token: t.token, expires_in: t.expires_in }, ORIGIN)
      status.textContent = ''
    } catch (err) { status.textContent = 'Could not get a session token.' }
  }
  frame.addEventListener('load', send)
  setInterval(send, 45000)
  window.addEventListener('message', (e) => {
    if (e.origin === ORIGIN && e.source === frame.contentWindow && e.data && e.data.type === 'dispatch:session-token-request') send()
  })
})()
</script>
</body></html>`
}

/** What shows instead of the app, and why. */
const unavailablePage = (title: string, why: string): string => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head>
<body><h1>${esc(title)}</h1><p>${esc(why)} <a href="/dashboard/apps">Back to Apps</a></p></body></html>`

export const embedNotFoundPage = (): string => unavailablePage('App not installed', 'This app is not installed for your account, or has no page to show.')

/** The account's plan lacks `apps` (403): the plan's message; the installation is kept. */
export const embedRefusedPage = (message: string): string => unavailablePage('App unavailable', message)
