/**
 * A new owner gets in on a default server (issue 34 item 1): with no mail service configured, the
 * development provider prints each mail — recipient, subject, links — to the server's output, and the
 * first start's banner says so. Walked in Chromium as the person running the server would: sign up
 * on /signup, read the confirmation link from the server's output, open it, sign in, reach the
 * dashboard. A server started quieter than info prints no mail, and mails never become log lines
 * (their links are credentials).
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { browserFor } from './helpers/browser.ts'
import { spawnServer, type ServerProcess } from './helpers/process.ts'

const browser = await browserFor(t)
if (browser) {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-dev-mail-'))
  const servers: ServerProcess[] = []
  t.teardown(async () => { for (const s of servers) await s.kill(); rmSync(dir, { recursive: true, force: true }) })
  const start = async (name: string, env: Record<string, string>) => {
    const s = await spawnServer({ DB_PATH: join(dir, `${name}.db`), ...env }, 60_000)
    servers.push(s)
    return s
  }
  const waitFor = async <T>(get: () => T | null, what: string): Promise<T> => {
    for (let i = 0; i < 300; i++) { const v = get(); if (v) return v; await new Promise((r) => setTimeout(r, 100)) }
    throw new Error(`timed out waiting for ${what}`)
  }

  t.test('sign up, read the confirmation link from the server\'s output, confirm, sign in', async (t) => {
    // As `npm start` runs it: info logs, the demo account on the first start.
    const s = await start('default', { LOG_LEVEL: 'info', DEMO_SEED: '1' })
    const banner = await waitFor(() => (s.stdout().includes('Try the API:') ? s.stdout() : null), 'the first start\'s banner')
    t.match(banner, /Mail: no SMTP_HOST, so nothing is sent; each mail \(sign-up confirmation, password reset\) is\nprinted here/, 'the banner says where mail goes')

    const ctx = await browser.newContext()
    t.teardown(() => ctx.close())
    const page = await ctx.newPage()
    const email = `new-owner-${process.pid}@example.test`
    await page.goto(`${s.site}/signup`)
    await page.getByLabel('Your name').fill('Nova Owner')
    await page.getByLabel('Email').fill(email)
    await page.getByLabel(/Password/).fill('a long enough password')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.getByText('We have sent a link to').waitFor()

    const mail = await waitFor(() => new RegExp(`--- mail not sent \\(no SMTP_HOST\\) -+\\nTo: +${email.replace(/[.+]/g, '\\$&')}\\nSubject: +Confirm your email address\\nLink: +(\\S+)`).exec(s.stdout()), 'the confirmation mail in the output')
    const link = mail[1]!
    t.match(link, new RegExp(`^${s.site}/`), 'the link is on this server')
    t.notOk(s.stdout().split('\n').some((l) => l.startsWith('{') && l.includes(link)), 'the link is in no log line')

    await page.goto(link)
    await page.goto(`${s.site}/login`)
    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill('a long enough password')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.waitForURL((u) => u.pathname.startsWith('/dashboard'))
    t.pass('the new owner is on the dashboard')
  })

  t.test('a server quieter than info prints no mail', async (t) => {
    const s = await start('quiet', { LOG_LEVEL: 'warn', DEMO_SEED: '0' })
    const ctx = await browser.newContext()
    t.teardown(() => ctx.close())
    const page = await ctx.newPage()
    await page.goto(`${s.site}/signup`)
    await page.getByLabel('Your name').fill('Quiet Owner')
    await page.getByLabel('Email').fill(`quiet-${process.pid}@example.test`)
    await page.getByLabel(/Password/).fill('a long enough password')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.getByText('We have sent a link to').waitFor()
    t.notMatch(s.stdout(), /mail not sent/, 'no mail printed at warn')
  })
}
