/**
 * Menu item photos and the menu's order (issue 34 item 10; docs/menu-photos.md), from outside:
 * a photo uploaded as the body or as base64 JSON is re-encoded (fitted in 1200 px, a 400 px
 * thumbnail, metadata stripped) and served at a content-hashed, immutable address that every menu
 * reader names; bad uploads get the §7 envelope with nothing written; another account's item is
 * 404. Categories and a category's items are reordered with one call each, all ids or nothing.
 */
import t from 'tap'
import sharp from 'sharp'
import { startServer } from './helpers/server.ts'
import { createAccount, outbox } from './helpers/fixtures.ts'
import { bearer, callTool, connectMcp } from './helpers/mcp.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const other = createAccount(db)
const base = `/restaurants/${acct.storeId}/menu`
const call = (method: string, path: string, body?: unknown) => s.req(method, path, { token: acct.token, body })
const upload = (itemId: number, bytes: Buffer, type = 'image/png', token = acct.token, storeId = acct.storeId) =>
  s.req('POST', `/restaurants/${storeId}/menu/items/${itemId}/photo`, { token, raw: bytes, headers: { 'content-type': type } })
const fetchBytes = async (url: string) => {
  const r = await fetch(url)
  return { status: r.status, headers: r.headers, bytes: Buffer.from(await r.arrayBuffer()) }
}
const photoRows = () => db.prepare('SELECT COUNT(*) FROM menu_photos').pluck().get() as number

