/**
 * The browser code is TypeScript (issue 33 item 4): src/browser/*.ts is compiled for the browser by
 * tools/build.mjs (`browserCode()`), the same recipe whether the server runs from dist/ or from its
 * sources. What the pages serve is that JavaScript: the dashboard's modules tagged by content, the
 * kitchen screen's and the tracking page's scripts inlined under the page's nonce.
 */
import t from 'tap'
import { readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { browserCode, BROWSER_DIR } from '../tools/build.mjs'
import { BROWSER_CODE, inlineScript } from '../src/http/pages/browser-code.ts'
import { ASSET_TAG, DASHBOARD_ASSETS } from '../src/http/pages/dashboard/assets.ts'
import { startServer } from './helpers/server.ts'
import { createFleet, deliveryOrder } from './helpers/delivery.ts'

const sources = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
  e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [relative(BROWSER_DIR, join(dir, e.name))] : [])

t.test('every browser source becomes one script, and the server serves exactly what the build makes', async (t) => {
  const ts = sources(BROWSER_DIR).sort()
  t.ok(ts.length >= 8, 'the dashboard modules, the kitchen screen and the tracking page')
  t.same(Object.keys(BROWSER_CODE).sort(), ts.map((f) => f.replace(/\.ts$/, '.js')), 'one .js per .ts')
  t.same(BROWSER_CODE, await browserCode(), 'the server (from sources) serves the build recipe\'s output')
  for (const [name, code] of Object.entries(BROWSER_CODE)) {
    t.notMatch(code, /\bimport type\b|\bimport\s*\{[^}]*\btype\s/, `${name}: type imports are gone`)
    t.notMatch(code, /from\s*["']\.\.\//, `${name}: nothing from the server reaches the browser`)
  }
  // The inlined scripts are classic scripts: they parse as a function body, and run at once.
  for (const name of ['kds.js', 'track.js', 'store-website.js', 'address-pin.js']) {
    t.doesNotThrow(() => new Function(inlineScript(name)), `${name} is plain JavaScript`)
    t.match(inlineScript(name), /^"use strict";\n\(\(\) => \{/, `${name}: one function run at once, nothing global`)
  }
})

t.test('the dashboard modules import each other by the page\'s content tag', async (t) => {
  const app = DASHBOARD_ASSETS['app.js']!.body
  const imports = [...app.matchAll(/^import [^;]*?from\s*(["'])([^"']+)\1/gm)].map((m) => m[2]!)
  t.same(imports.sort(), ['arrivals', 'core', 'dispatch', 'guests', 'menu', 'payments', 'reservations', 'setup', 'shifts', 'website'].map((m) => `./${m}.js?v=${ASSET_TAG}`), 'app.js imports its ten siblings, tagged')
  for (const [name, asset] of Object.entries(DASHBOARD_ASSETS)) {
    if (!name.endsWith('.js')) continue
    t.notMatch(asset.body, /from\s*["']\.\/[\w-]+\.js["']/, `${name}: no untagged import left`)
  }
})

t.test('the kitchen screen and the tracking page carry their compiled script under the page\'s nonce', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const script = (html: string): string => {
    const m = /<script nonce="([^"]+)">([\s\S]*?)<\/script>/.exec(html)
    return m ? m[2]! : ''
  }
  const kds = await (await fetch(`${s.site}/kds`)).text()
  t.equal(script(kds), inlineScript('kds.js'), '/kds: the kitchen screen\'s script')
  const order = await deliveryOrder(s, createFleet(s.app.svc.db))
  const track = await (await fetch(`${s.site}/t/${order.track_token}`)).text()
  t.equal(script(track), inlineScript('track.js'), '/t/{token}: the tracking page\'s script')
  t.match(track, new RegExp(`<script type="application/json" id="socket-path" nonce="[^"]+">"/api/v1/ws/track/${order.track_token}"</script>`), 'the socket path comes as JSON beside it')
})
