/**
 * Form bindings (issue 33 item 1, src/http/form.ts): an HTML form bound to an operation runs it
 * through the one pipeline, and a form of the web session reads the session's CSRF token from its
 * own body — the `csrfPending && (!formRead || route.op)` hole refused every op-bound form unless the
 * token came as a header, which no browser form can send.
 */
import t from 'tap'
import * as OTPAuth from 'otpauth'
import { startServer } from './helpers/server.ts'
import { liveRoutes } from './helpers/routes.ts'
import { session, signedUp, visit } from './helpers/owner-site.ts'
import { ApiError, WHOLE_REQUEST } from '../src/errors.ts'
import { formErrors } from '../src/http/form.ts'

t.test('the account security forms are bindings of the session-family operations', async (t) => {
  const bound = (path: string) => liveRoutes().find((r) => r.method === 'POST' && r.site && r.path === path)
  for (const [path, id] of [
    ['/account/sessions/{id}/revoke', 'owner.sessions.revoke'], ['/account/two-factor/start', 'owner.two_factor.start'],
    ['/account/two-factor/confirm', 'owner.two_factor.confirm'], ['/account/two-factor/disable', 'owner.two_factor.disable'],
  ] as const) {
    const r = bound(path)
    t.equal(r?.op?.id, id, `${path} runs ${id}`)
    t.equal(r?.form, true, `${path} reads a form body`)
    t.same(r?.op?.access, { session: true }, `${path}: the policy admits the web session family only`)
  }
})

t.test('the OAuth consent, owner sign-in and sign-up, password and store website forms are bindings of their operations', async (t) => {
  const bound = (path: string) => liveRoutes().find((r) => r.method === 'POST' && r.site && r.path === path)
  for (const [path, id] of [
    ['/oauth/authorize', 'oauth.authorize.decide'], ['/login', 'owner.sign_in'], ['/logout', 'owner.sign_out'], ['/signup', 'owner.sign_up'], ['/forgot-password', 'owner.password.forgot'], ['/reset-password/{token}', 'owner.password.reset'],
    ['/s/{slug}/account/login', 'customer.auth.login'], ['/s/{slug}/account/register', 'customer.auth.register'],
    ['/s/{slug}/account/otp', 'customer.auth.otp.request'], ['/s/{slug}/account/otp/verify', 'customer.auth.otp.verify'],
    ['/s/{slug}/account/addresses', 'customer.addresses.create'], ['/s/{slug}/account/addresses/{address}/delete', 'customer.addresses.delete'],
    ['/s/{slug}/account/logout', 'customer.logout'], ['/s/{slug}/checkout', 'website.checkout'], ['/s/{slug}/cart', 'website.cart.change'],
  ] as const) {
    t.equal(bound(path)?.op?.id, id, `${path} runs ${id}`)
  }
})

t.test('a form bound to an operation takes the CSRF token from its body; without it nothing runs', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const { email, ownerId } = await signedUp(s)
  const { cookie, csrf } = await session(s, email)
  const pending = () => s.app.svc.db.prepare('SELECT totp_pending FROM owners WHERE id = ?').pluck().get(ownerId) as string | null

  const missing = await visit(s, 'POST', '/account/two-factor/start', { cookie, form: {} })
  t.equal(missing.status, 403, 'no token in the body: 403')
  t.match(JSON.parse(missing.text), { code: 'forbidden' }, 'the error envelope')
  t.equal(pending(), null, 'and the operation did not run')

  const ok = await visit(s, 'POST', '/account/two-factor/start', { cookie, form: { csrf } })
  t.equal(ok.status, 200, 'the token in the form body, no header: the operation runs')
  t.ok(pending(), 'enrolment started')
  t.match(ok.text, /Add the key to your app/, 'the page says what happened')

  // The operation's refusal is the page again with its message and status (422), never the JSON envelope.
  const wrong = await visit(s, 'POST', '/account/two-factor/confirm', { cookie, form: { csrf, code: '000000' } })
  t.equal(wrong.status, 422, 'a wrong code: 422')
  t.match(wrong.headers.get('content-type'), /text\/html/, 'as the page')
  t.match(wrong.text, /The code is wrong/, 'with the operation\'s message')

  const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(pending()!) }).generate()
  const on = await visit(s, 'POST', '/account/two-factor/confirm', { cookie, form: { csrf, code } })
  t.equal(on.status, 200, 'the right code turns two-factor on')
  t.ok(s.app.svc.db.prepare('SELECT totp_secret FROM owners WHERE id = ?').pluck().get(ownerId), 'two-factor is on')
})

t.test('formErrors: field errors become field messages, the whole request the form\'s', async (t) => {
  t.same(formErrors(new ApiError('validation_failed', undefined, { phone: ['Enter a phone.'], [WHOLE_REQUEST]: ['Try again.'] }), { phone: 'customer_phone' }),
    [{ field: 'customer_phone', message: 'Enter a phone.' }, { field: '', message: 'Try again.' }])
  t.same(formErrors(new ApiError('conflict', 'Two-factor sign-in is off.')), [{ field: '', message: 'Two-factor sign-in is off.' }])
})

t.test('the OAuth consent form reads its CSRF token from the body too (the consent page\'s failure class)', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const { email } = await signedUp(s)
  const { cookie, csrf } = await session(s, email)
  const ask = { response_type: 'code', client_id: 'no-such-client', redirect_uri: 'https://app.example/cb', decision: 'approve' }
  const refused = await visit(s, 'POST', '/oauth/authorize', { cookie, form: ask })
  t.equal(refused.status, 403, 'no token: 403 before the operation runs')
  const ran = await visit(s, 'POST', '/oauth/authorize', { cookie, form: { ...ask, csrf } })
  t.equal(ran.status, 400, 'the token in the body: the operation runs and answers its page (unknown client, never redirected)')
  t.match(ran.text, /unknown or not published/)
  t.equal(ran.location, null, 'not sent anywhere')
})
