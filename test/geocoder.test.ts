/**
 * Address search (issue 34 item 4; docs/providers.md "Geocoder", docs/customers.md "Finding an
 * address"), against a local fake Nominatim: none by default (the search answers no places and says
 * why); GEOCODER=nominatim held to the webhook SSRF rules at start and at request time; places
 * parsed from `jsonv2`, biased towards the store, the client named in User-Agent, answers cached, a
 * failing service answers no places with the reason and is asked again next time; bad input is 422
 * with nothing sent.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createCustomer, isError } from './helpers/fixtures.ts'
import { startFake, type Recorded } from './helpers/fake-service.ts'
import { providersConfig } from '../src/providers/config.ts'
import { NominatimGeocoder } from '../src/providers/geocoder.ts'

const STORE = { lat: 52.52, lng: 13.405 }
/** The fake Nominatim: "Unter den Linden" has two places; "nowhere" none; anything else one made-up place. */
const nominatim = await startFake((req: Recorded) => {
  const q = new URL(req.path, 'http://x').searchParams.get('q') ?? ''
  if (/nowhere/i.test(q)) return { status: 200, body: [] }
  if (/unter den linden/i.test(q)) {
    return {
      status: 200, body: [
        { place_id: 1, lat: '52.5170365', lon: '13.3888599', display_name: 'Unter den Linden 1, Mitte, Berlin, 10117, Deutschland', type: 'house' },
        { place_id: 2, lat: '52.5163', lon: '13.3777', display_name: 'Unter den Linden 77, Mitte, Berlin, 10117, Deutschland' },
        { place_id: 3, lat: 'not a number', lon: '13', display_name: 'broken' },
      ],
    }
  }
  return { status: 200, body: [{ lat: '52.5', lon: '13.4', display_name: `Somewhere called ${q}` }] }
})
t.teardown(() => nominatim.close())

t.test('configuration: none by default; nominatim needs GEOCODER_URL, held to the webhook SSRF rules', async (t) => {
  t.same(providersConfig({}).geocoder, { kind: 'none' }, 'no geocoder by default')
  t.throws(() => providersConfig({ GEOCODER: 'nominatim' }), /GEOCODER=nominatim needs GEOCODER_URL/)
  t.throws(() => providersConfig({ GEOCODER: 'nominatim', GEOCODER_URL: 'http://127.0.0.1:8088' }), /GEOCODER_URL: Use an https URL/, 'plain http only to loopback, and only when allowed')
  t.throws(() => providersConfig({ GEOCODER: 'nominatim', GEOCODER_URL: 'https://10.1.2.3' }), /not a public address/, 'a private address')
  t.throws(() => providersConfig({ GEOCODER: 'nominatim', GEOCODER_URL: 'https://169.254.169.254' }), /not a public address/, 'the metadata address')
  t.throws(() => providersConfig({ GEOCODER_URL: 'https://nominatim.example.org' }), /GEOCODER is none/, 'a URL without GEOCODER=nominatim is a mistake, said at start')
  t.throws(() => providersConfig({ GEOCODER: 'google' }), /must be none or nominatim/)
  t.match(providersConfig({ GEOCODER: 'nominatim', GEOCODER_URL: 'https://nominatim.example.org/', GEOCODER_TIMEOUT_MS: '900', SITE_URL: 'https://shop.example' }).geocoder,
    { kind: 'nominatim', url: 'https://nominatim.example.org', timeoutMs: 900, allowLoopback: false, userAgent: 'dispatch-server (https://shop.example)' })
})

t.test('without a geocoder the search answers no places and says why', async (t) => {
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
  t.teardown(() => s.close())
  const a = createAccount(s.app.svc.db)
  const c = createCustomer(s.app.svc.db, a.storeId)
  const r = await s.req('GET', '/customer/address-search?q=Unter%20den%20Linden', { token: c.token })
  t.equal(r.status, 200)
  t.same(r.body, { source: 'none', places: [], failure: 'no geocoder is configured' })
})

