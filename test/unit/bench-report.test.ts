/**
 * The bench report (issue 19 item 5), pure parts only (no bench runs): the chart spec renders to
 * SVG in-process, the run summary, and the README table rewriter (markers, kept rows, idempotent).
 */
import t from 'tap'
import { compile } from 'vega-lite'
import { chartKind, chartPoints, chartSpec, parseLoad, renderSvg, seriesOf, svgToPng } from '../../bench/lib/chart.ts'
import { END, KEEP, rewriteReadme, START, type ResultFile } from '../../bench/lib/readme-table.ts'
import type { BenchRow, ScenarioResult } from '../../bench/lib/scenario.ts'
import { summaryMarkdown } from '../../bench/lib/summary.ts'

const row = (scenario: string, load: string, throughput: number, p99Ms: number, extra: Partial<BenchRow> = {}): BenchRow => ({
  scenario, load, durationSec: 10, requests: throughput * 10, throughput, p50Ms: p99Ms / 3, p90Ms: p99Ms / 2, p99Ms, maxMs: p99Ms * 2,
  non2xx: 0, errors: 0, ratio: null, serverCpuUsPerReq: 200, serverCpuPct: 90, ...extra,
})

// Two series measured at two loads each: ours and a baseline (found by name).
const multi: ScenarioResult = {
  name: 'orders',
  rows: [
    row('Ourserver gc max', 'closed loop, 64 conns', 4000, 30),
    row('Ourserver gc @5000/s', '5000/s offered, 64 conns', 4500, 29),
    row('Fastifybaseline max', 'closed loop, 64 conns', 1700, 60),
    row('Fastifybaseline @5000/s', '5000/s offered, 64 conns', 1800, 900),
  ],
  notes: ['a note'],
  targets: [{ target: '15k/s', measured: '4000/s', met: false }],
}
// A single load point per series: bars.
const single: ScenarioResult = {
  name: 'fitment-filter',
  rows: [row('Filteredmenu', 'sequential, 500 requests', 136, 29.5), row('Wholemenu', 'sequential, 5 requests', 0.3, 6866, { p99Ms: NaN })],
  notes: [],
}

t.test('rows become points: series, role and load derived from the names', async (t) => {
  t.same(parseLoad('5,000/s offered, 64 conns'), { value: 5000, kind: 'rate' })
  t.same(parseLoad('closed loop, 64 conns'), { value: 64, kind: 'connections' })
  t.same(parseLoad('sequential'), { value: null, kind: null })
  t.equal(seriesOf({ scenario: 'uws+actors, group commit @5000/s' }), 'uws+actors, group commit')
  t.equal(seriesOf({ scenario: 'hot item #3' }), 'hot item')
  t.equal(seriesOf({ scenario: 'x max', series: 'given' }), 'given')
  const pts = chartPoints(multi)
  t.same(pts.map((p) => p.role), ['ours', 'ours', 'baseline', 'baseline'])
  t.same(pts.map((p) => p.series), ['Ourserver gc', 'Ourserver gc', 'Fastifybaseline', 'Fastifybaseline'])
  t.equal(chartKind(pts), 'lines')
  t.equal(chartKind(chartPoints(single)), 'bars')
  t.equal(chartPoints(single)[1]!.p99, null, 'NaN latency is left out, not drawn as 0')
  t.equal(chartSpec({ name: 'soak', rows: [], notes: [] }), null, 'no rows: no chart')
})

t.test('the spec is valid vega-lite and renders to SVG (and PNG) with the series names', async (t) => {
  for (const [r, names] of [[multi, ['Ourserver gc', 'Fastifybaseline']], [single, ['Filteredmenu', 'Wholemenu']]] as const) {
    const spec = chartSpec(r, 'a subtitle')!
    t.ok(spec, `${r.name}: a spec`)
    t.doesNotThrow(() => compile(spec), `${r.name}: vega-lite compiles it`)
    const svg = await renderSvg(spec)
    t.match(svg, /^<svg[\s>]/, `${r.name}: an SVG document`)
    for (const n of names) t.ok(svg.includes(n), `${r.name}: series ${n} appears`)
    t.ok(svg.includes('p99 latency (ms)') && svg.includes('req/s (2xx)'), `${r.name}: both panels`)
    t.ok(svg.includes('baseline') && svg.includes('ours'), `${r.name}: the ours/baseline legend`)
    if (r === multi) {
      const png = await svgToPng(svg)
      t.same([...png.subarray(1, 4)], [...Buffer.from('PNG')], 'resvg makes a PNG')
    }
  }
})

