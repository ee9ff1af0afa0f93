/**
 * MCP for real agents (issue 36 items 1, 2, 7): the official SDK client with its OAuth provider,
 * knowing nothing but `{site_url}/mcp`, discovers how to authorize (RFC 9728 metadata named by the
 * 401's `WWW-Authenticate`, then RFC 8414), registers itself (RFC 7591), sends the owner to the
 * consent page (answered in Chromium by the browser's own form), gets an audience-bound token
 * (RFC 8707) and lists and calls tools. Plus: the agent as an app on the dashboard (revocable),
 * audience checks both ways, client ID metadata documents (SSRF-guarded), registration refusals.
 */
import t from 'tap'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createHash, randomBytes } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import { startServer } from './helpers/server.ts'
import { browserFor } from './helpers/browser.ts'
import { answerConsent, consentPage, signedIn } from './helpers/apps.ts'
import { callTool, rawMcp } from './helpers/mcp.ts'
import { rawUpgrade } from './helpers/raw-ws.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_LOOPBACK: '1' })
const demo = s.seed()
const db = s.app.svc.db

/** A loopback HTTP server for the agent's side: its redirect URI and its metadata document. */
async function agentSite(handler: (path: string) => { status: number; body: string } | null): Promise<{ origin: string; hits: string[]; server: Server }> {
  const hits: string[] = []
  const server = createServer((req, res) => {
    hits.push(req.url ?? '')
    const out = handler(req.url ?? '') ?? { status: 200, body: 'You can close this window.' }
    res.writeHead(out.status, { 'content-type': out.body.startsWith('{') ? 'application/json' : 'text/plain' })
    res.end(out.body)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server }
}

/** The SDK's OAuth provider contract, kept in memory as an agent host would keep it on disk. */
class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ''
  authorizationUrl: URL | undefined
  constructor(readonly redirect: string) {}
  get redirectUrl() { return this.redirect }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'Kitchen Copilot', redirect_uris: [this.redirect], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }
  }
  clientInformation() { return this.info }
  saveClientInformation(i: OAuthClientInformationMixed) { this.info = i }
  tokens() { return this.saved }
  saveTokens(tk: OAuthTokens) { this.saved = tk }
  redirectToAuthorization(url: URL) { this.authorizationUrl = url }
  saveCodeVerifier(v: string) { this.verifier = v }
  codeVerifier() { return this.verifier }
}

const connect = async (provider: OAuthClientProvider): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> => {
  const transport = new StreamableHTTPClientTransport(new URL(`${s.site}/mcp`), { authProvider: provider })
  const client = new Client({ name: 'kitchen-copilot', version: '1.0.0' })
  await client.connect(transport)
  return { client, transport }
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** Register a public client over plain HTTP (RFC 7591). */
const register = async (redirect: string, extra: Record<string, unknown> = {}) => {
  const r = await fetch(`${s.site}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Script agent', redirect_uris: [redirect], ...extra }) })
  return { status: r.status, body: await r.json() as Record<string, any> }
}

/** Consent by form post, then the code exchanged: the tokens (or the token endpoint's refusal). */
async function tokenFor(clientId: string, redirect: string, resource: string | undefined, tokenResource?: string, scope = 'mcp:use restaurant:read menu:read') {
  const who = signedIn(db, demo.owner.id)
  const { verifier, challenge } = pkce()
  const q = { response_type: 'code', client_id: clientId, redirect_uri: redirect, scope, state: 'st', code_challenge: challenge, code_challenge_method: 'S256', ...(resource ? { resource } : {}) }
  const back = await answerConsent(s.site, who, q, 'approve')
  const code = new URL(back.headers.get('location')!).searchParams.get('code')!
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirect, client_id: clientId, code_verifier: verifier, ...(tokenResource ? { resource: tokenResource } : {}) })
  const r = await fetch(`${s.site}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form })
  return { status: r.status, body: await r.json() as Record<string, any> }
}

t.teardown(() => s.close())

