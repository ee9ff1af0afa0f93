/**
 * Email over SMTP (issue 20 item 4; docs/providers.md "Email"), against a local `smtp-server` that
 * records what it is given: an owner's sign-up through the site delivers the verification mail
 * (authenticated, from EMAIL_FROM) whose link confirms the address; a 451 is retried, a 550 is not
 * and the sign-up answers 503.
 */
import t from 'tap'
import { SMTPServer, type SMTPServerSession } from 'smtp-server'
import type { AddressInfo } from 'node:net'
import { startServer } from './helpers/server.ts'
import { linkIn, newEmail, visit } from './helpers/owner-site.ts'

interface Received { from: string; to: string[]; user: string | undefined; raw: string }
const received: Received[] = []
/** SMTP replies for the next messages (RFC 5321 §4.2), instead of accepting them. */
const refusals: number[] = []
const smtp = new SMTPServer({
  authOptional: false, allowInsecureAuth: true, disabledCommands: ['STARTTLS'], logger: false,
  onAuth(auth, _session, cb) {
    if (auth.username === 'mailer' && auth.password === 'smtp-password-secret') return cb(null, { user: auth.username })
    cb(new Error('Invalid username or password'))
  },
  onData(stream, session: SMTPServerSession, cb) {
    const chunks: Buffer[] = []
    stream.on('data', (c: Buffer) => chunks.push(c))
    stream.on('end', () => {
      const code = refusals.shift()
      if (code) return cb(Object.assign(new Error(code < 500 ? 'Try again later' : 'Mailbox unavailable'), { responseCode: code }))
      received.push({
        from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address),
        user: session.user as string | undefined, raw: Buffer.concat(chunks).toString(),
      })
      cb()
    })
  },
})
await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r))
const smtpPort = (smtp.server.address() as AddressInfo).port

const s = await startServer({
  RATE_LIMIT_PER_MINUTE: '100000', EMAIL_PROVIDER: 'smtp', EMAIL_FROM: 'Dispatch <no-reply@dispatch.test>',
  SMTP_URL: `smtp://mailer:smtp-password-secret@127.0.0.1:${smtpPort}`,
})
t.teardown(async () => { await s.close(); await new Promise<void>((r) => smtp.close(() => r())) })

/** The text of a message as sent (quoted-printable soft breaks and escapes undone). */
const textOf = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
const signUp = (email: string) => visit(s, 'POST', '/signup', { form: { name: 'Olga', email, password: 'correct horse battery' } })

t.test('sign-up mails the verification link through SMTP, and the link confirms the address', async (t) => {
  const email = newEmail()
  const before = received.length
  const r = await signUp(email)
  t.equal(r.status, 200, 'check your email')
  t.equal(received.length, before + 1, 'one message, delivered before the answer')
  const m = received.at(-1)!
  t.same(m.to, [email])
  t.equal(m.from, 'no-reply@dispatch.test')
  t.equal(m.user, 'mailer', 'authenticated with the credentials of SMTP_URL')
  t.match(m.raw, /^From: Dispatch <no-reply@dispatch\.test>/m)
  t.match(m.raw, /^Subject: Confirm your email address/m)
  const link = linkIn(textOf(m.raw))
  t.match(link, /^\/verify-email\/[A-Za-z0-9_-]{20,}$/)
  t.equal((await visit(s, 'GET', link)).status, 200, 'the link confirms the address')
  t.ok(s.app.svc.db.prepare('SELECT email_verified_at FROM owners WHERE email = ?').pluck().get(email), 'verified')
})

t.test('a 451 (try later) is retried and the mail arrives', async (t) => {
  const email = newEmail()
  refusals.push(451)
  const r = await signUp(email)
  t.equal(r.status, 200)
  t.equal(refusals.length, 0, 'the refusal was met')
  t.same(received.at(-1)!.to, [email], 'the retry delivered it')
})

t.test('a 550 is not retried: the sign-up answers 503', async (t) => {
  const email = newEmail()
  const before = received.length
  refusals.push(550, 550)
  const r = await signUp(email)
  t.equal(r.status, 503)
  t.equal(refusals.length, 1, 'one attempt only')
  t.equal(received.length, before)
  refusals.length = 0
})
