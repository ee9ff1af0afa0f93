/**
 * Reopening a cancelled order takes its stock again (docs/verticals.md "Stock and variants"): a
 * kitchen override out of `cancelled` takes the lines' stock in the same transaction as the status,
 * or is refused whole with 422 `out_of_stock` (nothing written: no status, no event, no stock move);
 * cancelling again puts it back once; untracked lines take nothing; a reopening and a new order
 * racing for the last unit never both get it; expired batches are not taken. Last, the store actor's
 * held counts stay exactly SQLite's when re-reads (cancellations, reopenings) meet orders committing.
 */
import t, { type Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createCategory, isError, outbox, postOrder } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db

const retail = createAccount(db, { type: 'retail' })
const cat = createCategory(db, retail.storeId, 'Goods')
const api = (method: string, path: string, body?: unknown) => s.req(method, path, { token: retail.token, body })
/** Through the API: the store actor holds the menu once a request touched the store. */
const item = async (name: string, stock: number | null): Promise<number> => {
  const r = await api('POST', `/restaurants/${retail.storeId}/menu/items`, { name, price: 5, stock, category_id: cat })
  if (r.status !== 200) throw new Error(r.text)
  return r.body.id as number
}
const order = (items: unknown[]) => postOrder(s, retail.token, retail.storeId, { type: 'delivery', address: '1 Main St', items })
const setStatus = (orderId: number, status: string) => api('PUT', `/restaurants/${retail.storeId}/orders/${orderId}/status`, { status })
const statusOf = async (orderId: number) => (await api('GET', `/restaurants/${retail.storeId}/orders/${orderId}`)).body.status as string
/** The item as the owner's menu shows it. */
const shown = async (id: number) => {
  const menu = (await api('GET', `/restaurants/${retail.storeId}/menu`)).body as Array<{ items: any[] }>
  return menu.flatMap((c) => c.items).find((i) => i.id === id)
}
const stockOf = (id: number) => db.prepare('SELECT stock FROM menu_items WHERE id = ?').pluck().get(id) as number | null
const movesOf = (orderId: number) => db.prepare('SELECT counter, quantity FROM stock_moves WHERE order_id = ? ORDER BY id').all(orderId) as Array<{ counter: string; quantity: number }>
const statusEvents = (orderId: number) => outbox(db, 'order.status_changed').filter((e) => e.data.order_id === orderId).map((e) => e.data.status as string)

/** Exactly `n` of the racing requests won; every other one was refused 422 out_of_stock naming the item. */
function winners(t: Test, results: Array<{ status: number; body: any }>, n: number, name: string, msg: string) {
  t.equal(results.filter((r) => r.status === 200).length, n, msg)
  for (const r of results) {
    if (r.status === 200) continue
    isError(t, r as never, 422, 'out_of_stock')
    t.match(r.body.errors['items.0.quantity'][0], new RegExp(`${name} is out of stock`))
  }
}

t.test('an order already holding its stock (a reopening committed but its reply lost) takes nothing again', async (t) => {
  const held = await item('Reopen held', 2)
  const o = await order([{ item_id: held, quantity: 1 }])
  t.equal(o.status, 200, o.text)
  t.equal((await setStatus(o.body.id, 'cancelled')).status, 200)
  t.equal(stockOf(held), 2)
  // What a reopening whose commit succeeded leaves in SQLite, while the order's actor, whose reply
  // failed after the commit, still holds the order as cancelled.
  db.prepare("INSERT INTO stock_moves (order_id, line_index, item_id, variant_id, batch_id, counter, quantity) VALUES (?, 0, ?, NULL, NULL, 'item', 1)").run(o.body.id, held)
  db.prepare('UPDATE menu_items SET stock = stock - 1 WHERE id = ?').run(held)
  const again = await setStatus(o.body.id, 'new')
  t.equal(again.status, 200, again.text)
  t.equal(stockOf(held), 1, 'not taken a second time')
  t.equal(movesOf(o.body.id).length, 1)
})

