/**
 * The markdown summary of one `npm run bench` (issue 19 item 5):
 * bench/results/<timestamp>-summary.md with the date, the machine, Node, the git commit, and per
 * scenario a table, its targets and notes, and links to its chart and JSON (same folder).
 */
import { basename } from 'node:path'
import type { MachineInfo } from './machine.ts'
import type { ScenarioOptions, ScenarioResult } from './scenario.ts'

export interface SummaryEntry {
  name: string
  result?: ScenarioResult
  /** Files written for it (absolute or relative; linked by base name, the summary sits next to them). */
  json?: string
  svg?: string | null
  png?: string | null
  /** Why it failed, when it did. */
  error?: string
}

export interface SummaryInput {
  startedAt: Date
  finishedAt?: Date
  machine: MachineInfo
  options: Omit<ScenarioOptions, 'log'> | Record<string, unknown>
  entries: SummaryEntry[]
}

/** A table cell: no pipes or newlines (they would break the row). */
export const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ')

const num = (n: number | null | undefined, digits = 0): string =>
  n === null || n === undefined || !Number.isFinite(n) ? '-' : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** The result's rows as a markdown table (the same columns as the console table). */
export function markdownTable(r: ScenarioResult): string {
  const head = ['scenario', 'load', r.labels?.throughput ?? 'req/s (2xx)', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', r.labels?.non2xx ?? 'non-2xx', 'errors', 'vs baseline', 'srv CPU %', r.labels?.perReq ?? 'srv µs/req']
  const rows = r.rows.map((x) => [
    x.scenario, x.load, num(x.throughput), num(x.p50Ms, 2), num(x.p90Ms, 2), num(x.p99Ms, 2), num(x.maxMs, 1), String(x.non2xx), String(x.errors),
    x.ratio === null || x.ratio === undefined ? '-' : `${x.ratio.toFixed(2)}×`, num(x.serverCpuPct), num(x.serverCpuUsPerReq),
  ])
  const line = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`
  return [line(head), `|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`, ...rows.map(line)].join('\n')
}

export function summaryMarkdown(s: SummaryInput): string {
  const { log: _log, ...options } = s.options as Record<string, unknown>
  const out: string[] = [
    `# Bench run ${s.startedAt.toISOString()}`,
    '',
    `- date: ${s.startedAt.toISOString()}${s.finishedAt ? ` → ${s.finishedAt.toISOString()}` : ''}`,
    `- machine: ${s.machine.cpus} × ${s.machine.cpuModel} (${s.machine.cpus} cores), load average at the end ${s.machine.loadavg.map((x) => x.toFixed(2)).join(' / ')}`,
    `- node: ${s.machine.node}`,
    `- commit: ${s.machine.commit ?? 'unknown (not a git checkout)'}`,
    `- options: \`${JSON.stringify(options)}\``,
    '- the load generators run on this same machine and share its cores with the server under test',
    '',
    `Scenarios: ${s.entries.map((e) => (e.error ? `${e.name} (failed)` : e.name)).join(', ') || 'none'}.`,
  ]
  for (const e of s.entries) {
    out.push('', `## ${e.name}`, '')
    if (e.error) {
      out.push(`**Failed:** ${e.error.split('\n')[0]}`)
      continue
    }
    const r = e.result
    if (!r) continue
    if (e.svg) out.push(`![${r.name}: throughput and p99 latency](${basename(e.svg)})`, '')
    const links = [e.svg && `[chart (SVG)](${basename(e.svg)})`, e.png && `[PNG](${basename(e.png)})`, e.json && `[JSON](${basename(e.json)})`].filter(Boolean)
    if (links.length) out.push(links.join(' · '), '')
    if (r.rows.length) out.push(markdownTable(r))
    else out.push('_No table rows (see the JSON)._')
    if (r.targets?.length) {
      out.push('', '**Targets**', '')
      for (const t of r.targets) out.push(`- ${t.met ? '✅ met' : '❌ **missed**'}: ${t.target} — ${t.measured}`)
    }
    if (r.notes.length) {
      out.push('', '**Notes**', '')
      for (const n of r.notes) out.push(`- ${n}`)
    }
  }
  return out.join('\n') + '\n'
}
