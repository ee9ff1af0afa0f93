/**
 * The tenancy matrix for sockets and MCP tools (issue 21 item 2; api-v1 §1, §4.11; docs/realtime.md
 * "Connecting"), the other half of test/tenancy-matrix.test.ts, on the same two-account world
 * (test/helpers/world.ts):
 * - every socket address that takes a store id, with every credential family of account B against
 *   A's store: the upgrade is refused (401/403/404 with the §7 envelope), no socket opens;
 * - the sockets bound to the token's own store (/ws/kds, /ws/driver) opened with B's tokens: the
 *   frames B gets carry none of A's markers, and a kitchen bump/recall naming A's order line is a
 *   `not_found` error frame that changes nothing;
 * - every tool of every MCP server (listed with the official SDK client) that takes an id argument,
 *   called with B's credentials and A's ids: an error result (`not_found`, or `forbidden` where the
 *   credential may not use the tool at all), never A's data. The public servers (catalog, dev) are
 *   listed with the reason and only checked for never answering one of A's secrets.
 */
import t, { type Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { WsClient, wsBase, type Refusal } from './helpers/ws-client.ts'
import { bearer, callTool, connectMcp, type Client } from './helpers/mcp.ts'
import { buildWorld, credentialHeaders, FAMILIES, type Family, type Side } from './helpers/world.ts'
import { envelopeProblem } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000000', WEBHOOK_ALLOW_LOOPBACK: '1' })
t.teardown(() => s.close())
const db = s.app.svc.db
const w = await buildWorld(s)
const { a, b } = w
const leaks = (text: string, markers = w.markers): string[] => markers.filter((m) => text.includes(m))
const size = { sockets: 0, socketFrames: 0, tools: 0, toolCells: 0, publicTools: 0 }

/** Open a socket; the refusal (status and body) or the open client. */
async function openWs(path: string, headers: Record<string, string>): Promise<{ refused: Refusal } | { client: WsClient }> {
  try {
    return { client: await WsClient.open(wsBase(s) + path, { headers }) }
  } catch (err) {
    return { refused: err as Refusal }
  }
}

t.test("store-addressed sockets: B's every family against A's store is refused, and no socket opens", async (t) => {
  const addresses = [`/ws/dispatch/${a.storeId}`, `/ws/orders/${a.storeId}`]
  for (const path of addresses) {
    for (const family of FAMILIES) {
      // Browsers send the token as `?token=` (docs/realtime.md): both ways for the bearer families.
      const variants: Array<[string, Record<string, string>]> = [[path, credentialHeaders(b.tokens, family)]]
      const tok = family === 'session' || family === 'none' ? null : family === 'storefront' ? b.tokens.storefront : b.tokens[family]
      if (tok) variants.push([`${path}?token=${encodeURIComponent(tok)}`, {}])
      for (const [p, headers] of variants) {
        size.sockets++
        const what = `${p.replace(/token=[^&]+/, 'token=…')} as B's ${family}`
        const r = await openWs(p, headers)
        if ('client' in r) {
          t.fail(`${what}: the socket opened`, { frames: JSON.stringify(r.client.frames).slice(0, 300) })
          await r.client.close()
          continue
        }
        const { status, body } = r.refused
        // An owner credential (B's token, B's app) reaching another owner's store: 404, or 403 when
        // the credential lacks the feed's capability; any other family is not an owner at all: 401.
        const expected = family === 'owner' ? [404] : family === 'app' ? [404, 403] : [401]
        t.ok(expected.includes(status), `${what}: refused ${status} (expected ${expected.join(' or ')})`)
        const code = status === 404 ? 'not_found' : status === 403 ? 'forbidden' : 'unauthenticated'
        t.equal(envelopeProblem(body, code), null, `${what}: §7 envelope ${code}`)
        t.same(leaks(JSON.stringify(body)), [], `${what}: nothing of A in the refusal`)
      }
    }
  }
})

t.test("token-bound sockets (/ws/kds, /ws/driver): other families are refused; B's own socket never carries A's data", async (t) => {
  const own: Record<string, Family> = { '/ws/kds': 'staff', '/ws/driver': 'driver' }
  for (const [path, family] of Object.entries(own)) {
    for (const f of FAMILIES.filter((x) => x !== family)) {
      size.sockets++
      const r = await openWs(path, credentialHeaders(b.tokens, f))
      if ('client' in r) { t.fail(`${path} as B's ${f}: opened`); await r.client.close(); continue }
      t.equal(r.refused.status, 401, `${path} as B's ${f}: 401`)
      t.equal(envelopeProblem(r.refused.body, 'unauthenticated'), null, `${path} as B's ${f}: envelope`)
    }
  }

  // B's kitchen screen: its snapshot, then a bump and a recall of A's order line, then a refresh.
  size.sockets++
  const before = JSON.stringify(db.prepare('SELECT * FROM order_lines WHERE id = ?').get(a.kdsLineId))
  const kds = await openWs('/ws/kds', credentialHeaders(b.tokens, 'staff'))
  if (!('client' in kds)) { t.fail(`B's kitchen socket refused: ${kds.refused.status}`); return }
  const k = kds.client
  await k.next((f) => f.type === 'snapshot')
  for (const step of ['bump', 'recall'] as const) {
    k.send({ type: step, item_id: a.kdsLineId, seq: 7 })
    const err = await k.next((f) => f.type === 'error' || f.type === 'ack')
    t.match(err, { type: 'error', code: 'not_found', seq: 7 }, `${step} of A's line from B's kitchen: not_found`)
  }
  t.equal(JSON.stringify(db.prepare('SELECT * FROM order_lines WHERE id = ?').get(a.kdsLineId)), before, "A's line unchanged by B's bump and recall")
  k.send({ type: 'refresh' })
  await k.next((f) => f.type === 'snapshot')
  // Something happens at A's store while B's screen is open: B must not hear of it.
  await s.req('PUT', `/restaurants/${a.storeId}/orders/${a.orders.takeaway.id}/status`, { token: a.tokens.owner, body: { status: 'preparing' } })
  await s.req('PUT', `/staff/kds/items/${a.kdsLineId}/bump`, { token: a.tokens.staff })
  k.send({ type: 'ping' })
  await k.next((f) => f.type === 'pong')
  const seen = JSON.stringify(k.frames)
  size.socketFrames += k.frames.length + 4
  t.same(leaks(seen), [], "B's kitchen frames carry nothing of A")
  t.notOk(k.frames.some((f) => f.order_id === a.orders.takeaway.id), "no frame about A's order")
  await k.close()

  // B's driver socket: its hello frames, then A's driver moves and A's delivery changes.
  size.sockets++
  const drv = await openWs('/ws/driver', credentialHeaders(b.tokens, 'driver'))
  if (!('client' in drv)) { t.fail(`B's driver socket refused: ${drv.refused.status}`); return }
  const d = drv.client
  await s.req('PUT', '/driver/location', { token: a.tokens.driver, body: { lat: 52.5, lng: 13.4 } })
  await s.req('PUT', `/driver/deliveries/${a.orders.delivery.id}/status`, { token: a.tokens.driver, body: { delivery_status: 'picked_up' } })
  d.send({ type: 'ping' })
  await d.next((f) => f.type === 'pong')
  size.socketFrames += d.frames.length + 1
  t.same(leaks(JSON.stringify(d.frames)), [], "B's driver frames carry nothing of A")
  await d.close()
})

t.test('the tracking socket is public by its track token (the token is the capability, docs/realtime.md)', async (t) => {
  // Public by design; checked only for not answering A's other secrets, and a B credential changes nothing.
  size.sockets++
  const r = await openWs(`/ws/track/${a.orders.delivery.track_token}`, credentialHeaders(b.tokens, 'owner'))
  if (!('client' in r)) { t.fail(`tracking socket refused: ${r.refused.status}`); return }
  const snap = await r.client.next()
  t.same(leaks(JSON.stringify(snap), w.secrets), [], "no secret of A in the tracking snapshot")
  await r.client.close()
})

// ---- MCP ---------------------------------------------------------------------------------------

/** MCP servers, who of B calls each, and why a public one is public. */
const MCP: Array<{ path: string; families: Family[]; public?: string }> = [
  { path: '/mcp', families: ['owner', 'app'] },
  { path: '/mcp/storefront', families: ['storefront'] },
  { path: '/mcp/customer', families: ['customer'] },
  { path: '/mcp/catalog', families: ['none'], public: 'the public catalog of listed stores (api-v1 §4.10): a store id or slug is public' },
  { path: '/mcp/dev', families: ['none'], public: 'developer documentation: names no account\'s data' },
]

type Prop = { type?: string | string[]; enum?: unknown[]; items?: Prop; properties?: Record<string, Prop>; required?: string[]; minItems?: number; minimum?: number; minLength?: number }

/** A's value for an id-like argument name, or undefined when the name is not an id. */
function aValue(name: string, tool: string, x: Side): unknown {
  const order = /driver|deliver|offer/.test(tool) ? x.orders.delivery.id : /customer|my_|reorder|order_detail/.test(tool) ? x.orders.customer.id : x.orders.takeaway.id
  const byName: Record<string, unknown> = {
    restaurant_id: x.storeId, store_id: x.storeId, order_id: order, item_id: x.menu.burger.id, category_id: x.menu.categoryId,
    variant_id: x.menu.burger.double, customer_id: x.customerId, coupon_id: x.couponId, driver_id: x.driverId, staff_id: x.staffId,
    address_id: x.addressId, gift_card_id: x.giftCardId, endpoint_id: x.endpointId, device_id: x.deviceId, brand_id: x.brandId,
    track_token: x.orders.delivery.track_token, store: x.slug,
  }
  if (name in byName) return byName[name]
  if (/(^|_)id$/.test(name)) return null // an id this table does not know: the test fails for it
  if (name === 'driver_ids') return [x.driverId]
  return undefined
}

/** A plausible value of a JSON Schema, so that only the ids decide the answer. */
function sample(p: Prop | undefined, name: string, tool: string, x: Side): unknown {
  const id = aValue(name, tool, x)
  if (id !== undefined) return id
  if (!p) return 'x'
  if (p.enum?.length) return p.enum[0]
  const type = Array.isArray(p.type) ? p.type.find((ty) => ty !== 'null') : p.type
  switch (type) {
    case 'integer': case 'number': return Math.max(1, p.minimum ?? 1)
    case 'boolean': return false
    case 'array': return name === 'items' || name === 'lines' ? [{ item_id: x.menu.burger.id, quantity: 1 }] : Array.from({ length: p.minItems ?? 0 }, () => sample(p.items, name, tool, x))
    case 'object': return Object.fromEntries((p.required ?? []).map((k) => [k, sample(p.properties?.[k], k, tool, x)]))
    default: return name === 'email' ? 'leak@test.local' : name === 'phone' ? '+15559990003' : 'x'.repeat(Math.max(1, p.minLength ?? 1))
  }
}

const isIdArg = (name: string): boolean => /(^|_)ids?$|^track_token$|^store$/.test(name)

/** Tools whose id argument is a filter of the caller's own data: an empty answer is no leak. */
const FILTER_TOOLS: Record<string, string> = {
  '/mcp/storefront search_menu': '`category_id` filters the token\'s own store\'s menu: another store\'s category matches nothing',
}

async function checkCall(t: Test, client: Client, server: (typeof MCP)[number], family: Family, name: string, args: Record<string, unknown>): Promise<void> {
  const what = `${server.path} ${name}(${Object.keys(args).join(', ')}) as B's ${family} with A's ids`
  size.toolCells++
  let text: string
  let outcome: { isError: boolean; json: any } | null = null
  try {
    outcome = await callTool(client, name, args)
    text = JSON.stringify(outcome.json ?? null)
  } catch (err) {
    text = String((err as Error).message)
  }
  if (server.public) {
    size.publicTools++
    t.same(leaks(text, w.secrets), [], `${what} (public: ${server.public}): none of A's secrets`)
    return
  }
  t.same(leaks(text), [], `${what}: nothing of A in the answer`)
  if (!outcome) return void t.fail(`${what}: a JSON-RPC error instead of an error result: ${text.slice(0, 200)}`)
  const filter = FILTER_TOOLS[`${server.path} ${name}`]
  if (filter && !outcome.isError) return void t.ok(isEmpty(outcome.json), `${what}: empty (${filter})`)
  const allowed = family === 'owner' ? ['not_found'] : ['not_found', 'forbidden']
  t.ok(outcome.isError && allowed.includes(outcome.json?.code), `${what}: isError ${allowed.join('/')} (got ${outcome.isError} ${outcome.json?.code ?? text.slice(0, 120)})`)
}

const isEmpty = (x: unknown): boolean => Array.isArray(x) ? x.length === 0
  : !!x && typeof x === 'object' && !Object.values(x).some((v) => Array.isArray(v) && v.length > 0)

t.test("every MCP tool that takes an id, called with B's credentials and A's ids: an error result, never A's data", async (t) => {
  for (const server of MCP) {
    for (const family of server.families) {
      const headers = family === 'none' ? {} : family === 'storefront' ? { 'x-storefront-token': b.tokens.storefront } : bearer(b.tokens[family] as string)
      let client: Client
      try {
        client = await connectMcp(s, server.path, headers)
      } catch (err) {
        t.fail(`${server.path} as B's ${family}: could not connect: ${(err as Error).message}`)
        continue
      }
      const { tools } = await client.listTools()
      for (const tool of tools) {
        const schema = tool.inputSchema as Prop
        const props = Object.keys(schema.properties ?? {})
        if (!props.some(isIdArg)) continue
        size.tools++
        const args: Record<string, unknown> = {}
        for (const k of props) {
          const v = aValue(k, tool.name, a)
          if (v === null) t.fail(`${server.path} ${tool.name}: no world value for argument ${k} (add it to aValue in this file)`)
          if (v !== undefined && v !== null) args[k] = v
          else if (schema.required?.includes(k)) args[k] = sample(schema.properties?.[k], k, tool.name, a)
        }
        // "Exactly one of order_id and track_token" (track_order): each way on its own.
        const variants = 'order_id' in args && 'track_token' in args
          ? [(({ track_token: _, ...rest }) => rest)(args), (({ order_id: _, ...rest }) => rest)(args)]
          : [args]
        for (const v of variants) await checkCall(t, client, server, family, tool.name, v)
      }
      await client.close()
    }
  }
  t.comment(`MCP: ${size.tools} id-taking tool bindings, ${size.toolCells} calls (${size.publicTools} on public servers)`)
  t.comment(`sockets: ${size.sockets} upgrades, ${size.socketFrames} frames checked`)
})
