/**
 * The store website's one script, inlined with the page's CSP nonce: src/browser/store-website.ts (the
 * cart's background add and the checkout's live breakdown), compiled by the build like the other
 * browser code. It only enhances: every form works without it.
 */
import { inlineScript } from './browser-code.ts'

export const WEBSITE_SCRIPT = inlineScript('store-website.js')
