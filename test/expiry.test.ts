/**
 * Expiry batches (issue 18 item 4, docs/verticals.md "Expiry"): only unexpired batch quantities are
 * sellable, first-expiring first (FEFO), the same 422 `out_of_stock` beyond them, batches only where
 * the vertical has `expiry`, cancellation puts units back into the batches they came from.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createCategory, createCustomer, isError, postOrder } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db

// The store's own time zone decides "today": far east, so a UTC date would be wrong half the day.
const pharmacy = createAccount(db, { type: 'pharmacy' })
db.prepare('UPDATE stores SET settings = ? WHERE id = ?').run(JSON.stringify({ timezone: 'Pacific/Kiritimati' }), pharmacy.storeId)
const cat = createCategory(db, pharmacy.storeId, 'Medicine')
const day = (offset: number) => {
  const local = new Intl.DateTimeFormat('en-CA', { timeZone: 'Pacific/Kiritimati', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date())
  const d = new Date(`${local}T00:00:00Z`)
  d.setUTCDate(d.getUTCDate() + offset)
  return d.toISOString().slice(0, 10)
}
const base = `/restaurants/${pharmacy.storeId}/menu/items`
const api = (method: string, path: string, body?: unknown) => s.req(method, path, { token: pharmacy.token, body })
const order = (items: unknown[]) => postOrder(s, pharmacy.token, pharmacy.storeId, { type: 'delivery', address: '1 Main St', items })
const qty = (id: number) => db.prepare('SELECT quantity FROM item_batches WHERE id = ?').pluck().get(id) as number

t.test('expired batches are not sellable; orders take first-expiring first', async (t) => {
  const item = (await api('POST', base, { name: 'Aspirin', price: 4, category_id: cat })).body
  const batch = async (expires_on: string, quantity: number, batch_code: string) => {
    const r = await api('POST', `${base}/${item.id}/batches`, { expires_on, quantity, batch_code })
    t.equal(r.status, 200)
    return r.body
  }
  const expired = await batch(day(-1), 50, 'OLD')
  const late = await batch(day(30), 3, 'LATE')
  const soon = await batch(day(0), 2, 'TODAY') // expires today: still sellable today
  t.equal(expired.expired, true)
  t.equal(soon.expired, false)
  const listed = (await api('GET', `${base}/${item.id}/batches`)).body
  t.same(listed.map((b: any) => b.batch_code), ['OLD', 'TODAY', 'LATE'], 'listed first-expiring first')
  const shown = (await api('GET', `/restaurants/${pharmacy.storeId}/menu`)).body.flatMap((c: any) => c.items).find((i: any) => i.id === item.id)
  t.equal(shown.stock, 5, 'stock is the unexpired quantity')

  const r = await order([{ item_id: item.id, quantity: 6 }])
  isError(t, r, 422, 'out_of_stock')
  t.match(r.body.errors['items.0.quantity'][0], /Only 5 of Aspirin left/)
  t.equal(qty(expired.id), 50, 'expired stock untouched')

  const ok = await order([{ item_id: item.id, quantity: 3 }])
  t.equal(ok.status, 200)
  t.equal(qty(soon.id), 0, 'the batch expiring first went first')
  t.equal(qty(late.id), 2)
  t.equal(qty(expired.id), 50)

  t.equal((await api('PUT', `/restaurants/${pharmacy.storeId}/orders/${ok.body.id}/status`, { status: 'cancelled' })).status, 200)
  t.same([qty(soon.id), qty(late.id)], [2, 3], 'cancellation puts units back into their batches')

  // Deleting the last unexpired batches leaves only expired stock: sold out.
  t.equal((await api('DELETE', `${base}/${item.id}/batches/${soon.id}`)).status, 204)
  t.equal((await api('DELETE', `${base}/${item.id}/batches/${late.id}`)).status, 204)
  isError(t, await order([{ item_id: item.id, quantity: 1 }]), 422, 'out_of_stock')
  const after = (await api('GET', `/restaurants/${pharmacy.storeId}/menu`)).body.flatMap((c: any) => c.items).find((i: any) => i.id === item.id)
  t.match(after, { stock: 0, is_sold_out: true })
  const customer = createCustomer(db, pharmacy.storeId)
  isError(t, await s.req('POST', '/customer/orders', { token: customer.token, body: { type: 'delivery', address: '1 Main St', items: [{ item_id: item.id, quantity: 1 }] } }), 422, 'out_of_stock', 'customer app')
})

t.test('batches only where the vertical has expiry; bad input and other owners', async (t) => {
  const retail = createAccount(db, { type: 'retail' })
  const r = await s.req('POST', `/restaurants/${retail.storeId}/menu/items/${retail.menu.fries}/batches`, { token: retail.token, body: { expires_on: day(5), quantity: 1 } })
  isError(t, r, 422, 'not_for_store_type')
  t.equal(db.prepare('SELECT COUNT(*) FROM item_batches i JOIN menu_items m ON m.id = i.item_id WHERE m.store_id = ?').pluck().get(retail.storeId), 0)
  isError(t, await api('POST', `${base}/${pharmacy.menu.fries}/batches`, { expires_on: '2025-02-30', quantity: 1 }), 422, 'validation_failed')
  isError(t, await api('POST', `${base}/${pharmacy.menu.fries}/batches`, { expires_on: day(1), quantity: -1 }), 422, 'validation_failed')
  // Another owner's item: 404 whatever the body (the policy resolves the store first).
  isError(t, await s.req('POST', `/restaurants/${pharmacy.storeId}/menu/items/${pharmacy.menu.fries}/batches`, { token: retail.token, body: { bad: true } }), 404, 'not_found')
  isError(t, await api('GET', `${base}/${retail.menu.fries}/batches`), 404, 'not_found')
})

t.test('a cancellation reaching a store actor that was passivated meanwhile does not count its units twice', async (t) => {
  // Review fix: the store actor used to add `items_changed` moves to counts it had just loaded from
  // SQLite, which already held them. The doubled batch was then picked first (FEFO), the insert's guard
  // refused it, and orders the other batch could fill were answered 422 until the actor reloaded.
  const item = (await api('POST', base, { name: 'Ibuprofen', price: 3, category_id: cat })).body
  const soon = (await api('POST', `${base}/${item.id}/batches`, { expires_on: day(5), quantity: 2 })).body
  const late = (await api('POST', `${base}/${item.id}/batches`, { expires_on: day(40), quantity: 5 })).body
  const first = await order([{ item_id: item.id, quantity: 2 }])
  t.equal(first.status, 200, first.text)
  t.same([qty(soon.id), qty(late.id)], [0, 5])
  s.app.svc.actors.stores.evict(pharmacy.storeId)
  t.equal((await api('PUT', `/restaurants/${pharmacy.storeId}/orders/${first.body.id}/status`, { status: 'cancelled' })).status, 200)
  t.same([qty(soon.id), qty(late.id)], [2, 5], 'units back in SQLite')
  const next = await order([{ item_id: item.id, quantity: 3 }])
  t.equal(next.status, 200, `two from the first batch and one from the next are sellable: ${next.text}`)
  t.same([qty(soon.id), qty(late.id)], [0, 4])
  isError(t, await order([{ item_id: item.id, quantity: 5 }]), 422, 'out_of_stock')
  t.equal((await order([{ item_id: item.id, quantity: 4 }])).status, 200, 'the held counts match SQLite')
})