t.test('cancel puts stock back, reopening takes it again, cancelling again puts it back once', async (t) => {
  const lamp = await item('Reopen lamp', 3)
  const shirt = await item('Reopen shirt', null)
  const small = (await api('POST', `/restaurants/${retail.storeId}/menu/items/${shirt}/variants`, { name: 'S', sku: 'RS-S', stock: 2, price: 9 })).body
  const o = await order([{ item_id: lamp, quantity: 3 }, { item_id: shirt, variation: small.id, quantity: 2 }])
  t.equal(o.status, 200, o.text)
  const variantStock = () => db.prepare('SELECT stock FROM item_variants WHERE id = ?').pluck().get(small.id) as number
  t.same([stockOf(lamp), variantStock()], [0, 0])

  t.equal((await setStatus(o.body.id, 'cancelled')).status, 200)
  t.same([stockOf(lamp), variantStock()], [3, 2], 'cancel: stock back')
  t.same(movesOf(o.body.id), [])

  const reopened = await setStatus(o.body.id, 'preparing')
  t.equal(reopened.status, 200, reopened.text)
  t.equal(reopened.body.status, 'preparing')
  t.same([stockOf(lamp), variantStock()], [0, 0], 'reopen: taken again in SQLite')
  t.equal((await shown(lamp)).stock, 0, 'the menu shows it taken')
  t.equal((await shown(lamp)).is_sold_out, true)
  t.same((await shown(shirt)).variations.map((v: any) => v.stock), [0])
  t.same(movesOf(o.body.id).map((m) => m.counter).sort(), ['item', 'variant'], 'the moves are recorded, to put back on the next cancel')
  t.same(statusEvents(o.body.id), ['cancelled', 'preparing'])
  // The store actor's held counts took it too: the next order is refused by its allocation (not
  // only by SQLite's guard, whose message is "Not enough left in stock.").
  const next = await order([{ item_id: lamp, quantity: 1 }])
  isError(t, next, 422, 'out_of_stock')
  t.match(next.body.errors['items.0.quantity'][0], /Reopen lamp is out of stock/, 'refused from the held counts')
  const nextShirt = await order([{ item_id: shirt, variation: small.id, quantity: 1 }])
  isError(t, nextShirt, 422, 'out_of_stock')
  t.match(nextShirt.body.errors['items.0.quantity'][0], /Reopen shirt \(S\) is out of stock/)

  t.equal((await setStatus(o.body.id, 'cancelled')).status, 200)
  t.same([stockOf(lamp), variantStock()], [3, 2], 'cancel after reopen: back again')
  t.equal((await setStatus(o.body.id, 'cancelled')).status, 200, 'the same status again is no change')
  t.same([stockOf(lamp), variantStock()], [3, 2], 'restored once, not twice')
  // A second round trip behaves the same (the moves of the reopening were recorded and deleted).
  t.equal((await setStatus(o.body.id, 'new')).status, 200)
  t.same([stockOf(lamp), variantStock()], [0, 0])
  t.equal((await setStatus(o.body.id, 'cancelled')).status, 200)
  t.same([stockOf(lamp), variantStock()], [3, 2])
  // And the held counts follow every step: exactly the 3 restored units can be sold.
  isError(t, await order([{ item_id: lamp, quantity: 4 }]), 422, 'out_of_stock')
  t.equal((await order([{ item_id: lamp, quantity: 3 }])).status, 200)
  t.equal(stockOf(lamp), 0)
})

