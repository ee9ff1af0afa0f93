// The dashboard's Menu page (docs/dashboard.md "Menu"; issue 34 item 10): categories and items in
// their display order, moved up and down with buttons; per item the quick edit (name, price,
// description) in its row, and a dialog for its photo (the browser's file input, uploaded as the
// image itself), its variations and its extras. Every write is the owner API's.
import { API, act, api, apiToken, amount, formData, h, money, S, say, table, view, type Json } from './core.js'

/** Upload a file as the request body (the API takes the image itself; docs/menu-photos.md). */
async function uploadPhoto(itemId: number, file: File, retried = false): Promise<Json> {
  const t = await apiToken(retried)
  const res = await fetch(`${API}${S()}/menu/items/${itemId}/photo`, { method: 'POST', headers: { Authorization: `Bearer ${t}`, Accept: 'application/json', 'Content-Type': file.type || 'application/octet-stream' }, body: file })
  if (res.status === 401 && !retried) return uploadPhoto(itemId, file, true)
  const json = await res.json().catch(() => null) as Json
  if (!res.ok) throw Object.assign(new Error((json && json.message) || `HTTP ${res.status}`), { status: res.status, body: json })
  return json
}

/** `list` with the element at `i` moved by `by` (−1 up, +1 down). */
const moved = <T>(list: T[], i: number, by: number): T[] => {
  const out = [...list]
  const [x] = out.splice(i, 1)
  out.splice(i + by, 0, x!)
  return out
}

/** Two buttons that move `what` up or down in `ids` and send the new order to `path`. */
function moveButtons(what: string, ids: number[], i: number, path: string, done: () => Promise<void>): HTMLElement[] {
  const move = (by: number, word: string) => h('button', {
    type: 'button', class: 'move', 'aria-label': `Move ${what} ${word}`, title: `Move ${word}`, disabled: i + by < 0 || i + by >= ids.length,
    on: { click: act(async () => { await api('PUT', path, { ids: moved(ids, i, by) }); say(`${what} moved ${word}.`); await done() }) },
    text: by < 0 ? '↑' : '↓',
  })
  return [move(-1, 'up'), move(1, 'down')]
}

