/**
 * Forgotten password (issue 20 item 4; docs/dashboard.md "Forgotten password"), black-box over
 * HTTP: the mailed one-time link sets a new password, ends every session of the account and its
 * API tokens, works once and for one hour, does not tell who has an account, and is limited.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { PASSWORD, csrfOf, mail, newEmail, session, signIn, signedUp, visit } from './helpers/owner-site.ts'
import { sha256Hex } from '../src/auth/tokens.ts'

const resetLinkIn = (text: string) => /\/reset-password\/[A-Za-z0-9_-]+/.exec(text)?.[0] ?? ''
const NEW_PASSWORD = 'a brand new passphrase'

t.test('the link sets a new password, ends every session and its API tokens, and works once', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const { email, ownerId } = await signedUp(s)
  const browser = await session(s, email)
  const token = await visit(s, 'POST', '/dashboard/api-token', { cookie: browser.cookie, headers: { 'x-csrf-token': browser.csrf } })
  const apiToken = JSON.parse(token.text).token as string
  t.equal((await fetch(`${s.base}/me`, { headers: { authorization: `Bearer ${apiToken}` } })).status, 200, 'the session token works before the reset')

  const login = await visit(s, 'GET', '/login')
  t.match(login.text, /href="\/forgot-password"/, 'the sign-in page links to the forgotten-password page')
  const form = await visit(s, 'GET', '/forgot-password')
  t.equal(form.status, 200)
  t.match(form.text, /<form method="post" action="\/forgot-password">/)

  const sent = await visit(s, 'POST', '/forgot-password', { form: { email: email.toUpperCase() } })
  t.equal(sent.status, 200, 'the address matches case-insensitively')
  t.match(sent.text, /link to set a new password is on its way/)
  const message = mail(s).lastTo(email)!
  t.equal(message.subject, 'Reset your password')
  const link = resetLinkIn(message.text)
  t.ok(link, 'the mail carries the link')
  const raw = link.split('/').pop()!
  const stored = s.app.svc.db.prepare("SELECT token_hash, expires_at FROM owner_email_tokens WHERE purpose = 'reset_password' AND owner_id = ?").get(ownerId) as { token_hash: string; expires_at: string }
  t.equal(stored.token_hash, sha256Hex(raw), 'only the digest of the link is stored')
  const lifetime = Date.parse(stored.expires_at) - Date.now()
  t.ok(lifetime > 55 * 60_000 && lifetime <= 60 * 60_000, 'the link lives one hour')

  const page = await visit(s, 'GET', link)
  t.equal(page.status, 200)
  t.match(page.text, /type="password" name="password"/)
  t.equal(page.headers.get('referrer-policy'), 'same-origin', 'the link does not leak through Referer to other origins (and the form posts with the site\'s Origin)')
  t.equal((await visit(s, 'GET', link)).status, 200, 'looking at the form does not use the link')

  const short = await visit(s, 'POST', link, { form: { password: 'short' } })
  t.equal(short.status, 422, 'a short password is refused on the page')
  t.match(short.text, /at least 10 characters/)
  t.equal((await visit(s, 'POST', link, { form: { password: NEW_PASSWORD }, origin: 'http://evil.example' })).status, 403, 'a post from another origin is refused')
  t.equal((await visit(s, 'POST', link, { form: { password: NEW_PASSWORD }, origin: 'null' })).status, 403, 'Origin: null without a Referer on the site is refused')
  t.equal((await signIn(s, email, PASSWORD)).status, 303, 'the old password still works until the link is used')

  const done = await visit(s, 'POST', link, { form: { password: NEW_PASSWORD } })
  t.equal(done.status, 200)
  t.match(done.text, /Password changed/)
  t.equal((await signIn(s, email, PASSWORD)).status, 401, 'the old password no longer signs in')
  t.equal((await signIn(s, email, NEW_PASSWORD)).status, 303, 'the new one does')
  const after = await visit(s, 'GET', '/account/security', { cookie: browser.cookie })
  t.equal(after.status, 303, 'the session of before the reset has ended')
  t.equal((await fetch(`${s.base}/me`, { headers: { authorization: `Bearer ${apiToken}` } })).status, 401, 'and so has its API token')

  t.equal((await visit(s, 'GET', link)).status, 404, 'a used link shows the dead-link page')
  const again = await visit(s, 'POST', link, { form: { password: 'yet another passphrase' } })
  t.equal(again.status, 404, 'a used link cannot set a password again')
  t.equal((await signIn(s, email, NEW_PASSWORD)).status, 303, 'the password set by the link stays')
  t.equal((await visit(s, 'GET', '/reset-password/not-a-link')).status, 404)
  t.equal((await visit(s, 'GET', `/reset-password/${'A'.repeat(32)}`)).status, 404, 'an unknown link is a 404')
})

t.test('the answer does not tell who has an account; a verification link is not a reset link', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const unknown = newEmail()
  const before = mail(s).sent.length
  const r = await visit(s, 'POST', '/forgot-password', { form: { email: unknown } })
  t.equal(r.status, 200, 'an unknown address gets the same page')
  t.match(r.text, /link to set a new password is on its way/)
  t.equal(mail(s).sent.length, before, 'and no mail is sent anywhere')
  t.equal((await visit(s, 'POST', '/forgot-password', { form: { email: 'not an address' } })).status, 422)
  t.equal((await visit(s, 'POST', '/forgot-password', { form: { email: unknown }, origin: 'http://evil.example' })).status, 403)

  // A new account's verification link must not reset its password.
  const email = newEmail()
  await visit(s, 'POST', '/signup', { form: { email, password: PASSWORD } })
  const verify = /\/verify-email\/([A-Za-z0-9_-]+)/.exec(mail(s).lastTo(email)!.text)![1]!
  t.equal((await visit(s, 'GET', `/reset-password/${verify}`)).status, 404)
  t.equal((await visit(s, 'POST', `/reset-password/${verify}`, { form: { password: NEW_PASSWORD } })).status, 404)
  t.equal((await visit(s, 'GET', `/verify-email/${verify}`)).status, 200, 'the verification link still works for what it is')
})

t.test('a reset confirms the address; three links an hour per account; ten requests a minute per address', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const email = newEmail()
  await visit(s, 'POST', '/signup', { form: { email, password: PASSWORD } })
  t.equal((await signIn(s, email)).status, 403, 'not confirmed yet')

  const links: string[] = []
  for (let i = 0; i < 5; i++) {
    t.equal((await visit(s, 'POST', '/forgot-password', { form: { email } })).status, 200)
    const last = mail(s).sent.filter((m) => m.to === email && m.subject === 'Reset your password')
    links.push(resetLinkIn(last[last.length - 1]?.text ?? ''))
  }
  const mailed = mail(s).sent.filter((m) => m.to === email && m.subject === 'Reset your password').length
  t.equal(mailed, 3, 'at most three links an hour reach the mailbox')

  t.equal((await visit(s, 'POST', links[0]!, { form: { password: NEW_PASSWORD } })).status, 200)
  t.equal((await visit(s, 'GET', links[2]!)).status, 404, 'using one link ends the others')
  const signedIn = await signIn(s, email, NEW_PASSWORD)
  t.equal(signedIn.status, 303, 'the mail reached the address: it counts as confirmed')
  t.ok(csrfOf((await visit(s, 'GET', '/account/security', { cookie: signedIn.cookies[0]!.split(';')[0] })).text))

  let limited = null
  for (let i = 0; i < 12 && !limited; i++) {
    const r = await visit(s, 'POST', '/forgot-password', { form: { email: newEmail() } })
    if (r.status === 429) limited = r
  }
  t.ok(limited, 'the eleventh request a minute from one address is refused')
  t.ok(Number(limited?.headers.get('retry-after')) > 0, 'with Retry-After')
})