t.test('the SDK client, knowing only {site_url}/mcp: discovery → registration → consent in Chromium → token → tools', async (t) => {
  const browser = await browserFor(t)
  if (!browser) return
  const site = await agentSite(() => null)
  const provider = new MemoryProvider(`${site.origin}/callback`)

  // 1. The first connection is refused; the SDK follows the 401 to the metadata, registers and asks for consent.
  await t.rejects(connect(provider), /Unauthorized/, 'the first connection needs the owner')
  t.match(provider.info?.client_id, /^agt_/, 'registered itself by dynamic client registration')
  const url = provider.authorizationUrl!
  t.equal(url.origin + url.pathname, `${s.site}/oauth/authorize`, 'sent to the authorization endpoint of the server metadata')
  t.equal(url.searchParams.get('resource'), `${s.site}/mcp`, 'with the MCP server as the resource (RFC 8707)')
  t.equal(url.searchParams.get('code_challenge_method'), 'S256')

  // 2. The owner signs in and approves in a real browser; the browser itself submits the forms.
  const ctx = await browser.newContext()
  t.teardown(() => ctx.close())
  const page = await ctx.newPage()
  await page.goto(url.href)
  await page.waitForURL(/\/login/)
  await page.locator('input[type=email]').fill(demo.owner.email)
  await page.locator('input[type=password]').fill(demo.owner.password)
  await page.locator('form button[type=submit], form input[type=submit]').first().click()
  await page.waitForURL(/\/oauth\/authorize/)
  const consent = await page.locator('main').innerText()
  t.match(consent, /AI agent Kitchen Copilot/, 'the consent page names the agent')
  t.match(consent, /registered itself: its name is not verified/, 'and says its name is its own claim')
  t.match(consent, new RegExp(`${s.site}/mcp`.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')), 'and the server its token is for')
  t.match(consent, /Use the admin MCP server/, 'and what it will be able to do, scope by scope')
  t.match(consent, /See your menus/)
  await page.locator('button[value=approve]').click()
  await page.waitForURL((u) => u.href.startsWith(`${site.origin}/callback`))
  const code = new URL(page.url()).searchParams.get('code')
  t.ok(code, 'the browser came back to the agent with a code')

  // 3. The agent exchanges the code (PKCE, no secret) and connects again: tools work.
  const first = new StreamableHTTPClientTransport(new URL(`${s.site}/mcp`), { authProvider: provider })
  await first.finishAuth(code!)
  t.match(provider.saved?.access_token, /^dsa_/, 'an access token')
  const { client } = await connect(provider)
  t.teardown(() => client.close())
  const { tools } = await client.listTools()
  t.ok(tools.some((x) => x.name === 'list_restaurants'), 'tools/list answers the tools its scopes reach')
  const stores = await callTool(client, 'list_restaurants')
  t.equal(stores.isError, false)
  t.ok(stores.json.data.some((x: { id: number }) => x.id === demo.store.id), 'tools/call runs as the owner who consented')

  // 4. The token is bound to /mcp: the API refuses it.
  const api = await s.req('GET', '/restaurants', { token: provider.saved!.access_token })
  t.equal(api.status, 401, 'a token issued for /mcp is refused on /api/v1')
  t.match(api.headers.get('www-authenticate'), /error="invalid_token"/)
  const socket = await rawUpgrade(s.port, `/api/v1/ws/dispatch/${demo.store.id}`, { authorization: `Bearer ${provider.saved!.access_token}` })
  t.equal(socket.status, 401, 'and by the API\'s sockets')

  // 5. The owner sees the agent as an app and revokes it; the agent is locked out at once.
  const installed = await s.req('GET', '/apps/installations', { token: demo.owner.token })
  const mine = installed.body.find((i: { app_name: string }) => i.app_name === 'Kitchen Copilot')
  t.match(mine, { kind: 'agent', pricing: 'free' }, 'listed among the installed apps, as an agent, free')
  t.notOk((await s.req('GET', '/apps')).body.some((a: { name: string }) => a.name === 'Kitchen Copilot'), 'never in the marketplace')
  t.equal((await s.req('DELETE', `/apps/installations/${mine.id}`, { token: demo.owner.token })).status, 200, 'the owner revokes it')
  const after = await rawMcp(s, '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { authorization: `Bearer ${provider.saved!.access_token}` })
  t.equal(after.status, 401, 'revoked: the MCP server refuses the token')
  t.match(after.headers.get('www-authenticate'), /resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp"/)
})

t.test('the dashboard shows the agent among the apps with a Revoke button', async (t) => {
  const browser = await browserFor(t)
  if (!browser) return
  const redirect = 'http://127.0.0.1:9/cb'
  const reg = await register(redirect, { client_name: 'Shelf Agent' })
  t.equal((await tokenFor(reg.body.client_id, redirect, `${s.site}/mcp`)).status, 200)
  const ctx = await browser.newContext()
  t.teardown(() => ctx.close())
  const page = await ctx.newPage()
  await page.goto(`${s.site}/dashboard/apps`)
  await page.waitForURL(/\/login/)
  await page.locator('input[type=email]').fill(demo.owner.email)
  await page.locator('input[type=password]').fill(demo.owner.password)
  await page.locator('form button[type=submit], form input[type=submit]').first().click()
  await page.waitForSelector('body[data-ready="1"]')
  const row = page.locator('tr', { hasText: 'Shelf Agent' })
  await row.waitFor()
  t.match(await row.innerText(), /AI agent/, 'marked as an AI agent')
  page.on('dialog', (d) => void d.accept())
  await row.locator('button', { hasText: 'Revoke' }).click()
  await page.locator('tr', { hasText: 'Shelf Agent' }).waitFor({ state: 'detached' })
  const left = await s.req('GET', '/apps/installations', { token: demo.owner.token })
  t.notOk(left.body.some((i: { app_name: string }) => i.app_name === 'Shelf Agent'), 'revoked for good')
})

t.test('discovery documents: protected resources per server, authorization server metadata complete', async (t) => {
  const pr = await (await fetch(`${s.site}/.well-known/oauth-protected-resource/mcp`)).json() as Record<string, any>
  t.match(pr, { resource: `${s.site}/mcp`, authorization_servers: [s.site], bearer_methods_supported: ['header'] })
  t.ok(pr.scopes_supported.includes('mcp:use'))
  for (const path of ['/mcp/storefront', '/mcp/customer']) {
    const r = await fetch(`${s.site}/.well-known/oauth-protected-resource${path}`)
    t.equal(r.status, 200, `${path} publishes its metadata`)
    const body = await r.json() as Record<string, any>
    t.equal(body.resource, `${s.site}${path}`)
    t.notOk(body.authorization_servers, 'and names no authorization server: its credentials come from elsewhere')
    const refused = await rawMcp(s, path, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))
    t.equal(refused.status, 401)
    t.match(refused.headers.get('www-authenticate'), `resource_metadata="${s.site}/.well-known/oauth-protected-resource${path}"`, 'its 401 points there')
  }
  const none = await rawMcp(s, '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))
  t.match(none.headers.get('www-authenticate'), /^Bearer realm="api", resource_metadata="[^"]+", scope="[^"]*mcp:use[^"]*"$/, 'no credential: no error, the metadata and the scopes to ask for')
  t.equal((await fetch(`${s.site}/.well-known/oauth-protected-resource/mcp/catalog`)).status, 404, 'public servers have none')
  const as = await (await fetch(`${s.site}/.well-known/oauth-authorization-server`)).json() as Record<string, any>
  t.match(as, { issuer: s.site, registration_endpoint: `${s.site}/oauth/register`, client_id_metadata_document_supported: true, code_challenge_methods_supported: ['S256'] })
  t.ok(as.token_endpoint_auth_methods_supported.includes('none'), 'public clients')
})

t.test('audience: an /api/v1 token is refused by /mcp, a token without resource works on both, a foreign resource is invalid_target', async (t) => {
  const redirect = 'http://127.0.0.1:9/cb'
  const { body: reg } = await register(redirect)
  const apiToken = await tokenFor(reg.client_id, redirect, `${s.site}/api/v1`)
  t.equal(apiToken.status, 200, JSON.stringify(apiToken.body))
  t.equal((await s.req('GET', '/restaurants', { token: apiToken.body.access_token })).status, 200, 'an /api/v1 token works on the API')
  const atMcp = await rawMcp(s, '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { authorization: `Bearer ${apiToken.body.access_token}` })
  t.equal(atMcp.status, 401, 'and is refused by the MCP server')
  t.match(atMcp.headers.get('www-authenticate'), /error="invalid_token", resource_metadata=/)

  // Refreshing keeps the audience; asking another one is invalid_target and spends nothing.
  const refresh = (extra: Record<string, string>) => fetch(`${s.site}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: apiToken.body.refresh_token, client_id: reg.client_id, ...extra }) })
  const other = await refresh({ resource: `${s.site}/mcp` })
  t.equal(other.status, 400)
  t.match(await other.json(), { error: 'invalid_target' })
  const rotated = await refresh({})
  t.equal(rotated.status, 200, 'the refresh token still works once')
  const next = await rotated.json() as Record<string, string>
  t.not(next.refresh_token, apiToken.body.refresh_token, 'and rotates')
  t.equal((await rawMcp(s, '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), { authorization: `Bearer ${next.access_token}` })).status, 401, 'the new token keeps the /api/v1 audience')

  const unbound = await tokenFor(reg.client_id, redirect, undefined)
  t.equal((await s.req('GET', '/restaurants', { token: unbound.body.access_token })).status, 200, 'no resource named: the API accepts it')
  t.equal((await rawMcp(s, '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), { authorization: `Bearer ${unbound.body.access_token}` })).status, 200, 'and so does /mcp (with mcp:use)')

  // Consent without mcp:use: the server says which scope to ask for (MCP 2025-11-25 scope challenge).
  const narrow = await tokenFor(reg.client_id, redirect, `${s.site}/mcp`, undefined, 'menu:read')
  const insufficient = await rawMcp(s, '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), { authorization: `Bearer ${narrow.body.access_token}` })
  t.equal(insufficient.status, 403)
  t.match(insufficient.headers.get('www-authenticate'), /^Bearer realm="api", error="insufficient_scope", scope="mcp:use menu:read", resource_metadata="[^"]+\/mcp"$/)

  const foreign = await tokenFor(reg.client_id, redirect, undefined, 'https://elsewhere.example/mcp')
  t.equal(foreign.status, 400)
  t.equal(foreign.body.error, 'invalid_target', 'a resource this server does not serve')
  const who = signedIn(db, demo.owner.id)
  const { challenge } = pkce()
  const page = await consentPage(s.site, who, { response_type: 'code', client_id: reg.client_id, redirect_uri: redirect, code_challenge: challenge, code_challenge_method: 'S256', resource: 'https://elsewhere.example/' })
  t.equal(page.status, 303)
  t.match(new URL(page.headers.get('location')!).searchParams.get('error'), 'invalid_target', 'at authorization too')
})

t.test('agents are public clients: PKCE required, no secret, only what RFC 7591 registration allows', async (t) => {
  const redirect = 'http://127.0.0.1:9/cb'
  const { body: reg } = await register(redirect)
  const who = signedIn(db, demo.owner.id)
  const page = await consentPage(s.site, who, { response_type: 'code', client_id: reg.client_id, redirect_uri: redirect })
  t.equal(new URL(page.headers.get('location')!).searchParams.get('error'), 'invalid_request', 'no code_challenge: refused')
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://a.example/cb#frag'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: [] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata'],
    [{ redirect_uris: ['https://a.example/cb'], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
    [{ redirect_uris: ['https://a.example/cb'], scope: 'admin:all' }, 'invalid_client_metadata'],
  ]
  const before = db.prepare('SELECT COUNT(*) FROM apps').pluck().get()
  for (const [body, error] of cases) {
    const r = await fetch(`${s.site}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    t.equal(r.status, 400, JSON.stringify(body))
    t.match(await r.json(), { error, code: error }, `${error}, with the API envelope`)
  }
  const notObject = await fetch(`${s.site}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1]' })
  t.equal(notObject.status, 400)
  t.equal(db.prepare('SELECT COUNT(*) FROM apps').pluck().get(), before, 'nothing was registered')
  const secret = await fetch(`${s.site}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', redirect_uri: redirect, client_id: reg.client_id, client_secret: 'guess' }) })
  t.equal(secret.status, 401, 'a secret for a public client is refused')
})

t.test('client ID metadata documents: fetched from the https client_id, SSRF-guarded, must name themselves', async (t) => {
  let doc: (origin: string) => Record<string, unknown> = () => ({})
  const site = await agentSite((path) => (path === '/agent.json' ? { status: 200, body: JSON.stringify(doc(site.origin)) } : path === '/big.json' ? { status: 200, body: `{"x":"${'a'.repeat(10_000)}"}` } : null))
  const clientId = `${site.origin}/agent.json`
  const redirect = `${site.origin}/cb`
  doc = (origin) => ({ client_id: `${origin}/agent.json`, client_name: 'Pantry Bot', redirect_uris: [`${origin}/cb`], token_endpoint_auth_method: 'none' })
  const who = signedIn(db, demo.owner.id)
  const { challenge } = pkce()
  const q = { response_type: 'code', client_id: clientId, redirect_uri: redirect, code_challenge: challenge, code_challenge_method: 'S256', scope: 'mcp:use menu:read' }
  const page = await consentPage(s.site, who, q)
  const html = await page.text()
  t.equal(page.status, 200, html)
  t.match(html, /AI agent <strong>Pantry Bot<\/strong>/, 'named as its document says')
  t.match(html, `Its name is published by <strong>${new URL(site.origin).host}</strong>`, 'and by whom')
  t.ok(site.hits.includes('/agent.json'), 'the document was fetched')
  const back = await answerConsent(s.site, who, q, 'approve')
  t.ok(new URL(back.headers.get('location')!).searchParams.get('code'), 'consent gives a code')

  doc = () => ({ client_id: 'https://someone-else.example/agent.json', client_name: 'Impostor', redirect_uris: [redirect] })
  db.prepare("UPDATE apps SET updated_at = '2000-01-01T00:00:00.000Z' WHERE client_id = ?").run(clientId)
  const impostor = await consentPage(s.site, who, q)
  t.equal(impostor.status, 400, 'a document naming another client_id is refused')
  t.match(await impostor.text(), /not usable/)

  const big = await consentPage(s.site, who, { ...q, client_id: `${site.origin}/big.json` })
  t.equal(big.status, 400, 'a document over 5 KB is refused')
  const internal = await consentPage(s.site, who, { ...q, client_id: 'http://10.0.0.1/agent.json' })
  t.equal(internal.status, 400, 'a private address is never fetched')
  const metadata = await consentPage(s.site, who, { ...q, client_id: 'http://169.254.169.254/latest/meta-data' })
  t.equal(metadata.status, 400, 'nor the cloud metadata address')
})
