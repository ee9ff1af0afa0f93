/**
 * Public reads on cluster replicas (issue 35; docs/cluster.md "Public reads on replicas"): three
 * nats-servers and two nodes on loopback. A replica answers the public menu, the tracking view and
 * page, the store website's pages and the catalog (API and MCP) from its own database, saying so in
 * `X-Dispatch-Served-By`, with the primary's bytes (and the primary's ETags: a 304 from either node);
 * a menu change shows once the replica applied it; a write through the replica is still forwarded;
 * `/readyz` counts the reads served locally. A replica that stopped applying the stream forwards the
 * same reads to the primary instead; at promotion the full server takes the port over, and the
 * demoted node serves reads again only once it is current. No timing assertions: every wait is
 * "until", with generous bounds.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { request } from './helpers/server.ts'
import { appliedUpTo, hasNats, NATS_SERVER, primaryOf, startNats, startNode, waitFor, type ClusterNodeProcess, type NatsCluster } from './helpers/cluster.ts'

t.setTimeout(360_000)

const SERVED_BY = 'x-dispatch-served-by'

if (!hasNats()) {
  t.fail(`${NATS_SERVER} is missing: apt-get install -y nats-server (.ci/run does this)`)
} else {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-cluster-reads-'))
  const nats: NatsCluster = await startNats(3)
  const nodes: ClusterNodeProcess[] = []
  t.teardown(async () => {
    for (const n of nodes) await n.stop()
    await nats.stop()
    rmSync(dir, { recursive: true, force: true })
  })
  const CLUSTER = `r${process.pid}`
  // A generous bound: a replica a message behind reports the age of the last message it applied,
  // which on an idle test cluster can be seconds (the bound itself is checked where it is crossed below).
  const start = async (id: string) => {
    // One SITE_URL for every node, as deployed: absolute links in answers are the site's, not a node's.
    const n = await startNode(nats, CLUSTER, id, dir, { CLUSTER_READ_LAG_MS: '600000', SITE_URL: 'http://dispatch.test' })
    nodes.push(n)
    return n
  }
  const n1 = await start('n1')
  let primary = await primaryOf([n1])
  const n2 = await start('n2')
  await waitFor(() => n1.output().includes('Demo account created'), 60_000, 'the demo account')
  const demo = JSON.parse(/Demo account created \(shown once, keep it\):\n(\{[\s\S]*?\n\})\n/.exec(n1.output())![1]!) as { owner: { token: string }; store: { id: number } }
  const token = demo.owner.token
  const storeId = demo.store.id
  /** A request to a node; a kept-alive connection to a listener the node just replaced is retried once on a new one. */
  const call = (node: ClusterNodeProcess, method: string, url: string, opts: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: string } = {}) =>
    request(`${node.sp.site}${url}`, method, opts).catch((err: { cause?: { code?: string } }) => {
      if (err.cause?.code !== 'ECONNRESET' && err.cause?.code !== 'UND_ERR_SOCKET') throw err
      return request(`${node.sp.site}${url}`, method, { ...opts, headers: { ...opts.headers, connection: 'close' } })
    })
  const owner = (method: string, path: string, body?: unknown) => call(primary, method, `/api/v1${path}`, { token, body })
  /**
   * The replica has applied everything the primary had when this was called, and answers the reads
   * itself (its /readyz `local_reads.refused` is null: it has also read the stream's length lately).
   */
  const caughtUp = async (replica: ClusterNodeProcess) => {
    await appliedUpTo(replica, (await primary.readyz()).body.applied_seq as number)
    await waitFor(async () => (await replica.readyz()).body.local_reads?.refused === null, 60_000, `${replica.id} to answer reads itself`)
  }
  const served = async (node: ClusterNodeProcess) => (await node.readyz()).body.local_reads?.served as number

  const slug = new URL((await owner('GET', `/restaurants/${storeId}`)).body.url as string).pathname
  let trackToken = ''

  t.test('the public menu on a replica: answered by the replica, the primary\'s bytes, and a change once applied', async (t) => {
    await caughtUp(n2)
    const before = await served(n2)
    const there = await call(n2, 'GET', `/api/v1/menu/${storeId}`)
    const here = await call(primary, 'GET', `/api/v1/menu/${storeId}`)
    t.equal(there.status, 200)
    t.equal(there.headers.get(SERVED_BY), 'n2', 'answered by the replica, and it says so')
    t.match(there.headers.get('x-dispatch-lag-ms'), /^\d+$/, 'with how far behind it was')
    t.equal(here.headers.get(SERVED_BY), null, 'the primary adds nothing')
    t.equal(there.text, here.text, 'byte for byte the primary\'s answer')
    t.equal(there.headers.get('content-type'), here.headers.get('content-type'))
    t.equal(there.headers.get('x-ratelimit-limit'), here.headers.get('x-ratelimit-limit'), 'the same rate limit rules')
    t.equal(await served(n2), before + 1, '/readyz counts the read served locally')
    const head = await call(n2, 'HEAD', `/api/v1/menu/${storeId}`)
    t.equal(head.headers.get(SERVED_BY), 'n2', 'HEAD too')
    t.equal(head.text, '')

    const category = (await owner('GET', `/restaurants/${storeId}/menu`)).body[0].id as number
    const added = await owner('POST', `/restaurants/${storeId}/menu/items`, { name: 'Replica Ramen', price: 12.5, category_id: category })
    t.equal(added.status, 200, added.text.slice(0, 200))
    await caughtUp(n2)
    const after = await call(n2, 'GET', `/api/v1/menu/${storeId}`)
    t.equal(after.headers.get(SERVED_BY), 'n2')
    t.match(after.text, /Replica Ramen/, 'the new item, once the replica applied it')
    t.equal(after.text, (await call(primary, 'GET', `/api/v1/menu/${storeId}`)).text)
    const missing = await call(n2, 'GET', '/api/v1/menu/999999')
    t.equal(missing.status, 404, 'a store the replica does not hold: the primary\'s answer')
    t.equal(missing.headers.get(SERVED_BY), null, 'forwarded (it may be a store created a moment ago)')
  })

  t.test('a write through the replica is forwarded; the tracking view and page are then the replica\'s', async (t) => {
    const item = (await call(primary, 'GET', `/api/v1/menu/${storeId}`)).body[0].items[0].id as number
    const placed = await call(n2, 'POST', `/api/v1/restaurants/${storeId}/orders`, { token, body: { type: 'takeaway', items: [{ item_id: item, quantity: 1 }], customer_name: 'Reads', phone: '+4915100000043' } })
    t.equal(placed.status, 200, placed.text.slice(0, 200))
    t.equal(placed.headers.get(SERVED_BY), null, 'the write went to the primary')
    trackToken = placed.body.track_token
    t.equal((await owner('GET', `/restaurants/${storeId}/orders/${placed.body.id}`)).status, 200, 'and the primary holds the order')
    // Right after the write the replica may not hold it yet: then the primary answers, never a 404.
    t.equal((await call(n2, 'GET', `/api/v1/track/${trackToken}`)).status, 200, 'the order just placed is found through the replica at once')
    await caughtUp(n2)
    const view = await call(n2, 'GET', `/api/v1/track/${trackToken}`)
    t.equal(view.headers.get(SERVED_BY), 'n2')
    t.same(view.body, (await call(primary, 'GET', `/api/v1/track/${trackToken}`)).body, 'the tracking view as the primary shows it')
    const page = await call(n2, 'GET', `/t/${trackToken}`)
    t.equal(page.status, 200)
    t.equal(page.headers.get(SERVED_BY), 'n2', 'the tracking page from the replica')
    t.match(page.headers.get('content-type'), /^text\/html/)
    t.match(page.text, new RegExp(`/ws/track/${trackToken}`), 'following the order\'s socket')
    const unknown = await call(n2, 'GET', '/t/no-such-token')
    t.equal(unknown.status, 404)
    t.equal(unknown.headers.get(SERVED_BY), null, 'an unknown token: the primary\'s page')
  })

  t.test('the store website from a replica: the primary\'s ETag, 304 from either node; signed-in customers go to the primary', async (t) => {
    await caughtUp(n2)
    const cookie = { cookie: 'csrf=abcdefghijklmnopqrstuvwxyz0123456789ABCD' }
    const here = await call(primary, 'GET', `${slug}/menu`, { headers: cookie })
    const there = await call(n2, 'GET', `${slug}/menu`, { headers: cookie })
    t.equal(there.status, 200)
    t.equal(there.headers.get(SERVED_BY), 'n2', 'the website\'s menu page from the replica')
    t.match(there.text, /Replica Ramen/)
    t.ok(here.headers.get('etag'), 'the page has an ETag')
    t.equal(there.headers.get('etag'), here.headers.get('etag'), 'the same page has the same ETag on every node')
    t.equal(there.headers.get('content-security-policy')?.replace(/'nonce-[^']+'/g, 'N'), here.headers.get('content-security-policy')?.replace(/'nonce-[^']+'/g, 'N'), 'the same policy (with nonces of its own)')
    const notModified = await call(n2, 'GET', `${slug}/menu`, { headers: { ...cookie, 'if-none-match': here.headers.get('etag')! } })
    t.equal(notModified.status, 304, 'the primary\'s ETag is fresh on the replica')
    t.equal(notModified.headers.get(SERVED_BY), 'n2')
    t.equal((await call(primary, 'GET', `${slug}/menu`, { headers: { ...cookie, 'if-none-match': there.headers.get('etag')! } })).status, 304, 'and the replica\'s on the primary')
    // A cart in the visitor's cookie, made by the primary's own form (so the cart and checkout pages price it).
    const item = (await call(primary, 'GET', `/api/v1/menu/${storeId}`)).body[0].items[0].id as number
    const added = await fetch(`${primary.sp.site}${slug}/cart`, {
      method: 'POST', redirect: 'manual', body: `csrf=${cookie.cookie.slice(5)}&item_id=${item}&quantity=2`,
      headers: { ...cookie, origin: 'http://dispatch.test', 'content-type': 'application/x-www-form-urlencoded' },
    })
    t.equal(added.status, 303, 'added to the cart')
    const cart = /cart=[^;]+/.exec(added.headers.get('set-cookie') ?? '')?.[0]
    t.ok(cart, 'the cart cookie')
    const withCart = { cookie: `${cookie.cookie}; ${cart}` }
    for (const page of ['', '/menu', `/items/${item}`, '/cart', '/checkout', '/account/login']) {
      const a = await call(primary, 'GET', `${slug}${page}`, { headers: withCart })
      const b = await call(n2, 'GET', `${slug}${page}`, { headers: withCart })
      t.equal(b.status, a.status, `${page || '/'}: the primary's status`)
      t.equal(b.headers.get(SERVED_BY), 'n2', `${page || '/'}: answered by the replica`)
      t.equal(b.headers.get('etag'), a.headers.get('etag'), `${page || '/'}: the same page`)
    }
    const unknownStore = await call(n2, 'GET', '/s/no-such-store/menu')
    t.equal(unknownStore.status, 404)
    t.equal(unknownStore.headers.get(SERVED_BY), null, 'a store the replica does not hold: the primary\'s page')
    const signedIn = await call(n2, 'GET', `${slug}/menu`, { headers: { cookie: `${cookie.cookie}; customer=dsc_whatever` } })
    t.equal(signedIn.status, 200)
    t.equal(signedIn.headers.get(SERVED_BY), null, 'a signed-in customer\'s page: the primary\'s')
    const checkout = await call(n2, 'POST', `${slug}/cart`, { raw: 'item_id=1', headers: { ...cookie, 'content-type': 'application/x-www-form-urlencoded' } })
    t.equal(checkout.headers.get(SERVED_BY), null, 'a form post is forwarded')
  })

  t.test('the catalog from a replica: its API and its MCP server', async (t) => {
    await caughtUp(n2)
    const here = await call(primary, 'GET', '/api/v1/catalog/stores?limit=5')
    const there = await call(n2, 'GET', '/api/v1/catalog/stores?limit=5')
    t.equal(there.status, 200, there.text.slice(0, 200))
    t.equal(there.headers.get(SERVED_BY), 'n2')
    t.equal(there.text, here.text)
    const rpc = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_store', arguments: { store: storeId } } })
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    const mcpHere = await call(primary, 'POST', '/mcp/catalog', { raw: rpc, headers })
    const mcpThere = await call(n2, 'POST', '/mcp/catalog', { raw: rpc, headers })
    t.equal(mcpThere.status, 200, mcpThere.text.slice(0, 200))
    t.equal(mcpThere.headers.get(SERVED_BY), 'n2', 'the catalog MCP server from the replica')
    t.equal(mcpThere.text, mcpHere.text)
  })

  t.test('a replica that stopped applying the stream forwards the reads to the primary', async (t) => {
    await caughtUp(n2)
    // The test breaks the replica's copy: the next order cannot be applied there (the applier stops
    // rather than apply half, and says so on /readyz).
    const file = new Database(n2.dbPath)
    file.exec("CREATE TRIGGER test_stop_applying BEFORE INSERT ON orders BEGIN SELECT RAISE(ABORT, 'stopped by the test'); END")
    file.close()
    const item = (await call(primary, 'GET', `/api/v1/menu/${storeId}`)).body[0].items[0].id as number
    t.equal((await owner('POST', `/restaurants/${storeId}/orders`, { type: 'takeaway', items: [{ item_id: item, quantity: 1 }], customer_name: 'Stale', phone: '+4915100000044' })).status, 200)
    await waitFor(async () => (await n2.readyz()).body.problem !== null, 60_000, 'n2 to stop applying')
    const forwardedBefore = (await n2.readyz()).body.local_reads.forwarded as number
    const servedBefore = await served(n2)
    const menu = await call(n2, 'GET', `/api/v1/menu/${storeId}`)
    t.equal(menu.status, 200)
    t.equal(menu.headers.get(SERVED_BY), null, 'answered by the primary')
    t.equal(menu.text, (await call(primary, 'GET', `/api/v1/menu/${storeId}`)).text)
    t.equal((await call(n2, 'GET', `/t/${trackToken}`)).headers.get(SERVED_BY), null, 'the tracking page too')
    const r = (await n2.readyz()).body
    t.match(r.local_reads.refused, /stopped by the test/, '/readyz says why it passes the reads on')
    t.equal(r.local_reads.served, servedBefore, 'nothing more served locally')
    t.equal(r.local_reads.forwarded, forwardedBefore + 2, '/readyz counts the reads it forwarded')
    // Started again on a file without the test's trigger: it catches up and serves again.
    const fixed = new Database(n2.dbPath)
    fixed.exec('DROP TRIGGER test_stop_applying')
    fixed.close()
    await n2.kill()
    await caughtUp(n2)
    await waitFor(async () => (await call(n2, 'GET', `/api/v1/menu/${storeId}`)).headers.get(SERVED_BY) === 'n2', 60_000, 'n2 to serve reads again')
    t.pass('a replica current again serves the reads again')
  })

  t.test('promotion: the full server takes the port over; the demoted node serves reads once current', async (t) => {
    await caughtUp(n2)
    // Stopped for good (not started again by its supervisor), so the replica is the one to take over.
    await n1.stop()
    nodes.splice(nodes.indexOf(n1), 1)
    primary = await primaryOf([n2])
    t.equal(primary, n2, 'the replica is primary')
    const menu = await call(n2, 'GET', `/api/v1/menu/${storeId}`)
    t.equal(menu.status, 200)
    t.equal(menu.headers.get(SERVED_BY), null, 'answered by the full server')
    t.equal((await n2.readyz()).body.local_reads, undefined, 'a primary serves no "local reads"')
    // The old primary comes back on its file, as a replica: reads of its own only once it knows it is current.
    const back = await start('n1')
    await waitFor(async () => (await back.readyz().catch(() => null))?.body.role === 'replica', 60_000, 'n1 to rejoin as a replica')
    await caughtUp(back)
    await waitFor(async () => (await call(back, 'GET', `/api/v1/menu/${storeId}`)).headers.get(SERVED_BY) === 'n1', 60_000, 'n1 to serve reads')
    t.equal((await call(back, 'GET', `/api/v1/menu/${storeId}`)).text, (await call(n2, 'GET', `/api/v1/menu/${storeId}`)).text, 'the demoted node answers what the new primary does')
  })
}
