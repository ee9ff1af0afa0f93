import t from 'tap'
import { startServer } from './helpers/server.ts'

t.test('a fresh server answers health, discovery and an owner order round trip', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const demo = s.seed()
  t.equal((await s.req('GET', `${s.site}/healthz`)).status, 200)
  const idx = await s.req('GET', '')
  t.equal(idx.body.version, 'v1')
  const menu = await s.req('GET', `/restaurants/${demo.store.id}/menu`, { token: demo.owner.token })
  const item = menu.body[0].items[0]
  const created = await s.req('POST', `/restaurants/${demo.store.id}/orders`, {
    token: demo.owner.token,
    body: { type: 'takeaway', items: [{ item_id: item.id, quantity: 2 }] },
  })
  t.equal(created.status, 200)
  t.equal(created.body.total, item.price * 2)
  t.match(created.body.track_token, /^trk_/)
})
