/**
 * One chart per scenario (issue 19 item 5): throughput and p99 latency against load, ours against
 * the baseline, derived generically from a ScenarioResult's rows and rendered locally,
 * vega-lite → vega → SVG (no browser, no network; the data is inline), then SVG → PNG with resvg.
 *
 * How rows become points: a row's series is `row.series` or its name without the load suffix
 * (` max`, ` @5000/s`, ` #2`); its load is `row.load` (`closed loop, 64 conns`, `5000/s offered`);
 * it is a baseline when `row.role` says so or its name says `baseline`, `fastify` or `socket.io`.
 * When some series was measured at two loads or more, the chart is lines against load; otherwise
 * (one load point per series) it is horizontal bars, one per row.
 */
import { writeFileSync } from 'node:fs'
import type { TopLevelSpec } from 'vega-lite'
import type { BenchRow, ScenarioResult } from './scenario.ts'

export interface ChartPoint {
  /** The row's full name (bar label). */
  name: string
  series: string
  role: 'ours' | 'baseline'
  load: string
  /** The load as a number (offered rate per second, else connections), when the label has one. */
  loadValue: number | null
  loadKind: 'rate' | 'connections' | null
  throughput: number | null
  p50: number | null
  p99: number | null
}

const finite = (n: unknown): number | null => (typeof n === 'number' && Number.isFinite(n) ? n : null)

export function roleOf(row: Pick<BenchRow, 'scenario' | 'role'>): 'ours' | 'baseline' {
  if (row.role) return row.role
  return /baseline|fastify|socket\.io/i.test(row.scenario) ? 'baseline' : 'ours'
}

