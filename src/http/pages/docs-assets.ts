/**
 * The static files of the API reference (issue 20 item 7): Swagger UI from npm (swagger-ui-dist,
 * served from node_modules, never a CDN) plus our own start script and style sheet. Only the
 * files listed here are served; each address carries a content hash (`?v=`), so they are cached
 * for a year and a new release is a new address.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

export interface Asset { body: Buffer; type: string; version: string }

const SWAGGER_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))

/**
 * Renders the document named by `#swagger-ui[data-openapi]`: a file, not an inline script, so the
 * page's CSP needs no nonce or hash. `validatorUrl: null` keeps Swagger UI from sending the
 * document to validator.swagger.io: nothing leaves for another host.
 * Accessibility (issue 34 item 9), applied whenever Swagger UI (re)draws: each operation's deep link
 * is an `<a>` inside the operation's toggle button (a link in a button: axe's nested-interactive)
 * whose click Swagger UI cancels anyway, so it loses its `href` (opening the operation by its button
 * sets the same address); the Servers select has no name of its own and gets one.
 */
const INIT_JS = `"use strict";
window.addEventListener("DOMContentLoaded", function () {
  var el = document.getElementById("swagger-ui");
  if (!el || typeof SwaggerUIBundle !== "function") return;
  window.ui = SwaggerUIBundle({
    url: el.getAttribute("data-openapi"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    docExpansion: "list",
    filter: true,
    defaultModelsExpandDepth: 0,
    displayOperationId: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout"
  });
  var mend = function () {
    var servers = el.querySelector("select#servers:not([aria-label])");
    if (servers) servers.setAttribute("aria-label", "Server");
    var links = el.querySelectorAll(".opblock-summary-control a[href]");
    for (var i = 0; i < links.length; i++) links[i].removeAttribute("href");
  };
  // Once a frame at most, however many nodes Swagger UI adds meanwhile (it adds thousands).
  var pending = false;
  new MutationObserver(function () {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; mend(); });
  }).observe(el, { childList: true, subtree: true });
});
`

const DOCS_CSS = `body{margin:0;font:15px/1.55 system-ui,-apple-system,sans-serif;color:#1f2328;background:#fff}
a{color:#0b5cad}header.top{display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;align-items:baseline;padding:.8rem 1.25rem;border-bottom:1px solid #d0d7de;background:#f6f8fa}
header.top strong{font-size:1.1rem;margin-right:.5rem}header.top a{text-decoration:none}header.top a:hover{text-decoration:underline}
.layout{display:flex;align-items:flex-start}nav.side{flex:0 0 15rem;padding:1rem 1.25rem;border-right:1px solid #d0d7de;min-height:calc(100vh - 3.5rem);box-sizing:border-box;font-size:14px}
nav.side h2{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:#57606a;margin:1.2rem 0 .3rem}nav.side ul{list-style:none;margin:0;padding:0}nav.side li{margin:.15rem 0}
nav.side a[aria-current=page]{font-weight:600;color:#1f2328}main{flex:1;min-width:0;padding:0 1.25rem 3rem}
article.guide{max-width:52rem;padding-top:.5rem}article.guide pre{background:#f6f8fa;padding:.8rem;overflow:auto;border-radius:6px}
article.guide code{background:#f6f8fa;padding:.1rem .3rem;border-radius:4px;font-size:.9em}article.guide pre code{padding:0;background:none}
article.guide .scroll{overflow-x:auto;margin:0 0 1rem}article.guide table{border-collapse:collapse}article.guide td,article.guide th{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left;vertical-align:top}
article.guide img{max-width:100%}table.routes{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}table.routes td{padding:.25rem .5rem;border-bottom:1px solid #eee}
.muted{color:#57606a}
/* Swagger UI's own colours fall short of WCAG AA contrast (4.5:1) on its labels and links: darker ones. */
.swagger-ui .info .title small,.swagger-ui .info .title small pre{background:#4b5563}.swagger-ui .info .title small.version-stamp{background:#3d6b00}
.swagger-ui .info .base-url,.swagger-ui .info a,.swagger-ui .info .url,.swagger-ui .info .link,.swagger-ui a.nostyle,.swagger-ui .link{color:#0b5cad}
.swagger-ui .btn.authorize{color:#17692f;border-color:#17692f}.swagger-ui .btn.authorize svg{fill:#17692f}
.swagger-ui .opblock .opblock-summary-method{color:#fff}
.swagger-ui .opblock.opblock-get .opblock-summary-method{background:#0b5cad}.swagger-ui .opblock.opblock-post .opblock-summary-method{background:#17692f}
.swagger-ui .opblock.opblock-put .opblock-summary-method{background:#8a5300}.swagger-ui .opblock.opblock-delete .opblock-summary-method{background:#a4161a}
.swagger-ui .opblock.opblock-patch .opblock-summary-method{background:#0e6b60}.swagger-ui .opblock.opblock-head .opblock-summary-method,.swagger-ui .opblock.opblock-options .opblock-summary-method{background:#6b3fa0}
@media (max-width:50rem){.layout{display:block}nav.side{min-height:0;border-right:0;border-bottom:1px solid #d0d7de}}
`

const FILES: Record<string, { from: string | (() => Buffer); type: string }> = {
  'swagger-ui-bundle.js': { from: 'swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8' },
  'swagger-ui.css': { from: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  'favicon-32x32.png': { from: 'favicon-32x32.png', type: 'image/png' },
  'docs-init.js': { from: () => Buffer.from(INIT_JS), type: 'text/javascript; charset=utf-8' },
  'docs.css': { from: () => Buffer.from(DOCS_CSS), type: 'text/css; charset=utf-8' },
}

const loaded = new Map<string, Asset>()

/** The asset called `name`, or undefined for anything not listed (no path is ever built from the request). */
export function asset(name: string): Asset | undefined {
  const file = Object.hasOwn(FILES, name) ? FILES[name] : undefined
  if (!file) return undefined
  let a = loaded.get(name)
  if (!a) {
    const body = typeof file.from === 'string' ? readFileSync(join(SWAGGER_DIR, file.from)) : file.from()
    a = { body, type: file.type, version: createHash('sha256').update(body).digest('hex').slice(0, 12) }
    loaded.set(name, a)
  }
  return a
}

/** The address of an asset, with its content hash. */
export const assetUrl = (name: keyof typeof FILES & string): string => `/docs/assets/${name}?v=${asset(name)!.version}`