t.test('the markdown summary: date, machine, node, commit, a table, targets and links per scenario', async (t) => {
  const md = summaryMarkdown({
    startedAt: new Date('2026-11-23T10:00:00.000Z'),
    finishedAt: new Date('2026-11-23T10:05:00.000Z'),
    machine: { node: 'v20.20.2', cpus: 2, cpuModel: 'AMD EPYC', loadavg: [1.5, 1, 0.5], commit: 'abc1234+dirty' },
    options: { duration: 10, only: [] },
    entries: [
      { name: 'orders', result: { ...multi, rows: [...multi.rows, row('pipe | name', 'x', 1, 1)] }, json: '/r/2026-x-orders.json', svg: '/r/2026-x-orders.svg', png: '/r/2026-x-orders.png' },
      { name: 'kds', error: 'server did not start\nstack' },
    ],
  })
  t.match(md, /^# Bench run 2026-11-23T10:00:00.000Z/)
  t.match(md, '2 × AMD EPYC (2 cores), load average at the end 1.50 / 1.00 / 0.50')
  t.match(md, '- node: v20.20.2')
  t.match(md, '- commit: abc1234+dirty')
  t.match(md, '## orders')
  t.match(md, '![orders: throughput and p99 latency](2026-x-orders.svg)', 'the chart is linked relative to the summary')
  t.match(md, '[PNG](2026-x-orders.png)')
  t.match(md, '[JSON](2026-x-orders.json)')
  t.match(md, '| scenario | load | req/s (2xx) |')
  t.match(md, '| Ourserver gc max | closed loop, 64 conns | 4,000 |')
  t.match(md, 'pipe \\| name', 'pipes in a cell are escaped')
  t.match(md, '❌ **missed**: 15k/s — 4000/s')
  t.match(md, '- a note')
  t.match(md, '## kds\n\n**Failed:** server did not start\n')
  t.notMatch(md, 'stack')
})

const README = [
  '# App', '', '## Benchmarks', '', 'intro', '', START,
  '| scenario | result | baseline in the same run | target |',
  '|---|---|---|---|',
  '| orders: hand row one | 4,388/s | 2.47× | not met |',
  '| orders @ 5,000/s | 4,563/s | — | — |',
  '| tracking: hand row ([docs/realtime.md](docs/realtime.md)) | 9,943/s | Socket.IO | met |',
  `| ${KEEP} webhooks: storm, curated | idle → storm | before | met |`,
  '| webhooks: drain ([docs/webhooks.md](docs/webhooks.md#benchmark)) | 7,327/s | — | met |',
  `| ${KEEP} guests: curated | 104 ms | 3,715 ms | reported |`,
  END, '', 'after the table', '',
].join('\n')

const result = (name: string, startedAt: string, extra: Partial<ResultFile> = {}): ResultFile => ({
  name, startedAt,
  machine: { node: 'v20.20.2', cpus: 2, cpuModel: 'AMD EPYC', loadavgAtEnd: [0.7, 1, 1], commit: 'abc1234' },
  options: { only: [] },
  rows: [
    { scenario: 'ours max', load: 'closed loop, 64 conns', throughput: 5000, p50Ms: 10, p99Ms: 20, ratio: 2.5, serverCpuUsPerReq: 150 },
    { scenario: 'fastify baseline max', load: 'closed loop, 64 conns', throughput: 2000, p50Ms: 20, p99Ms: 40, ratio: null, serverCpuUsPerReq: 400 },
  ],
  targets: [{ target: '>= 4x', measured: '2.5x', met: false }, { target: 'exact', measured: 'yes', met: true }],
  ...extra,
})

t.test('the README table: newest complete result per scenario, hand rows kept, idempotent', async (t) => {
  const results = [
    result('orders', '2026-11-23T10:00:00.000Z'),
    result('orders', '2026-11-23T12:00:00.000Z', { options: { only: ['gc-on'] } }), // newer but partial: ignored
    result('orders', '2026-11-23T09:00:00.000Z'), // older: ignored
    result('webhooks', '2026-11-23T11:00:00.000Z'),
    result('guests', '2026-11-23T11:30:00.000Z'), // every guests row is pinned: no generated row
    result('soak', '2026-11-23T11:40:00.000Z'), // no README label: not added
  ]
  const once = rewriteReadme(README, results)
  t.equal(rewriteReadme(once, results), once, 'running it again changes nothing')
  t.ok(once.startsWith('# App\n\n## Benchmarks\n\nintro\n\n' + START + '\n'), 'text before the table untouched')
  t.ok(once.endsWith(`${END}\n\nafter the table\n`), 'text after the table untouched')
  const rows = once.split('\n').filter((l) => l.startsWith('| '))
  t.equal(rows[0], '| scenario | result | baseline in the same run | target |')
  t.notOk(once.includes('hand row one') || once.includes('orders @ 5,000/s'), "orders' hand rows replaced")
  const orders = rows.find((r) => r.startsWith('| orders: newest complete run, 2026-11-23 10:00 UTC (closed loop, 64 conns)'))
  t.ok(orders, 'one generated orders row from the newest complete run, at the place of the first')
  t.match(orders!, 'ours max: **5,000** req/s, p50 10 ms, p99 20 ms, 150 µs CPU')
  t.match(orders!, 'fastify baseline max: **2,000** req/s')
  t.match(orders!, 'ours max: **2.50×**')
  t.match(orders!, '1 of 2 met; **not met**: >= 4x (2.5x)')
  t.equal(rows.indexOf(orders!), 1, 'in the place of the first orders row (right under the header)')
  t.ok(once.includes('| tracking: hand row ([docs/realtime.md](docs/realtime.md)) |'), 'no result file: the row is kept')
  t.ok(once.includes(`| ${KEEP} webhooks: storm, curated |`), 'a pinned row is kept')
  t.ok(once.includes('| webhooks: newest complete run, 2026-11-23 11:00 UTC (closed loop, 64 conns) ([docs/webhooks.md](docs/webhooks.md#benchmark)) |'), "the replaced row's docs link is carried over")
  t.ok(once.includes(`| ${KEEP} guests: curated |`) && !once.includes('guests: newest'), 'all rows pinned: no generated row')
  t.notOk(once.includes('soak'), 'scenarios without a README label are not added')
  t.match(once, /_Table generated by `npm run bench:readme`.*23 Nov 2026 \(10:00–11:00 UTC\).*2 × AMD EPYC, Node v20\.20\.2.*commit abc1234\..*Kept as written: tracking \(no complete result file.*2 hand-written rows marked `bench:keep` \(webhooks, guests/)
  t.equal(rows.filter((r) => r.includes('newest complete run')).length, 2)

  const newer = [...results, result('orders', '2026-11-24T08:00:00.000Z', { machine: { commit: 'def5678' } })]
  const again = rewriteReadme(once, newer)
  t.match(again, '| orders: newest complete run, 2026-11-24 08:00 UTC', 'a newer complete run replaces the generated row')
  t.equal(again.split('\n').filter((l) => l.startsWith('| orders')).length, 1)
  t.match(again, 'commits abc1234, def5678')
  t.equal(rewriteReadme(again, newer), again)

  t.equal(rewriteReadme(README, []), rewriteReadme(rewriteReadme(README, []), []), 'no results: idempotent too')
  t.match(rewriteReadme(README, []), 'no complete result file found')
  t.throws(() => rewriteReadme('# no markers\n', results), /markers/)
})