t.test('reopening when another order took the stock is refused whole: nothing written', async (t) => {
  const mug = await item('Reopen mug', 5)
  const kettle = await item('Reopen kettle', 2)
  const a = await order([{ item_id: mug, quantity: 2 }, { item_id: kettle, quantity: 2 }])
  t.equal(a.status, 200, a.text)
  t.equal((await setStatus(a.body.id, 'cancelled')).status, 200)
  const b = await order([{ item_id: kettle, quantity: 1 }])
  t.equal(b.status, 200, 'another order takes a kettle meanwhile')
  const before = { mug: stockOf(mug), kettle: stockOf(kettle), events: statusEvents(a.body.id), outbox: outbox(db).length }
  t.same([before.mug, before.kettle], [5, 1])

  const r = await setStatus(a.body.id, 'new')
  isError(t, r, 422, 'out_of_stock', 'the reopening')
  t.same(Object.keys(r.body.errors), ['items.1.quantity'], 'keyed by the short line, as at creation')
  t.match(r.body.errors['items.1.quantity'][0], /Only 1 of Reopen kettle left/)
  t.equal(await statusOf(a.body.id), 'cancelled', 'the order is still cancelled')
  t.same([stockOf(mug), stockOf(kettle)], [5, 1], 'stock unchanged, the line that fitted included')
  t.same(movesOf(a.body.id), [], 'no stock move')
  t.same(statusEvents(a.body.id), before.events, 'no order.status_changed')
  t.equal(outbox(db).length, before.outbox, 'no event at all')
  // The order actor kept `cancelled` too: setting it again changes nothing and emits nothing.
  t.equal((await setStatus(a.body.id, 'cancelled')).status, 200)
  t.same(statusEvents(a.body.id), before.events)
  // The held counts were not touched by the refusal: all 5 mugs and the 1 kettle still sell.
  const c = await order([{ item_id: mug, quantity: 5 }, { item_id: kettle, quantity: 1 }])
  t.equal(c.status, 200, c.text)
  t.same([stockOf(mug), stockOf(kettle)], [0, 0])

  // Once the stock is back the same reopening goes through.
  t.equal((await setStatus(b.body.id, 'cancelled')).status, 200)
  t.equal((await setStatus(c.body.id, 'cancelled')).status, 200)
  t.equal((await setStatus(a.body.id, 'new')).status, 200)
  t.same([stockOf(mug), stockOf(kettle)], [3, 0])
})

t.test('an order of untracked items reopens freely and takes nothing', async (t) => {
  const bag = await item('Reopen bag', null)
  const o = await order([{ item_id: bag, quantity: 50 }])
  t.equal(o.status, 200)
  t.equal((await setStatus(o.body.id, 'cancelled')).status, 200)
  const r = await setStatus(o.body.id, 'ready')
  t.equal(r.status, 200, r.text)
  t.equal(r.body.status, 'ready')
  t.equal(stockOf(bag), null, 'still untracked')
  t.same(movesOf(o.body.id), [])
  t.same(statusEvents(o.body.id), ['cancelled', 'ready'])
})

t.test('a deleted item takes nothing on reopening; the rest of the order does', async (t) => {
  const gone = await item('Reopen discontinued', 4)
  const kept = await item('Reopen kept', 4)
  const o = await order([{ item_id: gone, quantity: 1 }, { item_id: kept, quantity: 1 }])
  t.equal(o.status, 200)
  t.equal((await setStatus(o.body.id, 'cancelled')).status, 200)
  t.equal((await api('DELETE', `/restaurants/${retail.storeId}/menu/items/${gone}`)).status, 204)
  t.equal((await setStatus(o.body.id, 'new')).status, 200)
  t.equal(stockOf(kept), 3)
  t.same(movesOf(o.body.id), [{ counter: 'item', quantity: 1 }])
})

t.test('SQLite disagreeing with the held counts: the guard refuses the reopening, nothing written, counts re-read', async (t) => {
  const vase = await item('Reopen vase', 2)
  const o = await order([{ item_id: vase, quantity: 2 }])
  t.equal((await setStatus(o.body.id, 'cancelled')).status, 200)
  // Behind the store actor's back (it still holds 2): the write's guard (stock >= 2) must refuse.
  db.prepare('UPDATE menu_items SET stock = 1 WHERE id = ?').run(vase)
  const events = statusEvents(o.body.id)
  const r = await setStatus(o.body.id, 'new')
  isError(t, r, 422, 'out_of_stock')
  t.match(r.body.errors['items.0.quantity'][0], /Not enough left in stock/, 'refused by the guard, not the held counts')
  t.equal(await statusOf(o.body.id), 'cancelled')
  t.equal(stockOf(vase), 1)
  t.same(movesOf(o.body.id), [])
  t.same(statusEvents(o.body.id), events, 'no order.status_changed')
  // Ending the reservation re-read the item: the store actor holds SQLite's 1, neither its own 2
  // nor the 0 the reservation left.
  t.equal((await order([{ item_id: vase, quantity: 1 }])).status, 200, 'the one unit sells')
  const next = await order([{ item_id: vase, quantity: 1 }])
  isError(t, next, 422, 'out_of_stock')
  t.match(next.body.errors['items.0.quantity'][0], /Reopen vase is out of stock/, 'refused from the re-read held counts')
})

