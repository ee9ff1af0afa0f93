/**
 * Pushes through the live provider (issue 20 item 4; docs/providers.md "Push"), against local fakes:
 * a Web Push service (VAPID `Authorization: vapid t=…, k=…` whose JWT verifies with the key, TTL,
 * aes128gcm body that the browser's keys decrypt) and Google's token address plus FCM HTTP v1 (the
 * RS256 assertion verifies with the service account's public key, the access token is used and
 * cached, the message shape with string data). A dead token (FCM UNREGISTERED, Web Push 410) is
 * removed from every device table; a 500 is retried; an endpoint on an internal address is never
 * contacted and its subscription is dropped.
 */
import t from 'tap'
import { createECDH, createHmac, createDecipheriv, createPublicKey, createVerify, generateKeyPairSync, randomBytes, verify } from 'node:crypto'
import webpush from 'web-push'
import { startServer } from './helpers/server.ts'
import { createAccount, createDriver, createStaff, isError, postOrder } from './helpers/fixtures.ts'
import { until } from './helpers/people.ts'
import { startFake, type Recorded } from './helpers/fake-service.ts'
import { nowIso } from '../src/storage/db.ts'

const vapid = webpush.generateVAPIDKeys()
const SUBJECT = 'mailto:ops@dispatch.test'
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
const ACCESS = 'ya29.fake-access-token'

const pushService = await startFake(() => ({ status: 201 }))
const tokenAnswer = { status: 200, body: { access_token: ACCESS, expires_in: 3599, token_type: 'Bearer' } }
const sent = { status: 200, body: { name: 'projects/dispatch-test/messages/0:1' } }
const google = await startFake((r) => (r.path === '/token' ? tokenAnswer : sent))
const account = {
  type: 'service_account', project_id: 'dispatch-test', private_key_id: 'key-1', client_email: 'push@dispatch-test.iam.gserviceaccount.com',
  private_key: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), token_uri: `${google.url}/token`,
}
const s = await startServer({
  RATE_LIMIT_PER_MINUTE: '100000', PUSH_PROVIDER: 'live', PUSH_ALLOW_LOOPBACK: '1',
  VAPID_PUBLIC_KEY: vapid.publicKey, VAPID_PRIVATE_KEY: vapid.privateKey, VAPID_SUBJECT: SUBJECT,
  FCM_PROJECT_ID: 'dispatch-test', FCM_SERVICE_ACCOUNT_JSON: JSON.stringify(account), FCM_API_BASE: google.url,
})
t.teardown(async () => { await s.close(); await pushService.close(); await google.close() })
const db = s.app.svc.db
const acct = createAccount(db)
const waiter = createStaff(db, acct.storeId, { role: 'waiter' })

/** A browser's subscription: its ECDH key pair and auth secret stay here to decrypt what arrives. */
function browser(path: string, endpointBase = pushService.url) {
  const ecdh = createECDH('prime256v1')
  ecdh.generateKeys()
  const auth = randomBytes(16)
  const token = JSON.stringify({ endpoint: `${endpointBase}${path}`, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') } })
  return { ecdh, auth, token, path }
}

/** RFC 8291 §3.4 + RFC 8188: decrypt an aes128gcm push message body with the browser's keys. */
function decrypt(body: Buffer, b: ReturnType<typeof browser>): string {
  const salt = body.subarray(0, 16)
  const idlen = body[20]!
  const asPublic = body.subarray(21, 21 + idlen)
  const ciphertext = body.subarray(21 + idlen)
  const hmac = (key: Buffer, data: Buffer) => createHmac('sha256', key).update(data).digest()
  const secret = b.ecdh.computeSecret(asPublic)
  const prkKey = hmac(b.auth, secret)
  const ikm = hmac(prkKey, Buffer.concat([Buffer.from('WebPush: info\0'), b.ecdh.getPublicKey(), asPublic, Buffer.from([1])]))
  const prk = hmac(salt, ikm)
  const cek = hmac(prk, Buffer.from('Content-Encoding: aes128gcm\0\x01')).subarray(0, 16)
  const nonce = hmac(prk, Buffer.from('Content-Encoding: nonce\0\x01')).subarray(0, 12)
  const d = createDecipheriv('aes-128-gcm', cek, nonce)
  d.setAuthTag(ciphertext.subarray(-16))
  const plain = Buffer.concat([d.update(ciphertext.subarray(0, -16)), d.final()])
  let end = plain.length - 1
  while (plain[end] === 0) end--
  t.equal(plain[end], 2, 'last-record padding delimiter')
  return plain.subarray(0, end).toString()
}

const jwtParts = (jwt: string) => {
  const [h, c, sig] = jwt.split('.') as [string, string, string]
  const json = (p: string) => JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>
  return { header: json(h), claims: json(c), input: `${h}.${c}`, sig: Buffer.from(sig, 'base64url') }
}
const register = (token: string, platform: string) => s.req('POST', '/staff/push/register-device', { token: waiter.token, body: { device_token: token, platform } })
const order = async () => (await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })).body as { id: number }
const to = (path: string) => (r: Recorded) => r.path === path
const fcmSends = () => google.requests.filter((r) => r.path.endsWith('/messages:send'))
const staffDevice = (token: string) => db.prepare('SELECT 1 FROM staff_devices WHERE device_token = ?').get(token) !== undefined

