/**
 * The first start's message (README "Quick start"): the demo account as JSON for scripts, then a
 * short summary for a person — what to open, how to sign in there, and one API call to try.
 */
import type { DemoAccount } from './seed.ts'

/** `devMail`: no mail service is configured, so mails (sign-up confirmation, password reset) are printed to this output. */
export function firstRunMessage(demo: DemoAccount, siteUrl: string, devMail = false): string {
  const kitchen = demo.staff.find((s) => s.role === 'kitchen')
  const manager = demo.staff.find((s) => s.role === 'manager')
  const row = (label: string, url: string, ...how: string[]) =>
    [`  ${label.padEnd(18)}${url}`, ...how.map((h) => `  ${''.padEnd(18)}${h}`)]
  const lines = [
    '',
    'Demo account created (shown once, keep it):',
    JSON.stringify(demo, null, 2),
    '',
    'Open:',
    ...row('Owner dashboard', `${siteUrl}/login`, `email:    ${demo.owner.email}`, `password: ${demo.owner.password}`),
    ...row('Store website', demo.store.url),
    ...row('API reference', `${siteUrl}/docs`),
    ...(kitchen && manager
      ? row('Kitchen screen', `${siteUrl}/kds?store=${demo.store.id}`,
        // docs/kds.md "Kitchen screen page": a screen is enrolled once by a manager, then cooks sign in by PIN.
        `enroll once as the manager: ${manager.email} / ${manager.password}`,
        `then sign in with the kitchen PIN: ${kitchen.pin}`)
      : []),
    ...(devMail
      ? ['', 'Mail: no SMTP_HOST, so nothing is sent; each mail (sign-up confirmation, password reset) is',
        'printed here with its links ("mail not sent"), while LOG_LEVEL is info or finer.']
      : []),
    '',
    'Try the API:',
    `  curl -H "Authorization: Bearer ${demo.owner.token}" ${siteUrl}/api/v1/restaurants`,
    '',
    '',
  ]
  return lines.join('\n')
}
