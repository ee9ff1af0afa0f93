/** Pure parts of the app group (docs/app-shell.md): version comparison, handoff targets, path configuration. */
import t from 'tap'
import { handoffTarget, pathConfiguration, versionBelow } from '../../src/ops/apps/app-group.ts'
import { redactPath } from '../../src/log.ts'

t.test('versionBelow compares numerically, part by part', async (t) => {
  t.equal(versionBelow('1.9.9', '1.10.0'), true)
  t.equal(versionBelow('1.10', '1.9.9'), false)
  t.equal(versionBelow('1.0', '1.0.0'), false, 'missing parts are zero')
  t.equal(versionBelow('0.9', '1.0.0'), true)
  t.equal(versionBelow(null, '1.0.0'), false, 'an unknown version is not told to update')
})

t.test('handoffTarget keeps dashboard paths of this site only', async (t) => {
  t.equal(handoffTarget(undefined), '/dashboard')
  t.equal(handoffTarget('/dashboard'), '/dashboard')
  t.equal(handoffTarget('/dashboard/orders/12?tab=lines'), '/dashboard/orders/12?tab=lines')
  for (const bad of ['//evil.example', 'https://evil.example/dashboard', '/dashboardx', '/login', '/dashboard//evil', '/dashboard/\\evil', 'dashboard', '/dashboard/a b'])
    t.equal(handoffTarget(bad), '/dashboard', `${bad} → home`)
})

t.test('path configuration: the catch-all rule first, every pattern a valid regular expression, per-platform screens', async (t) => {
  for (const platform of ['ios', 'android'] as const) {
    const c = pathConfiguration(platform)
    t.same(c.rules[0]!.patterns, ['.*'], `${platform}: later rules override the default`)
    for (const r of c.rules) for (const p of r.patterns) t.doesNotThrow(() => new RegExp(p), `${platform}: ${p}`)
    const match = (path: string) => c.rules.filter((r) => r.patterns.some((p) => new RegExp(p).test(path))).reduce((acc, r) => ({ ...acc, ...r.properties }), {} as Record<string, unknown>)
    t.equal(match('/dashboard/menu/items/new').context, 'modal', `${platform}: a create form is a modal`)
    t.equal(match('/dashboard/orders').context, 'default', `${platform}: the board is a normal screen`)
    t.equal(match('/s/demo-bistro').external, true, `${platform}: the store website opens in the browser`)
  }
})

t.test('a handoff nonce never reaches a log line', async (t) => {
  const nonce = 'Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eHF1dXg'
  t.equal(redactPath(`/api/v1/app/handoff/${nonce}?next=/dashboard`), '/api/v1/app/handoff/[redacted]')
})