t.test('the register routes take a browser\'s PushSubscription JSON for platform web, and only that', async (t) => {
  const b = browser('/push/check')
  t.match((await register(b.token, 'web')).body, { registered: true, platform: 'web' })
  isError(t, await register('not-a-subscription', 'web'), 422, 'validation_failed', 'the staff route')
  t.same((await s.req('POST', '/staff/push/unregister-device', { token: waiter.token, body: { device_token: b.token } })).body, { unregistered: true })
  const d = createDriver(db, acct.ownerId, acct.storeId)
  const driverRegister = (device_token: string) => s.req('POST', '/driver/push/register-device', { token: d.token, body: { device_token, platform: 'web' } })
  isError(t, await driverRegister('{"endpoint": "https://push.example/x"}'), 422, 'validation_failed', 'the driver route: keys missing')
  t.match((await driverRegister(browser('/push/driver').token)).body, { registered: true, platform: 'web' })
  t.match((await s.req('POST', '/driver/push/register-device', { token: d.token, body: { device_token: 'not-json-but-fine-for-ios', platform: 'ios' } })).body, { registered: true }, 'native tokens are opaque')
})

t.test('web push: VAPID authorization, TTL, aes128gcm body that the browser decrypts', async (t) => {
  const b = browser('/push/web-1')
  await register(b.token, 'web')
  const o = await order()
  const [r] = await until(() => pushService.requests.some(to(b.path))).then(() => pushService.requests.filter(to(b.path)))
  t.equal(r!.method, 'POST')
  const m = /^vapid t=([\w-]+\.[\w-]+\.[\w-]+), k=([\w-]+)$/.exec(String(r!.headers.authorization))
  t.ok(m, `Authorization: vapid t=…, k=… (${String(r!.headers.authorization).slice(0, 20)}…)`)
  t.equal(m![2], vapid.publicKey, 'k is the VAPID public key')
  const jwt = jwtParts(m![1]!)
  t.match(jwt.header, { typ: 'JWT', alg: 'ES256' })
  t.match(jwt.claims, { aud: pushService.url, sub: SUBJECT })
  t.ok(Number(jwt.claims.exp) > Date.now() / 1000 && Number(jwt.claims.exp) <= Date.now() / 1000 + 24 * 3600, 'expires within 24 h (RFC 8292 §2)')
  const point = Buffer.from(vapid.publicKey, 'base64url')
  const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') }, format: 'jwk' })
  t.ok(verify('sha256', Buffer.from(jwt.input), { key, dsaEncoding: 'ieee-p1363' }, jwt.sig), 'the JWT verifies with k')
  t.equal(r!.headers.ttl, '600')
  t.equal(r!.headers['content-encoding'], 'aes128gcm')
  t.equal(r!.headers.urgency, 'high')
  t.match(JSON.parse(decrypt(r!.body, b)), { title: 'New order', data: { event: 'order.created', order_id: o.id, restaurant_id: acct.storeId } })
})