/** The series a row belongs to: its name without the load or repetition suffix. */
export function seriesOf(row: Pick<BenchRow, 'scenario' | 'series'>): string {
  if (row.series) return row.series
  return row.scenario.replace(/\s+(?:max|@\s*[\d,.]+\s*(?:[a-z]+\s*)?\/s|@rate|#\d+)$/i, '').trim() || row.scenario
}

/** `5000/s offered` → 5000 (rate); `closed loop, 64 conns` → 64 (connections); otherwise null. */
export function parseLoad(load: string): { value: number | null; kind: 'rate' | 'connections' | null } {
  const rate = /(\d[\d,]*(?:\.\d+)?)\s*(?:[a-z]+\s*)?\/s\b/i.exec(load)
  if (rate) return { value: Number(rate[1]!.replace(/,/g, '')), kind: 'rate' }
  const conns = /(\d[\d,]*)\s*(?:conns?|connections)\b/i.exec(load)
  if (conns) return { value: Number(conns[1]!.replace(/,/g, '')), kind: 'connections' }
  return { value: null, kind: null }
}

export function chartPoints(r: ScenarioResult): ChartPoint[] {
  return r.rows.map((row) => {
    const { value, kind } = parseLoad(row.load ?? '')
    return {
      name: row.scenario,
      series: seriesOf(row),
      role: roleOf(row),
      load: row.load ?? '',
      loadValue: value,
      loadKind: kind,
      throughput: finite(row.throughput),
      p50: finite(row.p50Ms),
      p99: finite(row.p99Ms),
    }
  })
}

/** Lines against load when some series has two load points or more; bars otherwise. */
export function chartKind(points: ChartPoint[]): 'lines' | 'bars' {
  const loads = new Map<string, Set<string>>()
  for (const p of points) {
    const set = loads.get(p.series) ?? new Set<string>()
    set.add(p.load)
    loads.set(p.series, set)
  }
  return [...loads.values()].some((s) => s.size >= 2) ? 'lines' : 'bars'
}

const ROLE_SCALE = { domain: ['ours', 'baseline'], range: ['#1f77b4', '#9a9a9a'] }

/** Log scale when latencies span more than two orders of magnitude (e.g. 1 ms probes next to 3 s reports). */
function latencyScale(points: ChartPoint[]): { type: 'log' } | { type: 'linear'; zero: true } {
  const v = points.map((p) => p.p99).filter((x): x is number => x !== null && x > 0)
  if (v.length >= 2 && Math.max(...v) / Math.min(...v) > 100) return { type: 'log' }
  return { type: 'linear', zero: true }
}

/** The vega-lite spec of a scenario's chart, or null when it has no rows to draw. */
export function chartSpec(r: ScenarioResult, subtitle?: string): TopLevelSpec | null {
  const points = chartPoints(r)
  if (points.length === 0) return null
  const thrTitle = r.labels?.throughput ?? 'req/s (2xx)'
  const values = points as unknown as Record<string, unknown>[]
  const title = { text: `${r.name}: throughput and p99 latency`, ...(subtitle ? { subtitle } : {}), anchor: 'start' as const }
  const config = {
    font: 'DejaVu Sans, Helvetica, Arial, sans-serif',
    axis: { labelLimit: 360, titleFontWeight: 'normal' as const },
    legend: { labelLimit: 360, orient: 'bottom' as const, columns: 1 },
    view: { stroke: '#ddd' },
  }
  const latScale = latencyScale(points)
  const hasP99 = points.some((p) => p.p99 !== null && p.p99 > 0)

  if (chartKind(points) === 'lines') {
    // Same kind of load on every row: a numeric axis; otherwise the load labels in row order.
    const kinds = new Set(points.map((p) => p.loadKind))
    const numeric = kinds.size === 1 && !kinds.has(null) && points.every((p) => p.loadValue !== null)
    const x = numeric
      ? { field: 'loadValue', type: 'quantitative' as const, title: points[0]!.loadKind === 'rate' ? 'offered load (/s)' : 'connections' }
      : { field: 'load', type: 'ordinal' as const, title: 'load', sort: [...new Set(points.map((p) => p.load))], axis: { labelAngle: -20 } }
    const line = (field: 'throughput' | 'p99', yTitle: string, scale: object) => ({
      width: 360,
      height: 220,
      transform: [{ filter: `isValid(datum.${field}) && datum.${field} > 0` }],
      mark: { type: 'line' as const, point: true },
      encoding: {
        x,
        y: { field, type: 'quantitative' as const, title: yTitle, scale },
        color: { field: 'series', type: 'nominal' as const, title: 'series' },
        strokeDash: { field: 'role', type: 'nominal' as const, title: 'ours / baseline', scale: { domain: ['ours', 'baseline'], range: [[1, 0], [6, 4]] } },
      },
    })
    return {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title,
      data: { values },
      hconcat: [line('throughput', thrTitle, { zero: true }), ...(hasP99 ? [line('p99', 'p99 latency (ms)', latScale)] : [])],
      resolve: { scale: { color: 'shared', strokeDash: 'shared' } },
      config,
    } as TopLevelSpec
  }

  const height = Math.max(60, 22 * points.length)
  const bar = (field: 'throughput' | 'p99', xTitle: string, scale: object, showLabels: boolean) => ({
    width: 260,
    height,
    transform: [{ filter: `isValid(datum.${field}) && datum.${field} > 0` }],
    mark: { type: 'bar' as const },
    encoding: {
      y: { field: 'name', type: 'nominal' as const, sort: points.map((p) => p.name), title: null, axis: showLabels ? {} : null },
      x: { field, type: 'quantitative' as const, title: xTitle, scale },
      color: { field: 'role', type: 'nominal' as const, title: 'ours / baseline', scale: ROLE_SCALE },
    },
  })
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    data: { values },
    hconcat: [bar('throughput', thrTitle, { zero: true }, true), ...(hasP99 ? [bar('p99', 'p99 latency (ms)', latScale, false)] : [])],
    resolve: { scale: { y: 'shared' } },
    config,
  } as TopLevelSpec
}

/** Render a vega-lite spec to SVG in-process (vega's headless renderer; no canvas, no network). */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const [vl, vega] = await Promise.all([import('vega-lite'), import('vega')])
  const compiled = vl.compile(spec).spec
  // A loader that refuses every URL: the data is inline, and a chart must never reach the network.
  const loader = vega.loader()
  loader.load = () => Promise.reject(new Error('bench charts load nothing'))
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', loader })
  try {
    return await view.toSVG()
  } finally {
    view.finalize()
  }
}

/** SVG → PNG at twice the size, with the system fonts (DejaVu on this machine). */
export async function svgToPng(svg: string): Promise<Buffer> {
  const { Resvg } = await import('@resvg/resvg-js')
  return new Resvg(svg, { fitTo: { mode: 'zoom', value: 2 }, background: 'white', font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' } }).render().asPng()
}

/**
 * Write `<stem>.svg` and `<stem>.png` for a result (stem: the JSON path without `.json`).
 * Returns the files written, or null when the scenario has no rows to chart.
 */
export async function writeChart(r: ScenarioResult, stem: string, subtitle?: string): Promise<{ svg: string; png: string } | null> {
  const spec = chartSpec(r, subtitle)
  if (!spec) return null
  const svg = await renderSvg(spec)
  const files = { svg: `${stem}.svg`, png: `${stem}.png` }
  writeFileSync(files.svg, svg)
  writeFileSync(files.png, await svgToPng(svg))
  return files
}
