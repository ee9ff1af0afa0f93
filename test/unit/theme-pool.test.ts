/**
 * The theme pool (src/themes/pool.ts; docs/themes.md "Limits"): jobs run in worker threads with a
 * time budget per caller class, a heap cap per thread and a bounded share per class; a job past its
 * time or memory answers `over_budget` and its thread is replaced; a full share is 503 with
 * Retry-After at once; waiting jobs start pages first, then owners, then anonymous callers.
 */
import t from 'tap'
import pino from 'pino'
import { checkTheme, createThemePool, type ThemePoolOptions } from '../../src/themes/pool.ts'
import { ApiError } from '../../src/errors.ts'

const log = pino({ level: 'silent' })
const pool = (opts: Partial<ThemePoolOptions> = {}) => {
  const p = createThemePool({ workers: 1, log, ...opts })
  t.teardown(() => p.close())
  return p
}

const theme = (home = 'home'): Record<string, string> => {
  const files: Record<string, string> = { 'layout/theme.liquid': '{{ content_for_layout }}' }
  for (const p of ['home', 'menu', 'item', 'cart', 'checkout', 'order']) files[`templates/${p}.liquid`] = p
  files['templates/home.liquid'] = home
  return files
}
const LOOP = '{% for i in (1..10000) %}{% for j in (1..10000) %}x{% endfor %}{% endfor %}'
/** About a megabyte of Liquid: compiling it takes far longer than a few milliseconds, with no render to stop. */
const heavy = (): Record<string, string> => {
  const files = theme()
  for (let i = 0; i < 190; i++) files[`sections/s${i}.liquid`] = '{% if store.name %}{{ store.name | upcase }}{% endif %}'.repeat(90) + '{% schema %}{"name":"S"}{% endschema %}'
  return files
}
const refusal = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e)

t.test('a valid theme validates in a thread, with its outline', async (t) => {
  const r = await pool().run('owner', { kind: 'validate', files: theme() })
  t.ok(r.ok)
  if (r.ok) {
    t.same(r.value.problems, [])
    t.ok(r.value.outline && r.value.outline.schemas instanceof Map, 'schemas cross the thread as a Map')
  }
})

t.test('renders stop when the job budget is spent; the thread is kept', async (t) => {
  const p = pool({ budgets: { public: 50 } })
  const started = performance.now()
  const r = await checkTheme(p, 'public', { kind: 'validate', files: theme(LOOP) })
  // The template that loops is stopped; once the budget is spent, the layout drawn around it may be
  // stopped too (when depends on how far the CPU clock had moved): every problem is the render limit.
  t.ok(r.problems.some((x) => x.file === 'templates/home.liquid' && x.code === 'render_error' && /render limit/.test(x.message)), 'the render limit of the budget stopped it')
  t.ok(r.problems.length > 0 && r.problems.every((x) => x.code === 'render_error' && /render limit/.test(x.message)), 'and nothing else went wrong')
  t.ok(performance.now() - started < 5000, 'long before the loop would end')
  const page = await p.run('page', { kind: 'render', key: 'a', files: theme('<b>{{ store.name }}</b>'), input: { template: 'home', context: { store: { name: 'Ana' } } } })
  t.same(page, { ok: true, value: { html: '<b>Ana</b>' } }, 'the same thread draws the next page')
})

t.test('a job past budget and grace ends its thread and answers over_budget; a new thread takes the next job', async (t) => {
  const p = pool({ budgets: { owner: 1 }, graceMs: 1 })
  const r = await checkTheme(p, 'owner', { kind: 'validate', files: heavy() })
  t.match(r.problems, [{ file: '', line: 0, code: 'over_budget', message: /1 ms of CPU time/ }])
  const next = await p.run('page', { kind: 'render', key: 'k', files: theme('<i>ok</i>'), input: { template: 'home', context: {} } })
  t.same(next, { ok: true, value: { html: '<i>ok</i>' } }, 'the next job runs in a new thread')
})

t.test('a job past the heap cap answers over_budget (memory)', async (t) => {
  const p = pool({ heapMb: 16, budgets: { page: 20_000 } })
  const big = theme('{% for i in (1..3000000) %}abcdefghij{{ i }}{% endfor %}')
  t.same(await p.run('page', { kind: 'render', key: 'big', files: big, input: { template: 'home', context: {} } }), { ok: false, reason: 'memory' })
  const again = await checkTheme(p, 'owner', { kind: 'validate', files: theme() })
  t.same(again.problems, [], 'a new thread validates the next theme')
})

t.test('a full share is refused at once with 503 and Retry-After; other classes still get in', async (t) => {
  const p = pool({ caps: { public: 2 }, budgets: { public: 300 } })
  const running = [checkTheme(p, 'public', { kind: 'validate', files: theme(LOOP) }), checkTheme(p, 'public', { kind: 'validate', files: theme(LOOP) })]
  const refused = await refusal(p.run('public', { kind: 'validate', files: theme() }))
  t.ok(refused instanceof ApiError && refused.status === 503 && refused.code === 'unavailable', '503 unavailable')
  t.match((refused as ApiError).headers, { 'Retry-After': /^\d+$/ })
  t.same(p.load(), { page: 0, owner: 0, public: 2 })
  const owner = await p.run('owner', { kind: 'outline', key: 'o', files: theme() })
  t.ok(owner.ok, 'an owner job is not in the anonymous share')
  await Promise.all(running)
  t.same(p.load(), { page: 0, owner: 0, public: 0 }, 'settled jobs leave the pool')
})

t.test('waiting jobs start by class: pages, then owners, then anonymous callers', async (t) => {
  const p = pool({ budgets: { owner: 300 } })
  const order: string[] = []
  const blocker = p.run('owner', { kind: 'validate', files: theme(LOOP) })
  const queued = [
    p.run('public', { kind: 'validate', files: theme() }).then(() => order.push('public')),
    p.run('owner', { kind: 'validate', files: theme() }).then(() => order.push('owner')),
    p.run('page', { kind: 'render', key: 'p', files: theme(), input: { template: 'home', context: {} } }).then(() => order.push('page')),
  ]
  await blocker
  await Promise.all(queued)
  t.same(order, ['page', 'owner', 'public'])
})

t.test('closing refuses what is waiting and running with 503', async (t) => {
  const p = createThemePool({ workers: 1, log, budgets: { owner: 5000 } })
  const running = refusal(p.run('owner', { kind: 'validate', files: theme(LOOP) }))
  const waiting = refusal(p.run('owner', { kind: 'validate', files: theme() }))
  await new Promise((r) => setTimeout(r, 50))
  await p.close()
  for (const e of await Promise.all([running, waiting])) t.ok(e instanceof ApiError && e.status === 503)
  t.ok((await refusal(p.run('owner', { kind: 'validate', files: theme() }))) instanceof ApiError, 'and every job after')
})