t.test('FCM: the service-account grant, the access token used and cached, the message shape', async (t) => {
  const device = `fcm-android-${randomBytes(6).toString('hex')}`
  await register(device, 'android')
  const o = await order()
  await until(() => fcmSends().some((r) => r.body.toString().includes(device)))
  const grants = google.requests.filter(to('/token'))
  t.equal(grants.length, 1, 'one token request')
  const grant = Object.fromEntries(new URLSearchParams(grants[0]!.body.toString()))
  t.equal(grant.grant_type, 'urn:ietf:params:oauth:grant-type:jwt-bearer')
  const jwt = jwtParts(grant.assertion!)
  t.same(jwt.header, { alg: 'RS256', typ: 'JWT', kid: 'key-1' })
  t.match(jwt.claims, { iss: account.client_email, aud: account.token_uri, scope: 'https://www.googleapis.com/auth/firebase.messaging' })
  t.equal(Number(jwt.claims.exp) - Number(jwt.claims.iat), 3600)
  t.ok(createVerify('RSA-SHA256').update(jwt.input).verify(rsa.publicKey, jwt.sig), 'the assertion verifies with the service account\'s public key')
  const send = fcmSends().find((r) => r.body.toString().includes(device))!
  t.equal(send.path, '/v1/projects/dispatch-test/messages:send')
  t.equal(send.headers.authorization, `Bearer ${ACCESS}`)
  const { message } = JSON.parse(send.body.toString()) as { message: { token: string; notification: unknown; data: Record<string, unknown> } }
  t.equal(message.token, device)
  t.match(message.notification, { title: 'New order', body: new RegExp(`#${o.id}`) })
  t.same(message.data, { event: 'order.created', order_id: String(o.id), restaurant_id: String(acct.storeId) }, 'data values are strings')
  for (const v of Object.values(message.data)) t.type(v, 'string')
  await order()
  await until(() => fcmSends().filter((r) => r.body.toString().includes(device)).length === 2)
  t.equal(google.requests.filter(to('/token')).length, 1, 'the access token is cached')
})

t.test('FCM UNREGISTERED removes the device from every table; web push 410 removes the subscription', async (t) => {
  const device = `fcm-dead-${randomBytes(6).toString('hex')}`
  await register(device, 'ios')
  // The same token also registered to a driver (a shared phone): both rows go.
  const d = createDriver(db, acct.ownerId, acct.storeId)
  db.prepare('INSERT INTO driver_devices (driver_id, device_token, platform, created_at, updated_at) VALUES (?, ?, ?, ?, ?)').run(d.id, device, 'ios', nowIso(), nowIso())
  const b = browser('/push/gone')
  await register(b.token, 'web')
  const unregistered = { status: 404, body: { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND', details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }] } } }
  google.respond((r) => (r.path === '/token' ? tokenAnswer : r.body.toString().includes(device) ? unregistered : sent))
  pushService.respond((r) => (r.path === '/push/gone' ? { status: 410 } : { status: 201 }))
  await order()
  await until(() => !staffDevice(device) && !staffDevice(b.token), 10_000)
  t.notOk(db.prepare('SELECT 1 FROM driver_devices WHERE device_token = ?').get(device), 'the driver\'s row too')
  t.equal(fcmSends().filter((r) => r.body.toString().includes(device)).length, 1, 'not retried')
  t.equal(pushService.requests.filter(to('/push/gone')).length, 1, 'not retried')
})

t.test('a 500 from the push service is retried in the background', async (t) => {
  const b = browser('/push/flaky')
  await register(b.token, 'web')
  let n = 0
  pushService.respond((r) => (r.path === '/push/flaky' && n++ === 0 ? { status: 500 } : { status: 201 }))
  await order()
  await until(() => pushService.requests.filter(to('/push/flaky')).length === 2, 10_000)
  const [first, second] = pushService.requests.filter(to('/push/flaky'))
  t.equal(first!.headers['content-encoding'], 'aes128gcm')
  t.match(JSON.parse(decrypt(second!.body, b)), { title: 'New order' }, 'the retry carries the message')
  t.ok(staffDevice(b.token), 'a transient failure keeps the device')
})

t.test('an endpoint on an internal address is never contacted and its subscription is dropped', async (t) => {
  const b = browser('/latest/meta-data', 'https://169.254.169.254')
  t.match((await register(b.token, 'web')).body, { registered: true })
  await order()
  await until(() => !staffDevice(b.token), 10_000)
  t.pass('dropped after the SSRF check refused it')
})