/** Rows of a list editor: each row's fields, and a button that removes the row. */
function listEditor(legend: string, rows: Json[], fields: (r: Json, n: number) => HTMLElement[], blank: Json): HTMLElement {
  const body = h('div', { class: 'rows' })
  let n = 0
  const add = (r: Json) => {
    const k = ++n
    const row: HTMLElement = h('div', { class: 'row list-row', data: { id: r.id ?? '' } }, fields(r, k),
      h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${legend.toLowerCase().replace(/s$/, '')} ${k}`, on: { click: () => row.remove() }, text: 'Remove' }))
    body.append(row)
  }
  rows.forEach(add)
  return h('fieldset', {}, h('legend', { text: legend }), body,
    h('button', { type: 'button', on: { click: () => add(blank) }, text: `Add ${legend.toLowerCase().replace(/s$/, '')}` }))
}
const rowsOf = (form: HTMLFormElement) => [...form.querySelectorAll<HTMLElement>('.list-row')].map((row) => {
  const v = (name: string) => row.querySelector<HTMLInputElement>(`[name="${name}"]`)?.value.trim() ?? ''
  return { id: Number(row.dataset.id) || null, v }
})

/** The item's dialog: photo, variations, extras. */
function itemDialog(i: Json, redraw: () => Promise<void>): HTMLDialogElement {
  const dialog = h('dialog', { 'aria-label': `Photo and options of ${i.name}`, data: { itemOptions: i.id } })
  const close = () => dialog.close()
  const photo = h('form', { class: 'card', 'aria-label': `Photo of ${i.name}`, on: { submit: act(async (ev) => {
    const file = ev.target.querySelector<HTMLInputElement>('input[type=file]')!.files?.[0]
    if (!file) throw new Error('Choose a photo first.')
    await uploadPhoto(i.id, file)
    say(`Photo of ${i.name} uploaded.`); close(); await redraw()
  }) } },
  h('h3', { text: 'Photo' }),
  i.photo ? h('img', { src: i.photo.thumb_url, alt: `Photo of ${i.name}`, class: 'photo-preview' }) : h('p', { class: 'muted', text: 'No photo yet.' }),
  h('label', {}, 'Photo file (JPEG, PNG or WebP)', h('input', { type: 'file', name: 'photo', accept: 'image/jpeg,image/png,image/webp', required: true })),
  h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary', text: 'Upload photo' }),
    i.photo ? h('button', { type: 'button', class: 'danger', on: { click: act(async () => {
      await api('DELETE', `${S()}/menu/items/${i.id}/photo`); say(`Photo of ${i.name} removed.`); close(); await redraw()
    }) }, text: 'Remove photo' }) : null))

  const variations = h('form', { class: 'card', 'aria-label': `Variations of ${i.name}`, on: { submit: act(async (ev) => {
    const rows = rowsOf(ev.target)
    const kept = new Set(rows.map((r) => r.id).filter((id) => id !== null))
    try {
      // Removed first (a renamed one may take a removed one's name), then changed and new, in the order shown.
      for (const old of i.variations || []) if (!kept.has(old.id)) await api('DELETE', `${S()}/menu/items/${i.id}/variants/${old.id}`)
      for (const [pos, r] of rows.entries()) {
        const data = { name: r.v('name'), price: r.v('price') === '' ? null : Number(r.v('price')), position: pos }
        if (r.id) await api('PUT', `${S()}/menu/items/${i.id}/variants/${r.id}`, data)
        else await api('POST', `${S()}/menu/items/${i.id}/variants`, data)
      }
    } catch (err) {
      // One call each, not one transaction: the page shows what the server now has, with the refusal.
      close(); await redraw().catch(() => {})
      throw err
    }
    say(`Variations of ${i.name} saved.`); close(); await redraw()
  }) } },
  h('h3', { text: 'Variations' }),
  h('p', { class: 'muted', text: 'Sizes or versions a customer picks one of. A blank price is the item\'s own.' }),
  listEditor('Variations', i.variations || [], (v, k) => [
    h('label', {}, `Variation ${k}`, h('input', { name: 'name', value: v.name ?? '', required: true, maxlength: 160 })),
    h('label', {}, `Price of variation ${k}`, h('input', { name: 'price', type: 'number', step: '0.01', min: '0', value: amount(v.price) })),
  ], { name: '', price: null }),
  h('button', { type: 'submit', class: 'primary', text: 'Store variations' }))

  const extras = h('form', { class: 'card', 'aria-label': `Extras of ${i.name}`, on: { submit: act(async (ev) => {
    const list = rowsOf(ev.target).map((r) => ({ name: r.v('name'), price: Number(r.v('price') || 0), group: r.v('group') || null }))
    await api('PUT', `${S()}/menu/items/${i.id}`, { extras: list })
    say(`Extras of ${i.name} saved.`); close(); await redraw()
  }) } },
  h('h3', { text: 'Extras' }),
  h('p', { class: 'muted', text: 'Add-ons a customer may add any of, each at its price; a group heads them together.' }),
  listEditor('Extras', i.extras || [], (e, k) => [
    h('label', {}, `Extra ${k}`, h('input', { name: 'name', value: e.name ?? '', required: true, maxlength: 160 })),
    h('label', {}, `Price of extra ${k}`, h('input', { name: 'price', type: 'number', step: '0.01', min: '0', value: amount(e.price), required: true })),
    h('label', {}, `Group of extra ${k}`, h('input', { name: 'group', value: e.group ?? '', maxlength: 80 })),
  ], { name: '', price: 0, group: null }),
  h('button', { type: 'submit', class: 'primary', text: 'Store extras' }))

  dialog.append(h('h2', { text: i.name }), photo, variations, extras, h('p', {}, h('button', { type: 'button', on: { click: close }, text: 'Close' })))
  return dialog
}

export async function menuPage(): Promise<void> {
  const draw = async (): Promise<void> => {
    const cats = await api('GET', `${S()}/menu`) as Json[]
    const addItem = h('form', { class: 'card', on: { submit: act(async (ev) => {
      const f = formData(ev.target)
      await api('POST', `${S()}/menu/items`, { category_id: Number(f.category_id), name: f.name, price: Number(f.price) })
      say(`${f.name} added.`); await draw()
    }) } }, h('h2', { text: 'Add an item' }),
    h('label', {}, 'Category', h('select', { name: 'category_id', required: true }, cats.map((c) => h('option', { value: c.id, text: c.name })))),
    h('label', {}, 'Name', h('input', { name: 'name', required: true, maxlength: 120 })),
    h('label', {}, 'Price', h('input', { name: 'price', type: 'number', step: '0.01', min: '0', required: true })),
    h('button', { type: 'submit', class: 'primary', text: 'Add item' }))
    const addCat = h('form', { class: 'card row', on: { submit: act(async (ev) => {
      const f = formData(ev.target)
      await api('POST', `${S()}/menu/categories`, { name: f.name })
      say(`Category ${f.name} added.`); await draw()
    }) } }, h('label', {}, 'New category', h('input', { name: 'name', required: true, maxlength: 120 })), h('button', { type: 'submit', text: 'Add category' }))

    const dialogs: HTMLDialogElement[] = []
    const itemRow = (c: Json, i: Json, n: number): HTMLElement => {
      const edit = h('form', { class: 'row', hidden: true, on: { submit: act(async (ev) => {
        const f = formData(ev.target)
        await api('PUT', `${S()}/menu/items/${i.id}`, { name: f.name, price: Number(f.price), description: f.description })
        say(`${f.name} saved.`); await draw()
      }) } },
      h('label', {}, 'Name', h('input', { name: 'name', value: i.name, required: true })),
      h('label', {}, 'Price', h('input', { name: 'price', type: 'number', step: '0.01', min: '0', value: i.price, required: true })),
      h('label', {}, 'Description', h('textarea', { name: 'description', rows: 2, maxlength: 2000, text: i.description || '' })),
      h('button', { type: 'submit', class: 'primary', text: 'Save' }))
      const options = itemDialog(i, draw)
      dialogs.push(options)
      const variants = (i.variations || []).map((v: Json) => `${v.name}${v.price == null ? '' : ` ${money(v.price)}`}`).join(', ')
      const extras = (i.extras || []).map((e: Json) => `${e.name} +${money(e.price)}`).join(', ')
      const ids = c.items.map((x: Json) => x.id as number)
      return h('tr', { data: { itemId: i.id } },
        h('td', {}, h('div', { class: 'item-cell' },
          i.photo ? h('img', { src: i.photo.thumb_url, alt: '', class: 'thumb', width: 48, height: 48 }) : null,
          h('div', {}, h('span', { text: i.name }),
            i.description ? h('div', { class: 'muted', text: i.description }) : null,
            variants ? h('div', { class: 'muted', text: `Variants: ${variants}` }) : null,
            extras ? h('div', { class: 'muted', text: `Extras: ${extras}` }) : null)), edit),
        h('td', { class: 'num', text: money(i.price) }),
        h('td', {}, h('span', { class: i.is_sold_out ? 'pill sold' : 'pill live', text: i.is_sold_out ? 'Sold out' : 'Available' })),
        h('td', {},
          moveButtons(i.name, ids, n, `${S()}/menu/categories/${c.id}/order`, draw), ' ',
          h('button', { type: 'button', data: { soldOut: i.is_sold_out ? 1 : 0 }, 'aria-pressed': i.is_sold_out ? 'true' : 'false', on: { click: act(async () => {
            const r = await api('PATCH', `${S()}/menu/items/${i.id}/sold-out`, { is_sold_out: !i.is_sold_out })
            say(`${i.name} is ${r.is_sold_out ? 'sold out' : 'available again'}.`); await draw()
          }) }, text: i.is_sold_out ? 'Mark available' : 'Mark sold out' }), ' ',
          h('button', { type: 'button', on: { click: () => { edit.hidden = !edit.hidden } }, text: 'Edit' }), ' ',
          h('button', { type: 'button', 'aria-label': `Photo and options of ${i.name}`, on: { click: () => options.showModal() }, text: 'Photo and options' }), ' ',
          h('button', { type: 'button', class: 'danger', on: { click: act(async () => {
            if (!confirm(`Delete ${i.name}?`)) return
            await api('DELETE', `${S()}/menu/items/${i.id}`); say(`${i.name} deleted.`); await draw()
          }) }, text: 'Delete' })))
    }
    const catIds = cats.map((c) => c.id as number)
    view.replaceChildren(addCat, ...cats.map((c, n) => h('section', { data: { categoryId: c.id } },
      h('div', { class: 'row category-head' }, h('h2', { text: c.name }), ...moveButtons(c.name, catIds, n, `${S()}/menu/order`, draw)),
      c.items.length ? table(['Item', 'Price', 'State', 'Actions'], c.items.map((i: Json, k: number) => itemRow(c, i, k))) : h('p', { class: 'muted', text: 'No items yet.' }))), addItem, ...dialogs)
  }
  await draw()
}