t.test('units a completed line refund gave back are not taken again', async (t) => {
  const shade = await item('Reopen shade', 5)
  const o = await order([{ item_id: shade, quantity: 3 }])
  t.equal(o.status, 200)
  const base = `/restaurants/${retail.storeId}/orders/${o.body.id}`
  t.equal((await api('POST', `${base}/payments`, { amount: o.body.total, method: 'card' })).status, 200)
  const refund = await api('POST', `${base}/refunds`, { lines: [{ line_id: o.body.items[0].id, quantity: 1 }] })
  t.equal(refund.status, 200, refund.text)
  t.equal(stockOf(shade), 3, 'one unit back on the shelf')
  t.equal((await setStatus(o.body.id, 'cancelled')).status, 200)
  t.equal(stockOf(shade), 5)
  t.equal((await setStatus(o.body.id, 'new')).status, 200)
  t.equal(stockOf(shade), 3, 'the two units still sold are taken, not the refunded one')
  t.equal((await setStatus(o.body.id, 'cancelled')).status, 200)
  t.equal(stockOf(shade), 5)
})

t.test('a reopening and a new order racing for the last unit: exactly one wins', async (t) => {
  for (let round = 0; round < 8; round++) {
    const lastOne = await item(`Reopen last ${round}`, 1)
    const a = await order([{ item_id: lastOne, quantity: 1 }])
    t.equal((await setStatus(a.body.id, 'cancelled')).status, 200)
    // Alternate which request leaves first.
    const [reopen, fresh] = round % 2 === 0
      ? await Promise.all([setStatus(a.body.id, 'new'), order([{ item_id: lastOne, quantity: 1 }])])
      : await Promise.all([order([{ item_id: lastOne, quantity: 1 }]), setStatus(a.body.id, 'new')]).then(([f, r]) => [r, f] as const)
    const wins = [reopen, fresh].filter((r) => r.status === 200)
    t.equal(wins.length, 1, `round ${round}: one of the two wins (${reopen.status}, ${fresh.status})`)
    for (const r of [reopen, fresh]) {
      if (r.status === 200) continue
      isError(t, r, 422, 'out_of_stock')
      // The loser was refused from the store actor's held counts, where both were allocated.
      t.match(r.body.errors['items.0.quantity'][0], new RegExp(`Reopen last ${round} is out of stock`))
    }
    t.equal(stockOf(lastOne), 0, 'never below zero')
    t.equal(await statusOf(a.body.id), reopen.status === 200 ? 'new' : 'cancelled')
  }
  // Reopenings racing each other: 3 units, 6 cancelled orders of 1 reopened at once. Each is
  // allocated from the held counts less the reservations before it, so the losers are refused there.
  const three = await item('Reopen three', 6)
  const six = await Promise.all(Array.from({ length: 6 }, () => order([{ item_id: three, quantity: 1 }])))
  for (const p of six) t.equal((await setStatus(p.body.id, 'cancelled')).status, 200)
  // The owner counts the shelf again: 3 left.
  t.equal((await api('PUT', `/restaurants/${retail.storeId}/menu/items/${three}`, { stock: 3 })).status, 200)
  t.equal(stockOf(three), 3)
  const reopens = await Promise.all(six.map((p) => setStatus(p.body.id, 'ready')))
  winners(t, reopens, 3, 'Reopen three', 'three of six reopenings win')
  t.equal(stockOf(three), 0)

  // Many at once: 5 units, 5 cancelled orders reopened while 5 new orders arrive.
  const five = await item('Reopen five', 5)
  const placed = await Promise.all(Array.from({ length: 5 }, () => order([{ item_id: five, quantity: 1 }])))
  for (const p of placed) t.equal((await setStatus(p.body.id, 'cancelled')).status, 200)
  t.equal(stockOf(five), 5)
  const results = await Promise.all([
    ...placed.map((p) => setStatus(p.body.id, 'preparing')),
    ...Array.from({ length: 5 }, () => order([{ item_id: five, quantity: 1 }])),
  ])
  winners(t, results, 5, 'Reopen five', 'exactly the 5 units went')
  t.equal(stockOf(five), 0)
  const held = db.prepare('SELECT COALESCE(SUM(quantity), 0) FROM stock_moves WHERE item_id = ?').pluck().get(five)
  t.equal(held, 5, 'the moves account for every unit taken')
})

