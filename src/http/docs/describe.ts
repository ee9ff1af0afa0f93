/**
 * Every operation gets a description (issue 20 item 7): the operation's own text when it has one,
 * followed by what the route declares — who may call it, what it resolves, limits — so a new route
 * is described without anyone writing prose for it.
 */
import type { Route } from '../route.ts'
import { isPage } from './responses.ts'

const WHO: Record<string, string> = {
  none: 'No credential needed.',
  owner: 'Owner API token (or an app\'s OAuth token acting for the installing account).',
  driver: 'Driver token: acts for that driver only.',
  staff: 'Staff token: acts in the member\'s own store.',
  customer: 'Customer token: acts for that customer in that store only.',
  storefront: 'Storefront token (`X-Storefront-Token`): acts in its own store only.',
  session: 'The owner\'s web session (dashboard cookie); writes also need the CSRF token.',
  shell: 'Token of the owner\'s mobile shell app.',
}

const SCOPE: Record<string, string> = {
  store: 'the store `{id}`', order: 'the order', driver: 'the driver', endpoint: 'the webhook endpoint', app: 'the app',
  account: 'the managed account', subscription: 'the subscription', reseller: 'a reseller account',
}

export function describe(r: Route): string {
  const facts: string[] = [WHO[r.auth] ?? `Credential: ${r.auth}.`]
  if (r.capability) facts.push(`Needs the \`${r.capability}\` capability (api-v1 §5); without it 403 \`forbidden\`.`)
  if (r.permission) facts.push(`Needs the \`${r.permission}\` ${r.auth === 'storefront' ? 'scope' : 'permission'}; without it 403 \`forbidden\`.`)
  const scope = (r.op?.scope ?? []).map((s) => SCOPE[s] ?? s)
  if (scope.length) facts.push(`Resolves ${scope.join(', ')} before reading the input: someone else's answers 404 \`not_found\`.`)
  if (r.op?.feature) facts.push(`Needs the plan feature \`${r.op.feature}\`; otherwise 403 \`forbidden\`, reason \`feature_not_in_plan\`.`)
  if (r.rateLimit) facts.push(`Limited to ${r.rateLimit.perMinute} requests per minute per client address and store (api-v1 §8).`)
  if (r.rateLimit === false) facts.push('Not rate limited: probes may poll it as often as they like.')
  if (r.op?.empty) facts.push('Answers 204 with no body.')
  if (isPage(r)) facts.push('Answers an HTML page.')
  const own = r.description?.trim()
  const lead = own ?? `${r.summary.replace(/\.?$/, '.')}`
  return `${lead}\n\n${facts.join(' ')}`
}