t.test('nominatim: places near the store, the client named, cached; failures say why and are not cached', async (t) => {
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', GEOCODER: 'nominatim', GEOCODER_URL: nominatim.url, GEOCODER_ALLOW_LOOPBACK: '1' })
  t.teardown(() => s.close())
  const db = s.app.svc.db
  const a = createAccount(db)
  const c = createCustomer(db, a.storeId)
  t.equal((await s.req('PUT', `/restaurants/${a.storeId}/settings`, { token: a.token, body: { location: STORE } })).status, 200)
  const search = (q: string, token = c.token) => s.req('GET', `/customer/address-search?q=${encodeURIComponent(q)}`, { token })

  const n0 = nominatim.requests.length
  const r = await search('  Unter den   Linden ')
  t.equal(r.status, 200)
  t.same(r.body, {
    source: 'nominatim', failure: null,
    places: [
      { label: 'Unter den Linden 1, Mitte, Berlin, 10117, Deutschland', lat: 52.5170365, lng: 13.3888599 },
      { label: 'Unter den Linden 77, Mitte, Berlin, 10117, Deutschland', lat: 52.5163, lng: 13.3777 },
    ],
  }, 'the places with a position; one without a usable position is left out')
  t.equal(nominatim.requests.length, n0 + 1)
  const sent = nominatim.requests.at(-1)!
  const params = new URL(sent.path, 'http://x').searchParams
  t.equal(new URL(sent.path, 'http://x').pathname, '/search')
  t.same({ q: params.get('q'), format: params.get('format'), limit: params.get('limit'), viewbox: params.get('viewbox') },
    { q: 'Unter den Linden', format: 'jsonv2', limit: '5', viewbox: '13.1550,52.7700,13.6550,52.2700' }, 'the text tidied, biased to a box around the store')
  t.match(sent.headers['user-agent'], /^dispatch-server \(http:\/\/127\.0\.0\.1:\d+\)$/, 'the client names itself (Nominatim usage policy)')

  t.same((await search('unter den linden')).body.places.length, 2)
  t.equal(nominatim.requests.length, n0 + 1, 'the same text (any case) is answered from the cache')
  t.same((await search('nowhere at all')).body, { source: 'nominatim', places: [], failure: null }, 'nothing found is not a failure')

  nominatim.plan({ status: 503, body: 'busy' })
  t.same((await search('Alexanderplatz')).body, { source: 'nominatim', places: [], failure: 'nominatim answered 503' })
  nominatim.plan({ status: 200, body: `[${'0,'.repeat(600_000)}0]` })
  t.same((await search('Alexanderplatz')).body.failure, 'nominatim answered more than 1048576 bytes', 'an answer past 1 MB is not read')
  nominatim.plan({ status: 200, body: '<html>' })
  t.same((await search('Alexanderplatz')).body.failure, 'nominatim answered something that is not JSON', 'a failure is not cached: asked again')
  t.same((await search('Alexanderplatz')).body.places, [{ label: 'Somewhere called Alexanderplatz', lat: 52.5, lng: 13.4 }])

  const n1 = nominatim.requests.length
  const short = await search('ab')
  isError(t, short, 422, 'validation_failed', 'fewer than 3 characters')
  t.ok(short.body.errors.q, 'the field is named')
  isError(t, await s.req('GET', '/customer/address-search', { token: c.token }), 422, 'validation_failed', 'no text')
  isError(t, await search('x'.repeat(201)), 422, 'validation_failed', 'a text too long')
  isError(t, await s.req('GET', '/customer/address-search?q=Berlin'), 401, 'unauthenticated', 'customers only')
  isError(t, await search('Berlin', a.token), 401, 'unauthenticated', 'an owner token is not a customer')
  t.equal(nominatim.requests.length, n1, 'nothing was sent for a refused search')
})

t.test('a loopback geocoder without the allowance, or one that is down, answers no places with the reason', async (t) => {
  const forbidden = new NominatimGeocoder({ kind: 'nominatim', url: nominatim.url, timeoutMs: 1000, allowLoopback: false, userAgent: 'test' })
  t.teardown(() => forbidden.close())
  const n0 = nominatim.requests.length
  t.same(await forbidden.search('Berlin', null), { source: 'nominatim', places: [], failure: 'nominatim refused: its URL is not an allowed address' })
  t.equal(nominatim.requests.length, n0, 'nothing was sent to a loopback address without GEOCODER_ALLOW_LOOPBACK')
  const gone = await startFake(() => ({ status: 200 }))
  const url = gone.url
  await gone.close()
  const down = new NominatimGeocoder({ kind: 'nominatim', url, timeoutMs: 1000, allowLoopback: true, userAgent: 'test' })
  t.teardown(() => down.close())
  t.match(await down.search('Berlin', null), { places: [], failure: /^nominatim unreachable/ })
})