/** A picture of `w`×`h` with noise, so its encodings are of a real photo's size. */
const picture = (w: number, h: number, format: 'png' | 'jpeg' = 'png') => {
  const img = sharp({ create: { width: w, height: h, channels: 3, background: '#c33', noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
  return (format === 'png' ? img.png() : img.jpeg()).toBuffer()
}

t.test('an uploaded PNG is resized, re-encoded and served at a content-hashed, immutable address', async (t) => {
  const png = await sharp({ create: { width: 3000, height: 2000, channels: 4, background: '#c33a' } }).png().toBuffer()
  const r = await upload(acct.menu.burger.id, png)
  t.equal(r.status, 200, r.text)
  const { photo, images } = r.body
  t.match(photo.url, new RegExp(`^${s.site}/media/items/[0-9a-f]{32}\\.jpg$`))
  t.equal(photo.thumb_url, photo.url.replace(/\.jpg$/, '-thumb.jpg'))
  t.equal(images[0], photo.url, 'images[0] is the photo, for every reader of images')

  const full = await fetchBytes(photo.url)
  t.equal(full.status, 200)
  t.equal(full.headers.get('content-type'), 'image/jpeg')
  t.match(full.headers.get('cache-control'), /immutable/)
  t.match(full.headers.get('cache-control'), /max-age=31536000/)
  t.match(await sharp(full.bytes).metadata(), { format: 'jpeg', width: 1200, height: 800 })
  const thumb = await fetchBytes(photo.thumb_url)
  t.match(await sharp(thumb.bytes).metadata(), { format: 'jpeg', width: 400, height: 267 })

  // Every menu reader names it: the owner menu, the public menu, the storefront menu's gallery.
  const owner = await call('GET', base)
  t.same(owner.body[0].items.find((i: { id: number }) => i.id === acct.menu.burger.id).photo, photo)
  const pub = await s.req('GET', `/menu/${acct.storeId}`)
  t.equal(pub.body[0].items.find((i: { id: number }) => i.id === acct.menu.burger.id).images[0], photo.url)

  // A new photo is a new address; the old one is gone once no item shows it.
  const again = await upload(acct.menu.burger.id, await picture(800, 800))
  t.not(again.body.photo.url, photo.url)
  t.equal((await fetchBytes(photo.url)).status, 404)
  t.match((await fetchBytes(again.body.photo.url)).status, 200)
  t.equal(photoRows(), 1)
})

t.test('a small photo is not enlarged; the same photo on two items is kept while one shows it', async (t) => {
  const png = await picture(300, 200)
  const a = await upload(acct.menu.fries, png)
  const b = await upload(acct.menu.soup, png)
  t.equal(a.body.photo.url, b.body.photo.url, 'same content, same address')
  t.match(await sharp((await fetchBytes(a.body.photo.url)).bytes).metadata(), { width: 300, height: 200 })
  const del = await call('DELETE', `${base}/items/${acct.menu.fries}/photo`)
  t.equal(del.status, 200)
  t.equal(del.body.photo, null)
  t.notOk(del.body.images.includes(a.body.photo.url))
  t.equal((await fetchBytes(a.body.photo.url)).status, 200, 'the soup still shows it')
  const gone = await call('DELETE', `${base}/items/${acct.menu.soup}`)
  t.equal(gone.status, 204)
  t.equal((await fetchBytes(a.body.photo.url)).status, 404, 'deleting the last item that showed it removes it')
})

t.test('the photo leaves the original metadata behind and stands upright', async (t) => {
  const jpeg = await sharp(await picture(600, 400, 'jpeg'))
    .withExif({ IFD0: { Copyright: 'SECRET-CAMERA-OWNER' } }).withMetadata({ orientation: 6 }).jpeg().toBuffer()
  t.ok(jpeg.includes('SECRET-CAMERA-OWNER'), 'the upload carries EXIF')
  const r = await s.req('POST', `${base}/items/${acct.menu.fries}/photo`, { token: acct.token, body: { image: `data:image/jpeg;base64,${jpeg.toString('base64')}` } })
  t.equal(r.status, 200, r.text)
  const served = (await fetchBytes(r.body.photo.url)).bytes
  t.notOk(served.includes('SECRET-CAMERA-OWNER'))
  const meta = await sharp(served).metadata()
  t.equal(meta.exif, undefined)
  t.match(meta, { width: 400, height: 600 }, 'orientation 6 turned upright')
})

t.test('bad uploads: the §7 envelope and nothing written', async (t) => {
  const before = (await call('GET', base)).body[0].items.find((i: { id: number }) => i.id === acct.menu.burger.id)
  const rows = photoRows()
  const notImage = await upload(acct.menu.burger.id, Buffer.from('hello, not a picture'), 'image/png')
  t.equal(notImage.status, 415)
  t.match(notImage.body, { code: 'unsupported_media_type', reason: String })
  const text = await upload(acct.menu.burger.id, Buffer.from('hello'), 'text/plain')
  t.equal(text.status, 415)
  const png = await picture(50, 50)
  const broken = await upload(acct.menu.burger.id, Buffer.concat([png.subarray(0, 40), Buffer.alloc(200, 7)]))
  t.equal(broken.status, 422, broken.text)
  t.match(broken.body, { code: 'validation_failed', errors: { image: [String] } })
  const base64 = await s.req('POST', `${base}/items/${acct.menu.burger.id}/photo`, { token: acct.token, body: { image: '***' } })
  t.equal(base64.status, 422)
  const empty = await s.req('POST', `${base}/items/${acct.menu.burger.id}/photo`, { token: acct.token, body: {} })
  t.match(empty, { status: 422, body: { code: 'validation_failed', errors: { image: [String] } } }, 'no photo sent')
  const missing = await upload(999_999, png)
  t.equal(missing.status, 404)
  const after = (await call('GET', base)).body[0].items.find((i: { id: number }) => i.id === acct.menu.burger.id)
  t.same(after.photo, before.photo)
  t.equal(photoRows(), rows)
})

t.test("another account's item is not found, and nothing is written", async (t) => {
  const png = await picture(100, 100)
  const r = await upload(other.menu.burger.id, png, 'image/png', acct.token, other.storeId)
  t.equal(r.status, 404)
  const r2 = await upload(other.menu.burger.id, png)
  t.equal(r2.status, 404, 'their item under my store')
  const d = await s.req('DELETE', `/restaurants/${other.storeId}/menu/items/${other.menu.burger.id}/photo`, { token: acct.token })
  t.equal(d.status, 404)
  t.equal((await s.req('GET', `/restaurants/${other.storeId}/menu`, { token: other.token })).body[0].items[0].photo, null)
})

t.test('images sent back with the photo first do not copy it into the addresses', async (t) => {
  const item = (await call('GET', base)).body[0].items.find((i: { id: number }) => i.id === acct.menu.burger.id)
  t.ok(item.photo)
  const r = await call('PUT', `${base}/items/${acct.menu.burger.id}`, { images: [...item.images, 'https://cdn.example.com/b.jpg'] })
  t.equal(r.status, 200, r.text)
  t.same(r.body.images, [item.photo.url, 'https://cdn.example.com/b.jpg'])
})

t.test('a photo larger than BODY_LIMIT_BYTES is taken up to PHOTO_MAX_BYTES; above it 413', async (t) => {
  const small = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', BODY_LIMIT_BYTES: '65536', PHOTO_MAX_BYTES: '400000' })
  t.teardown(() => small.close())
  const a = createAccount(small.app.svc.db)
  const send = (bytes: Buffer) => small.req('POST', `/restaurants/${a.storeId}/menu/items/${a.menu.burger.id}/photo`, { token: a.token, raw: bytes, headers: { 'content-type': 'image/png' } })
  const mid = await picture(300, 250)
  t.ok(mid.length > 65536 && mid.length < 400000, `${mid.length} bytes: above the body limit, below the photo limit`)
  t.equal((await send(mid)).status, 200)
  const big = await picture(500, 400)
  t.ok(big.length > 400000, `${big.length} bytes`)
  const r = await send(big)
  t.equal(r.status, 413)
  t.match(r.body, { code: 'payload_too_large', reason: String })
  const json = await small.req('POST', `/restaurants/${a.storeId}/menu/items/${a.menu.burger.id}/photo`, { token: a.token, body: { image: big.toString('base64') } })
  t.equal(json.status, 413, 'as base64 too')
  const other = await small.req('PUT', `/restaurants/${a.storeId}/menu/items/${a.menu.burger.id}`, { token: a.token, body: { description: 'x'.repeat(70000) } })
  t.equal(other.status, 413, 'other routes keep BODY_LIMIT_BYTES')
})

t.test('reordering categories and items: every id once, or 422 and nothing changes', async (t) => {
  const cat = (await call('POST', `${base}/categories`, { name: 'Drinks' })).body
  const tea = (await call('POST', `${base}/items`, { category_id: cat.id, name: 'Tea', price: 2 })).body
  const cola = (await call('POST', `${base}/items`, { category_id: cat.id, name: 'Cola', price: 3 })).body
  const before = (await call('GET', base)).body.map((c: { id: number }) => c.id)
  t.equal(before.at(-1), cat.id)
  const order = [cat.id, ...before.slice(0, -1)]
  const r = await call('PUT', `${base}/order`, { ids: order })
  t.equal(r.status, 200, r.text)
  t.same(r.body.map((c: { id: number }) => c.id), order)
  t.same((await s.req('GET', `/menu/${acct.storeId}`)).body.map((c: { id: number }) => c.id).filter((id: number) => order.includes(id))[0], cat.id, 'the public menu follows')
  t.match(outbox(db, 'menu.updated').at(-1)?.data, { entity: 'menu', change: 'updated', id: acct.storeId })

  for (const bad of [order.slice(1), [...order, order[0]], [...order.slice(1), other.menu.categoryId]]) {
    const b = await call('PUT', `${base}/order`, { ids: bad })
    t.equal(b.status, 422)
    t.match(b.body, { code: 'validation_failed', errors: { ids: [String] } })
  }
  t.same((await call('GET', base)).body.map((c: { id: number }) => c.id), order, 'unchanged by the refusals')

  const items = await call('PUT', `${base}/categories/${cat.id}/order`, { ids: [cola.id, tea.id] })
  t.equal(items.status, 200, items.text)
  t.same(items.body.find((c: { id: number }) => c.id === cat.id).items.map((i: { name: string }) => i.name), ['Cola', 'Tea'])
  t.equal((await call('PUT', `${base}/categories/${cat.id}/order`, { ids: [cola.id] })).status, 422)
  t.match(await call('PUT', `${base}/categories/${cat.id}/order`, {}), { status: 422, body: { errors: { ids: [String] } } }, 'no ids sent')
  t.equal((await call('PUT', `${base}/categories/${cat.id}/order`, { ids: [cola.id, acct.menu.burger.id] })).status, 422)
  t.equal((await call('PUT', `/restaurants/${other.storeId}/menu/categories/${other.menu.categoryId}/order`, { ids: [other.menu.burger.id] })).status, 404)
  t.equal((await call('PUT', `${base}/categories/${other.menu.categoryId}/order`, { ids: [other.menu.burger.id] })).status, 404)
  // The held menu prices by the new order at once: an order still sees both items.
  t.same((await call('GET', base)).body.find((c: { id: number }) => c.id === cat.id).items.map((i: { name: string; position: number }) => [i.name, i.position]), [['Cola', 0], ['Tea', 1]])
})

t.test('the MCP item tools: an agent sets a photo, sees it in get_menu, removes it, reorders', async (t) => {
  const a = createAccount(db)
  const admin = await connectMcp(s, '/mcp', bearer(a.token))
  t.teardown(() => admin.close())
  const png = await picture(320, 240)
  const set = await callTool(admin, 'set_item_photo', { restaurant_id: a.storeId, item_id: a.menu.fries, image: `data:image/png;base64,${png.toString('base64')}` })
  t.notOk(set.isError, JSON.stringify(set.json))
  t.match(set.json.photo, { url: /\/media\/items\/[0-9a-f]{32}\.jpg$/, thumb_url: /-thumb\.jpg$/ })
  t.match(await sharp((await fetchBytes(set.json.photo.url)).bytes).metadata(), { width: 320, height: 240, format: 'jpeg' })
  const menu = await callTool(admin, 'get_menu', { restaurant_id: a.storeId })
  const fries = menu.json.flatMap((c: { items: Array<{ id: number }> }) => c.items).find((i: { id: number }) => i.id === a.menu.fries)
  t.same(fries.photo, set.json.photo, 'get_menu shows it')
  t.equal(fries.images[0], set.json.photo.url)

  const bad = await callTool(admin, 'set_item_photo', { restaurant_id: a.storeId, item_id: a.menu.fries, image: Buffer.from('plain text').toString('base64') })
  t.ok(bad.isError, 'not an image: a tool error')
  const theirs = await callTool(admin, 'set_item_photo', { restaurant_id: other.storeId, item_id: other.menu.fries, image: png.toString('base64') })
  t.ok(theirs.isError, "another account's store: refused")

  const cats = (await callTool(admin, 'list_categories', { restaurant_id: a.storeId })).json as Array<{ id: number }>
  const reordered = await callTool(admin, 'reorder_categories', { restaurant_id: a.storeId, ids: cats.map((c) => c.id).reverse() })
  t.notOk(reordered.isError, JSON.stringify(reordered.json))
  t.same(reordered.json.map((c: { id: number }) => c.id), cats.map((c) => c.id).reverse())

  const removed = await callTool(admin, 'remove_item_photo', { restaurant_id: a.storeId, item_id: a.menu.fries })
  t.equal(removed.json.photo, null)
  t.equal((await fetchBytes(set.json.photo.url)).status, 404)
})
