/**
 * The first start's message (README "Quick start"): the demo account as JSON for scripts, then a
 * short summary for a person — what to open, how to sign in there, and one API call to try.
 */
import type { DemoAccount } from './seed.ts'

export function firstRunMessage(demo: DemoAccount, siteUrl: string): string {
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
    '',
    'Try the API:',
    `  curl -H "Authorization: Bearer ${demo.owner.token}" ${siteUrl}/api/v1/restaurants`,
    '',
    '',
  ]
  return lines.join('\n')
}
