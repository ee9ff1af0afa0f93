/** The kitchen screen page (`{site_url}/kds`, docs/kds.md "Kitchen screen"): one self-contained HTML file, read once. */
import { readFileSync } from 'node:fs'

const TEMPLATE = readFileSync(new URL('./kds.html', import.meta.url), 'utf8')

/** The page with this response's nonce on its inline style and script. */
export const kdsPage = (nonce: string): string => TEMPLATE.replaceAll('{{nonce}}', nonce)

/**
 * Only this response's inline code runs, and the page talks to this server alone (API and the
 * kitchen socket; `'self'` does not cover `ws:` in every browser, so the host is named).
 */
export function kdsPageHeaders(nonce: string, host: string | undefined): Record<string, string> {
  const self = host && /^[\w.-]+(:\d{1,5})?$|^\[[\d:a-fA-F]+\](:\d{1,5})?$/.test(host) ? ` ws://${host} wss://${host}` : ''
  return {
    'Content-Security-Policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'${self}; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  }
}
