/**
 * Item photos and the server's limits (docs/menu-photos.md): the photo addresses are not counted
 * against a visitor's per-address request budget (a menu of many thumbnails would use it up), and a
 * cluster follower forwards the photo uploads' larger bodies but keeps every other route at
 * BODY_LIMIT_BYTES.
 */
import t from 'tap'
import sharp from 'sharp'
import { startServer } from './helpers/server.ts'
import { createAccount } from './helpers/fixtures.ts'
import { largeBodyRoutes } from '../src/cluster/boot.ts'
import { loadConfig } from '../src/config.ts'

t.test('photos are served past the per-address page budget', async (t) => {
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '5' })
  t.teardown(() => s.close())
  const acct = createAccount(s.app.svc.db)
  const png = await sharp({ create: { width: 60, height: 40, channels: 3, background: '#3a6' } }).png().toBuffer()
  const up = await s.req('POST', `/restaurants/${acct.storeId}/menu/items/${acct.menu.fries}/photo`, { token: acct.token, raw: png, headers: { 'content-type': 'image/png' } })
  t.equal(up.status, 200)
  const url = (up.body as { photo: { thumb_url: string } }).photo.thumb_url
  const statuses: number[] = []
  for (let i = 0; i < 12; i++) statuses.push((await fetch(url)).status)
  t.same(statuses, Array(12).fill(200), 'twelve thumbnails from one address with a budget of five a minute')
  // The budget itself still holds for pages.
  const pages: number[] = []
  for (let i = 0; i < 8; i++) pages.push((await fetch(`${s.site}/s/${acct.slug}`)).status)
  t.ok(pages.includes(429), 'the store website\'s pages are still counted')
})

t.test('a cluster follower forwards large bodies only to the photo uploads', async (t) => {
  const config = loadConfig({ DB_PATH: ':memory:', BODY_LIMIT_BYTES: String(1024 * 1024), PHOTO_MAX_BYTES: String(8 * 1024 * 1024) })
  const large = largeBodyRoutes(config)
  const limitFor = (path: string) => large.find((b) => b.path.test(path))?.limitBytes ?? config.bodyLimitBytes
  t.ok(limitFor('/api/v1/restaurants/12/menu/items/345/photo') > 8 * 1024 * 1024, 'the owner\'s upload')
  t.ok(limitFor('/api/v1/staff/menu/items/345/photo') > 8 * 1024 * 1024, 'the staff upload')
  for (const other of ['/api/v1/restaurants/12/orders', '/api/v1/restaurants/12/menu/items/345', '/api/v1/restaurants/12/menu/items/345/photo/x', '/api/v1/themes/validate']) {
    t.equal(limitFor(other), 1024 * 1024, `${other}: BODY_LIMIT_BYTES`)
  }
})
