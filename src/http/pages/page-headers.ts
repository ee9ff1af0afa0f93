/**
 * Security headers of the pages we serve (tracking page, kitchen screen): only this response's
 * inline code and styles run (by nonce), and the page talks to this server alone — its API and
 * its sockets (`'self'` does not cover `ws:` in every browser, so the host is named).
 */
const HOST = /^[\w.-]+(:\d{1,5})?$|^\[[\d:a-fA-F]+\](:\d{1,5})?$/

/** `img` adds image sources (the tracking page's own origin and its map tile host, docs/tracking-page.md). */
export function pageHeaders(nonce: string, host: string | undefined, extra: Record<string, string> = {}, img: readonly string[] = []): Record<string, string> {
  const self = host && HOST.test(host) ? ` ws://${host} wss://${host}` : ''
  return {
    'Content-Security-Policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'${self}; img-src ${[...img, 'data:'].join(' ')}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...extra,
  }
}
