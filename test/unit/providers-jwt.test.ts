/** The service-account JWT of FCM HTTP v1 (src/providers/jwt.ts): RS256, verifiable with the account's public key. */
import t from 'tap'
import { createPublicKey, createVerify, generateKeyPairSync } from 'node:crypto'
import { FCM_SCOPE, serviceAccountAssertion, signRs256 } from '../../src/providers/jwt.ts'

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>

t.test('the signature verifies with the public key and the claims are the grant\'s', async (t) => {
  const now = Date.UTC(2030, 0, 1, 12)
  const jwt = serviceAccountAssertion({ client_email: 'push@proj.iam.gserviceaccount.com', private_key: pem, private_key_id: 'kid-1', token_uri: 'https://oauth2.example/token' }, FCM_SCOPE, now)
  const [h, c, s] = jwt.split('.') as [string, string, string]
  t.same(decode(h), { alg: 'RS256', typ: 'JWT', kid: 'kid-1' })
  t.same(decode(c), { iss: 'push@proj.iam.gserviceaccount.com', scope: FCM_SCOPE, aud: 'https://oauth2.example/token', iat: now / 1000, exp: now / 1000 + 3600 })
  const ok = createVerify('RSA-SHA256').update(`${h}.${c}`).verify(createPublicKey(pem), Buffer.from(s, 'base64url'))
  t.ok(ok, 'RS256 signature')
  t.notOk(createVerify('RSA-SHA256').update(`${h}.${c}x`).verify(createPublicKey(pem), Buffer.from(s, 'base64url')), 'not for other content')
})

t.test('no kid when the key file has none', async (t) => {
  t.same(decode(signRs256({ a: 1 }, pem).split('.')[0]!), { alg: 'RS256', typ: 'JWT' })
})
