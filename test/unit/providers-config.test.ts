/** Provider settings (docs/providers.md; src/providers/config.ts through loadConfig): defaults, and refusals at start. */
import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import webpush from 'web-push'
import { loadConfig } from '../../src/config.ts'
import { parseWebSubscription } from '../../src/providers/web-subscription.ts'

const SID = `AC${'a'.repeat(32)}`
const vapid = webpush.generateVAPIDKeys()
const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
const account = JSON.stringify({ client_email: 'x@p.iam.gserviceaccount.com', private_key: pem, token_uri: 'https://oauth2.example/token' })

t.test('development providers by default', async (t) => {
  t.same(loadConfig({}).providers, { sms: { kind: 'dev' }, email: { kind: 'dev' }, push: { kind: 'dev' }, timeoutMs: 5000, router: { kind: 'straight' }, geocoder: { kind: 'none' } })
})

t.test('real providers with what they need', async (t) => {
  const c = loadConfig({
    SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 'tok', TWILIO_FROM: '+15550001111',
    EMAIL_PROVIDER: 'smtp', SMTP_HOST: 'mail.example', SMTP_USER: 'u', SMTP_PASSWORD: 'p', EMAIL_FROM: 'Dispatch <no-reply@example.test>',
    PUSH_PROVIDER: 'live', VAPID_PUBLIC_KEY: vapid.publicKey, VAPID_PRIVATE_KEY: vapid.privateKey, VAPID_SUBJECT: 'mailto:ops@example.test',
    FCM_PROJECT_ID: 'my-project', FCM_SERVICE_ACCOUNT_JSON: account,
  }).providers
  t.match(c.sms, { kind: 'twilio', apiBase: 'https://api.twilio.com', from: '+15550001111', messagingServiceSid: null })
  t.match(c.email, { kind: 'smtp', transport: { host: 'mail.example', port: 587, secure: false, auth: { user: 'u', pass: 'p' } } })
  t.match(c.push, { kind: 'live', vapid: { subject: 'mailto:ops@example.test' }, fcm: { projectId: 'my-project', apiBase: 'https://fcm.googleapis.com', account: { token_uri: 'https://oauth2.example/token' } }, allowLoopback: false })
  t.match(loadConfig({ EMAIL_PROVIDER: 'smtp', SMTP_URL: 'smtps://u:p@mail.example', EMAIL_FROM: 'a@b.test' }).providers.email, { transport: 'smtps://u:p@mail.example' })
})

t.test('a real provider without its settings is refused at start, in one line, without the secrets', async (t) => {
  const refused: Array<[Record<string, string>, RegExp]> = [
    [{ SMS_PROVIDER: 'twilio' }, /SMS_PROVIDER=twilio needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM/],
    [{ SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 'sekrit-token' }, /needs .*TWILIO_FROM or TWILIO_MESSAGING_SERVICE_SID/],
    [{ SMS_PROVIDER: 'sns' }, /SMS_PROVIDER: must be dev or twilio/],
    [{ TWILIO_ACCOUNT_SID: 'sekrit-token' }, /TWILIO_ACCOUNT_SID: must be AC/],
    [{ EMAIL_PROVIDER: 'smtp', SMTP_HOST: 'mail.example' }, /EMAIL_PROVIDER=smtp needs EMAIL_FROM/],
    [{ EMAIL_PROVIDER: 'smtp', EMAIL_FROM: 'a@b.test' }, /needs SMTP_URL or SMTP_HOST/],
    [{ SMTP_URL: 'http://mail.example' }, /SMTP_URL: must be smtp/],
    [{ PUSH_PROVIDER: 'live' }, /PUSH_PROVIDER=live needs VAPID_/],
    [{ PUSH_PROVIDER: 'live', VAPID_PUBLIC_KEY: vapid.publicKey }, /go together/],
    [{ VAPID_PRIVATE_KEY: 'sekrit-token' }, /VAPID_PRIVATE_KEY: must be/],
    [{ PUSH_PROVIDER: 'live', FCM_PROJECT_ID: 'my-project' }, /needs FCM_SERVICE_ACCOUNT_JSON or FCM_SERVICE_ACCOUNT_FILE/],
    [{ PUSH_PROVIDER: 'live', FCM_PROJECT_ID: 'my-project', FCM_SERVICE_ACCOUNT_JSON: '{"private_key": "sekrit-token"' }, /the FCM service account is not JSON/],
    [{ PUSH_PROVIDER: 'live', FCM_PROJECT_ID: 'my-project', FCM_SERVICE_ACCOUNT_JSON: '{"client_email": "a@b", "private_key": "sekrit-token"}' }, /private_key is not a PEM/],
    [{ PUSH_PROVIDER: 'live', FCM_PROJECT_ID: 'my-project', FCM_SERVICE_ACCOUNT_FILE: '/nonexistent/key.json' }, /FCM_SERVICE_ACCOUNT_FILE cannot be read: ENOENT/],
    [{ PROVIDER_TIMEOUT_MS: '5' }, /PROVIDER_TIMEOUT_MS: must be at least 100/],
  ]
  for (const [env, pattern] of refused) {
    let msg = ''
    try { loadConfig(env) } catch (e) { msg = (e as Error).message }
    t.match(msg, /^invalid configuration: /, JSON.stringify(env))
    t.match(msg, pattern, JSON.stringify(env))
    t.notMatch(msg, /\n/, 'one line')
    t.notMatch(msg, /sekrit/, 'no secret in the message')
  }
})

t.test('a browser registers its PushSubscription JSON as the device token', async (t) => {
  const keys = { p256dh: Buffer.alloc(65, 4).toString('base64url'), auth: Buffer.alloc(16, 1).toString('base64url') }
  t.ok(parseWebSubscription(JSON.stringify({ endpoint: 'https://push.example/abc', keys })))
  for (const bad of ['not json', '{}', JSON.stringify({ endpoint: 'ftp://x', keys }), JSON.stringify({ endpoint: 'https://x', keys: { ...keys, auth: 'AAAA' } })]) {
    t.equal(parseWebSubscription(bad), null, bad)
  }
})
