// The setup checklist of a new account (issue 34 item 16; docs/dashboard.md "First steps"): drawn
// above the Orders and Stores pages from `GET /account/setup`, which ticks each step from the
// account's data. Each open step links to the page where it is done; the list is gone once every
// step is done or the owner dismisses it (`PUT /account/setup`, for every session of the account).
// Looked at again after every action of the page (core.js sends `dashboard:changed`).

import { SITE, act, api, h, store, view, type Json } from './core.js'

interface Step { key: string; title: string; done: boolean; detail: string; page: string }

export async function setupChecklist(): Promise<void> {
  const box = h('section', { class: 'setup card', id: 'setup', 'aria-labelledby': 'setup-title' })
  box.hidden = true
  view.before(box)
  const query = () => (store ? `?restaurant_id=${store.id}` : '')
  const link = (s: Step) => `${SITE}/dashboard/${s.page}${store ? `?store=${store.id}` : ''}`
  const draw = (list: Json): void => {
    if (list.complete || list.dismissed) { box.hidden = true; box.replaceChildren(); return }
    const steps = list.steps as Step[]
    box.replaceChildren(
      h('h2', { id: 'setup-title', text: `Get ready to sell: ${list.done} of ${list.total} done` }),
      h('ol', { class: 'steps' }, steps.map((s) => h('li', { class: s.done ? 'done' : 'todo', data: { step: s.key, done: s.done ? '1' : '0' } },
        h('span', { class: 'tick', 'aria-hidden': 'true', text: s.done ? '✓' : '○' }), ' ',
        s.done ? h('span', { text: s.title }) : h('a', { href: link(s), text: s.title }),
        h('span', { class: 'visually-hidden', text: s.done ? ' (done)' : ' (to do)' }),
        h('div', { class: 'muted', text: s.detail })))),
      h('button', { type: 'button', on: { click: act(async () => { draw(await api('PUT', '/account/setup', { dismissed: true })) }) }, text: 'Dismiss the checklist' }))
    box.hidden = false
  }
  const load = async (): Promise<void> => { draw(await api('GET', `/account/setup${query()}`)) }
  document.addEventListener('dashboard:changed', () => { load().catch(() => undefined) })
  await load()
}