t.test('expired batches are not taken on reopening', async (t) => {
  // The store-local date decides expiry: a batch expiring "today" far west has expired far east.
  const pharmacy = createAccount(db, { type: 'pharmacy' })
  const papi = (method: string, path: string, body?: unknown) => s.req(method, path, { token: pharmacy.token, body })
  t.equal((await papi('PUT', `/restaurants/${pharmacy.storeId}/settings`, { timezone: 'Etc/GMT+12' })).status, 200)
  const westToday = new Intl.DateTimeFormat('en-CA', { timeZone: 'Etc/GMT+12', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date())
  const pcat = createCategory(db, pharmacy.storeId, 'Medicine')
  const base = `/restaurants/${pharmacy.storeId}/menu/items`
  const pill = (await papi('POST', base, { name: 'Reopen pill', price: 4, category_id: pcat })).body
  const soon = (await papi('POST', `${base}/${pill.id}/batches`, { expires_on: westToday, quantity: 2, batch_code: 'SOON' })).body
  const qty = (id: number) => db.prepare('SELECT quantity FROM item_batches WHERE id = ?').pluck().get(id) as number
  const o = await postOrder(s, pharmacy.token, pharmacy.storeId, { type: 'delivery', address: '1 Main St', items: [{ item_id: pill.id, quantity: 2 }] })
  t.equal(o.status, 200, o.text)
  t.equal(qty(soon.id), 0)
  const set = (status: string) => papi('PUT', `/restaurants/${pharmacy.storeId}/orders/${o.body.id}/status`, { status })
  t.equal((await set('cancelled')).status, 200)
  t.equal(qty(soon.id), 2, 'back into its batch')
  // Now the store's day is later: that batch has expired, and nothing else is sellable.
  t.equal((await papi('PUT', `/restaurants/${pharmacy.storeId}/settings`, { timezone: 'Pacific/Kiritimati' })).status, 200)
  isError(t, await set('new'), 422, 'out_of_stock', 'only expired units left')
  t.equal(qty(soon.id), 2, 'the expired batch is not taken')
  const late = (await papi('POST', `${base}/${pill.id}/batches`, { expires_on: '2099-01-01', quantity: 3, batch_code: 'LATE' })).body
  const r = await set('new')
  t.equal(r.status, 200, r.text)
  t.same([qty(soon.id), qty(late.id)], [2, 1], 'taken from the unexpired batch')
})

t.test('re-reads while other orders commit leave the held counts equal to SQLite', async (t) => {
  // A cancellation or a reopening makes the store actor re-read the item, less what orders still
  // committing took. Orders whose transaction committed but whose WAL sync is still running must not
  // be subtracted twice: afterwards every unit SQLite holds must sell (the held counts are exact).
  const busy = await item('Reopen busy', 3000)
  const sellAll = async (what: string) => {
    const left = stockOf(busy)!
    const lines = Array.from({ length: Math.ceil(left / 999) }, (_, i) => ({ item_id: busy, quantity: Math.min(999, left - i * 999) }))
    const all = await order(lines)
    t.equal(all.status, 200, `${what}: all ${left} left sell: ${all.text}`)
    t.equal(stockOf(busy), 0)
    t.equal((await setStatus(all.body.id, 'cancelled')).status, 200)
    t.equal(stockOf(busy), left)
  }
  for (let round = 0; round < 6; round++) {
    const a = await order([{ item_id: busy, quantity: 1 }])
    const wave = () => Array.from({ length: 20 }, () => order([{ item_id: busy, quantity: 1 }]))
    const cancelled = await Promise.all([...wave(), setStatus(a.body.id, 'cancelled'), ...wave()])
    t.ok(cancelled.every((r) => r.status === 200), 'a cancellation among orders')
    await sellAll(`round ${round}, after a cancellation`)
    const reopened = await Promise.all([...wave(), setStatus(a.body.id, 'new'), ...wave()])
    t.ok(reopened.every((r) => r.status === 200), 'a reopening among orders')
    await sellAll(`round ${round}, after a reopening`)
  }
})
