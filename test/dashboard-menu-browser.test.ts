/**
 * Items as people sell them (issue 34 item 10), walked in Chromium by the demo owner on the Menu
 * page: a real PNG chosen in the item's file input and uploaded by the page, shown as the row's
 * thumbnail (loaded under the dashboard's CSP) and on the store website's menu and item pages;
 * variations renamed, added and removed and extras added in the item's dialog; a category and an
 * item moved with their buttons; the description edited; the page and the dialog axe-clean.
 */
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import type { Page } from 'playwright-core'
import { axeCheck, axePage } from './helpers/browser.ts'
import { READY, answerTo, dashboardForms } from './helpers/dashboard.ts'

const world = await dashboardForms(t)
if (world) {
  const { s, store, api, open } = world
  const dir = mkdtempSync(join(tmpdir(), 'menu-photo-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  // UPDATE_SCREENSHOTS=1 writes the pictures of docs/menu-photos.md into docs/screenshots.
  const shots = process.env.UPDATE_SCREENSHOTS === '1' ? new URL('../docs/screenshots/', import.meta.url).pathname : dir
  const pngFile = join(dir, 'dish.png')
  // A real PNG of a dish (drawn as SVG, rendered by sharp), 1600×1000.
  const dishSvg = `<svg xmlns="http://www.w3.org/2000/svg" width="1600" height="1000"><rect width="1600" height="1000" fill="#8d5a36"/>
    <circle cx="800" cy="500" r="440" fill="#f4f1ea"/><circle cx="800" cy="500" r="360" fill="#e0a548"/><circle cx="800" cy="500" r="320" fill="#c8321e"/>
    ${[[700, 400], [900, 380], [820, 560], [650, 600], [960, 620], [780, 300]].map(([x, y]) => `<circle cx="${x}" cy="${y}" r="55" fill="#f7e7b4"/>`).join('')}
    ${[[740, 470], [880, 480], [700, 700], [920, 540]].map(([x, y]) => `<ellipse cx="${x}" cy="${y}" rx="34" ry="18" fill="#2e8b3a" transform="rotate(30 ${x} ${y})"/>`).join('')}</svg>`
  writeFileSync(pngFile, await sharp(Buffer.from(dishSvg)).png().toBuffer())

  type Item = { id: number; name: string; description: string; photo: { url: string; thumb_url: string } | null; variations: Array<{ id: number; name: string; price: number | null }>; extras: Array<{ name: string; price: number; group: string | null }> }
  type Category = { id: number; name: string; items: Item[] }
  const menu = async () => (await api('GET', `/restaurants/${store}/menu`)).body as Category[]
  const itemOf = async (id: number) => (await menu()).flatMap((c) => c.items).find((i) => i.id === id)!
  const loaded = (page: Page, selector: string) =>
    page.waitForFunction(`(() => { const img = document.querySelector(${JSON.stringify(selector)}); return !!img && img.complete && img.naturalWidth > 0 })()`)

  const cats = await menu()
  const withItems = cats.filter((c) => c.items.length >= 2)
  t.ok(withItems.length >= 1 && cats.length >= 2, 'the demo menu has categories with items')
  const cat = withItems[0]!
  const dish = cat.items[0]!

  t.test('a photo chosen in the file input is uploaded, shown in the row and on the store website', async (t) => {
    const { page, clean } = await open(t, `/dashboard/menu?store=${store}`)
    const row = page.locator(`tr[data-item-id="${dish.id}"]`)
    await row.getByRole('button', { name: `Photo and options of ${dish.name}` }).click()
    const dialog = page.locator('dialog[open]')
    await dialog.getByLabel('Photo file').setInputFiles(pngFile)
    t.match(await answerTo(page, dialog.getByRole('button', { name: 'Upload photo' }), 'accepted'), /Photo of .* uploaded/)
    const after = await itemOf(dish.id)
    t.match(after.photo?.url, /\/media\/items\/[0-9a-f]{32}\.jpg$/, 'the item has its photo on the server')
    const thumb = `tr[data-item-id="${dish.id}"] img.thumb`
    await loaded(page, thumb)
    t.equal(await page.locator(thumb).getAttribute('src'), after.photo!.thumb_url, 'the row shows the thumbnail')
    await page.screenshot({ path: join(shots, 'dashboard-menu-photo.png') })
    const meta = await sharp(Buffer.from(await (await fetch(after.photo!.url)).arrayBuffer())).metadata()
    t.match(meta, { format: 'jpeg', width: 1200, height: 750 }, 'resized by the server')

    // The store website, as a customer sees it: the menu's thumbnail and the item page's photo.
    const site = (await api('GET', `/restaurants/${store}`)).body.url as string
    const customer = await page.context().newPage()
    await customer.setViewportSize({ width: 390, height: 844 })
    await customer.goto(`${site}/menu`)
    await loaded(customer, `img[src="${after.photo!.thumb_url}"]`)
    await customer.screenshot({ path: join(shots, 'website-menu-photo-phone.png') })
    await customer.goto(`${site}/items/${dish.id}`)
    await loaded(customer, `img[src="${after.photo!.url}"]`)
    await customer.screenshot({ path: join(shots, 'website-item-photo-phone.png') })
    t.equal(await customer.locator(`img[src="${after.photo!.url}"]`).getAttribute('alt'), dish.name, 'the item page names the photo')
    await customer.close()

    // A new photo replaces it (a new address); removing it leaves no photo.
    await page.locator(`tr[data-item-id="${dish.id}"]`).getByRole('button', { name: `Photo and options of ${dish.name}` }).click()
    const again = page.locator('dialog[open]')
    t.match(await answerTo(page, again.getByRole('button', { name: 'Remove photo' }), 'accepted'), /removed/)
    t.equal((await itemOf(dish.id)).photo, null, 'removed on the server')
    await page.locator(`tr[data-item-id="${dish.id}"]`).getByRole('button', { name: `Photo and options of ${dish.name}` }).click()
    await page.locator('dialog[open]').getByLabel('Photo file').setInputFiles(pngFile)
    await answerTo(page, page.locator('dialog[open]').getByRole('button', { name: 'Upload photo' }), 'accepted')
    t.ok((await itemOf(dish.id)).photo, 'uploaded again')
    clean()
  })

  t.test('variations and extras edited in the item\'s dialog; a file that is not an image is refused', async (t) => {
    // Start from two known variations.
    for (const v of dish.variations) await api('DELETE', `/restaurants/${store}/menu/items/${dish.id}/variants/${v.id}`)
    await api('POST', `/restaurants/${store}/menu/items/${dish.id}/variants`, { name: 'Small', price: null })
    await api('POST', `/restaurants/${store}/menu/items/${dish.id}/variants`, { name: 'Large', price: 19.5 })
    const { page, clean } = await open(t, `/dashboard/menu?store=${store}`)
    const openDialog = async () => {
      await page.locator(`tr[data-item-id="${dish.id}"]`).getByRole('button', { name: `Photo and options of ${dish.name}` }).click()
      return page.locator('dialog[open]')
    }
    let dialog = await openDialog()
    await page.screenshot({ path: join(shots, 'dashboard-menu-dialog.png') })
    const textFile = join(dir, 'notes.png')
    writeFileSync(textFile, 'not a picture at all')
    await dialog.getByLabel('Photo file').setInputFiles(textFile)
    t.match(await answerTo(page, dialog.getByRole('button', { name: 'Upload photo' }), 'refused'), /image/i, 'not an image: refused by the server')

    const vars = dialog.getByRole('form', { name: `Variations of ${dish.name}` })
    await vars.getByLabel('Variation 1', { exact: true }).fill('Regular')
    await vars.getByRole('button', { name: 'Remove variation 2' }).click()
    await vars.getByRole('button', { name: 'Add variation' }).click()
    await vars.getByLabel('Variation 3', { exact: true }).fill('Family size')
    await vars.getByLabel('Price of variation 3').fill('24.00')
    t.match(await answerTo(page, vars.getByRole('button', { name: 'Store variations' }), 'accepted'), /Variations of .* saved/)
    t.same((await itemOf(dish.id)).variations.map((v) => [v.name, v.price]), [['Regular', null], ['Family size', 24]], 'renamed, removed and added on the server')

    // Refused: a variation removed elsewhere since the dialog was drawn.
    dialog = await openDialog()
    const family = (await itemOf(dish.id)).variations.find((v) => v.name === 'Family size')!
    t.equal((await api('DELETE', `/restaurants/${store}/menu/items/${dish.id}/variants/${family.id}`)).status, 204, 'removed elsewhere meanwhile')
    const vars2 = dialog.getByRole('form', { name: `Variations of ${dish.name}` })
    await vars2.getByLabel('Price of variation 2').fill('25.00')
    t.match(await answerTo(page, vars2.getByRole('button', { name: 'Store variations' }), 'refused'), /\S/, 'a variation removed since: refused')
    t.same((await itemOf(dish.id)).variations.map((v) => v.name), ['Regular'], 'not brought back')
    await page.locator(`tr[data-item-id="${dish.id}"]`).getByText('Variants: Regular', { exact: true }).waitFor()

    dialog = await openDialog()
    const extras = dialog.getByRole('form', { name: `Extras of ${dish.name}` })
    const before = (await itemOf(dish.id)).extras.length
    // Refused: a price above the API's limit, with nothing written.
    await extras.getByRole('button', { name: 'Add extra' }).click()
    await extras.getByLabel(`Extra ${before + 1}`, { exact: true }).fill('Gold leaf')
    await extras.getByLabel(`Price of extra ${before + 1}`).fill('2000000')
    t.match(await answerTo(page, extras.getByRole('button', { name: 'Store extras' }), 'refused'), /\S/, 'a price above the limit: refused')
    t.equal((await itemOf(dish.id)).extras.length, before, 'no extra written')
    // Accepted: the same row, corrected.
    await extras.getByLabel(`Extra ${before + 1}`, { exact: true }).fill('Truffle oil')
    await extras.getByLabel(`Price of extra ${before + 1}`).fill('3.25')
    await extras.getByLabel(`Group of extra ${before + 1}`).fill('Toppings')
    t.match(await answerTo(page, extras.getByRole('button', { name: 'Store extras' }), 'accepted'), /Extras of .* saved/)
    t.match((await itemOf(dish.id)).extras.at(-1), { name: 'Truffle oil', price: 3.25, group: 'Toppings' }, 'added on the server')
    await page.locator(`tr[data-item-id="${dish.id}"]`).getByText('Truffle oil', { exact: false }).waitFor()

    // The description in the row's own edit form.
    const row = page.locator(`tr[data-item-id="${dish.id}"]`)
    await row.getByRole('button', { name: 'Edit' }).click()
    await row.getByLabel('Description').fill('Slow-cooked, with herbs from the garden.')
    t.match(await answerTo(page, row.getByRole('button', { name: 'Save' }), 'accepted'), /saved/)
    t.equal((await itemOf(dish.id)).description, 'Slow-cooked, with herbs from the garden.')
    clean()
  })

  t.test('categories and items move up and down with their buttons', async (t) => {
    const { page, clean } = await open(t, `/dashboard/menu?store=${store}`)
    const before = await menu()
    const second = before[1]!
    t.match(await answerTo(page, page.getByRole('button', { name: `Move ${second.name} up`, exact: true }), 'accepted'), /moved up/)
    const after = await menu()
    t.same(after.map((c) => c.id).slice(0, 2), [second.id, before[0]!.id], 'the category moved up on the server')
    t.equal(await page.locator('section[data-category-id] h2').first().textContent(), second.name, 'and on the page')
    t.equal(await page.getByRole('button', { name: `Move ${second.name} up`, exact: true }).isDisabled(), true, 'the first cannot go further up')

    const c = after.find((x) => x.id === cat.id)!
    const [first, next] = c.items
    t.match(await answerTo(page, page.getByRole('button', { name: `Move ${first!.name} down`, exact: true }), 'accepted'), /moved down/)
    t.same((await menu()).find((x) => x.id === cat.id)!.items.slice(0, 2).map((i) => i.id), [next!.id, first!.id], 'the item moved down on the server')
    clean()
  })

  t.test('the Menu page and the item dialog have no serious accessibility problem', async (t) => {
    // The forms page's browser, in a context that lets the injected axe script past the CSP.
    const { page: signedIn } = await open(t, `/dashboard/menu?store=${store}`)
    const page = await axePage(t, signedIn.context().browser()!)
    await page.goto(`${s.site}/login?next=${encodeURIComponent('/dashboard/menu')}`)
    await page.locator('input[type=email]').fill(world.demo.owner.email)
    await page.locator('input[type=password]').fill(world.demo.owner.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL((u) => u.pathname === '/dashboard/menu')
    await page.waitForSelector(READY)
    await axeCheck(t, page, 'dashboard menu')
    await page.locator(`tr[data-item-id="${dish.id}"]`).getByRole('button', { name: `Photo and options of ${dish.name}` }).click()
    await page.locator('dialog[open]').waitFor()
    await axeCheck(t, page, 'dashboard menu item dialog')
  })
}
