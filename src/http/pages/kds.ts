/**
 * The kitchen screen page (`{site_url}/kds`, docs/kds.md "Kitchen screen"): one self-contained HTML
 * file and its script (src/browser/kds.ts, compiled: browser-code.ts), put together once.
 */
import { readFileSync } from 'node:fs'
import { pageHeaders } from './page-headers.ts'
import { inlineScript } from './browser-code.ts'

const TEMPLATE = readFileSync(new URL('./kds.html', import.meta.url), 'utf8').replace('{{script}}', () => inlineScript('kds.js'))

/** The page with this response's nonce on its inline style and script. */
export const kdsPage = (nonce: string): string => TEMPLATE.replaceAll('{{nonce}}', nonce)

/** The kitchen screen's headers (page-headers.ts). */
export const kdsPageHeaders = (nonce: string, host: string | undefined): Record<string, string> => pageHeaders(nonce, host)
