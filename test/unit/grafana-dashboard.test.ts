/**
 * docs/grafana-dashboard.json (issue 20 item 3) is an importable Grafana dashboard, and every
 * metric its PromQL names exists in a live server's /metrics output, so a renamed metric cannot
 * leave a panel silently empty.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { startServer } from '../helpers/server.ts'
import { parseMetrics } from '../helpers/prometheus.ts'

interface Panel { id: number; type: string; title: string; gridPos: { x: number; y: number; w: number; h: number }; targets?: Array<{ expr: string; refId: string }> }
const dash = JSON.parse(readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8')) as {
  title: string; uid: string; schemaVersion: number; panels: Panel[]; __inputs: Array<{ name: string; type: string; pluginId: string }>
}

/** Metric names in a PromQL expression: identifiers of our families, not functions, labels or keywords. */
const namesIn = (expr: string): string[] =>
  [...expr.replace(/\{[^}]*\}/g, '').replace(/\b(by|without)\s*\([^)]*\)/g, '').matchAll(/\b((?:dispatch|nodejs|process)_[a-z0-9_]+)\b(?!\s*\()/g)].map((m) => m[1]!)

t.test('an importable dashboard', async (t) => {
  t.equal(typeof dash.schemaVersion, 'number')
  t.ok(dash.schemaVersion >= 36, 'a current schema')
  t.ok(dash.title && dash.uid)
  t.match(dash.__inputs, [{ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' }], 'asks for the Prometheus data source on import')
  const ids = dash.panels.map((p) => p.id)
  t.equal(new Set(ids).size, ids.length, 'panel ids are unique')
  for (const p of dash.panels) {
    t.ok(p.gridPos.x + p.gridPos.w <= 24, `${p.title} fits the 24-column grid`)
    if (p.type !== 'row') t.ok(p.targets && p.targets.length > 0, `${p.title} has queries`)
  }
  const titles = dash.panels.map((p) => p.title.toLowerCase()).join(' | ')
  for (const want of ['request rate', 'p50', 'p99', 'error rate', 'event-loop', 'rss', 'batch size', 'fsync', 'webhook queue', 'webhook attempts', 'sockets', 'mailbox']) {
    t.match(titles, want, `a panel for ${want}`)
  }
})

t.test('every metric the panels query exists in live /metrics output', async (t) => {
  const token = 'dashboard-test-token-0123456789'
  const s = await startServer({ METRICS_TOKEN: token })
  t.teardown(() => s.close())
  await fetch(`${s.site}/healthz`).then((r) => r.text()) // one request, so the labelled HTTP series exist
  const r = await fetch(`${s.site}/metrics`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(r.status, 200)
  const text = await r.text()
  const live = new Set(parseMetrics(text).map((x) => x.name))
  // A declared family counts even before its first sample (GC durations appear after the first GC).
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\w+)$/gm)) {
    live.add(name!)
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) live.add(name! + suffix)
  }
  const used = new Set(dash.panels.flatMap((p) => p.targets ?? []).flatMap((x) => namesIn(x.expr)))
  t.ok(used.size >= 20, `${used.size} metric names used`)
  for (const name of used) t.ok(live.has(name), `${name} is exposed`)
})
