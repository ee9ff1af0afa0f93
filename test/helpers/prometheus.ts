/**
 * A strict reader of the Prometheus text exposition format 0.0.4 (prometheus.io/docs/instrumenting/
 * exposition_formats): every line is blank, a comment (`# HELP`/`# TYPE`/other), or a sample
 * `name{label="value",…} value [timestamp]`. A line that is none of these throws, naming it.
 */
export interface Sample { name: string; labels: Record<string, string>; value: number }

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"/

export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = []
  text.split('\n').forEach((line, i) => {
    if (line === '' || line.startsWith('#')) return
    const bad = (why: string) => new Error(`line ${i + 1} is not a sample (${why}): ${line}`)
    const name = NAME.exec(line)?.[0]
    if (!name) throw bad('no metric name')
    let rest = line.slice(name.length)
    const labels: Record<string, string> = {}
    if (rest.startsWith('{')) {
      rest = rest.slice(1)
      while (!rest.startsWith('}')) {
        const m = LABEL.exec(rest)
        if (!m) throw bad('malformed label')
        labels[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\')
        rest = rest.slice(m[0].length)
        if (rest.startsWith(',')) rest = rest.slice(1)
        else if (!rest.startsWith('}')) throw bad('labels not separated')
      }
      rest = rest.slice(1)
    }
    // Prometheus reads values with Go's ParseFloat, which takes NaN and Inf in any case (prom-client writes `Nan`).
    const m = /^ (nan|[+-]inf|[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)(?: -?\d+)?$/i.exec(rest)
    if (!m) throw bad('no value')
    const v = m[1]!.toLowerCase()
    out.push({ name, labels, value: v === 'nan' ? NaN : v === '+inf' ? Infinity : v === '-inf' ? -Infinity : Number(m[1]) })
  })
  return out
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when none. */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value
}

/**
 * The problems `promtool check metrics` (Prometheus's promlint) reports for an exposition, plus
 * the format's own rules it enforces while parsing, for machines without promtool: every family
 * has HELP text and one TYPE; names and label names are valid snake_case without `:` (kept for
 * recording rules); counters end in `_total` and nothing else does; only histograms and summaries
 * use `_bucket`, `_count`, `_sum` and `le` / `quantile`; no type named in a name; base units, not
 * abbreviated or scaled ones; no series twice. Each problem is `name: what`.
 */
export function lintExposition(text: string): string[] {
  const problems: string[] = []
  const help = new Map<string, string>()
  const type = new Map<string, string>()
  for (const [, kind, name, rest] of text.matchAll(/^# (HELP|TYPE) (\S+) ?(.*)$/gm)) {
    const seen = kind === 'HELP' ? help : type
    if (seen.has(name!)) problems.push(`${name}: second ${kind} line`)
    seen.set(name!, rest!)
  }
  const families = new Set([...help.keys(), ...type.keys()])
  const familyOf = (sample: string): string => {
    for (const suffix of ['_bucket', '_count', '_sum']) {
      const base = sample.slice(0, -suffix.length)
      if (sample.endsWith(suffix) && ['histogram', 'summary'].includes(type.get(base) ?? '') && (suffix !== '_bucket' || type.get(base) === 'histogram')) return base
    }
    return sample
  }
  const series = new Set<string>()
  const labelsOf = new Map<string, Set<string>>()
  for (const s of parseMetrics(text)) {
    const family = familyOf(s.name)
    families.add(family)
    const key = `${s.name}{${Object.entries(s.labels).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`
    if (series.has(key)) problems.push(`${family}: series ${key} twice`)
    series.add(key)
    const names = labelsOf.get(family) ?? new Set<string>()
    for (const l of Object.keys(s.labels)) names.add(l)
    labelsOf.set(family, names)
  }
  const ABBREVIATIONS = ['s', 'ms', 'us', 'ns', 'sec', 'b', 'kb', 'mb', 'gb', 'tb', 'pb', 'm', 'h', 'd']
  for (const name of families) {
    const t = type.get(name) ?? 'untyped'
    const labels = labelsOf.get(name) ?? new Set<string>()
    const say = (what: string) => problems.push(`${name}: ${what}`)
    if (!help.get(name)) say('no help text')
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) say('not a valid metric name')
    if (name.includes(':')) say('metric names should not contain \':\'')
    if (/[A-Z]/.test(name)) say('metric names should be written in \'snake_case\' not \'camelCase\'')
    for (const l of labels) {
      if (/[A-Z]/.test(l)) say(`label names should be written in 'snake_case' not 'camelCase' (${l})`)
      if (l.startsWith('__')) say(`label names beginning with __ are reserved (${l})`)
    }
    const total = name.endsWith('_total')
    if (t === 'counter' && !total) say('counter metrics should have "_total" suffix')
    if (t !== 'counter' && t !== 'untyped' && total) say('non-counter metrics should not have "_total" suffix')
    if (t !== 'histogram' && (name.endsWith('_bucket') || labels.has('le'))) say('non-histogram metrics should not have "_bucket" suffix or "le" label')
    if (t !== 'histogram' && t !== 'summary' && /_(count|sum)$/.test(name)) say('non-histogram and non-summary metrics should not have "_count" or "_sum" suffix')
    if (t !== 'summary' && labels.has('quantile')) say('non-summary metrics should not have "quantile" label')
    for (const kind of ['counter', 'gauge', 'histogram', 'summary', 'untyped']) if (name.split('_').includes(kind)) say(`metric name should not include type '${kind}'`)
    for (const word of name.split('_')) {
      const base = baseUnitOf(word)
      if (base) say(`use base unit "${base}" instead of "${word}"`)
    }
    for (const a of ABBREVIATIONS) if (name.includes(`_${a}_`) || name.endsWith(`_${a}`)) say('metric names should not contain abbreviated units')
  }
  return problems
}

const UNITS = ['amperes', 'bytes', 'celsius', 'grams', 'joules', 'kelvin', 'meters', 'metres', 'seconds', 'volts']
const PREFIXES = ['pico', 'nano', 'micro', 'milli', 'centi', 'deci', 'deca', 'hecto', 'kilo', 'kibi', 'mega', 'mebi', 'giga', 'gibi', 'tera', 'tebi', 'peta', 'pebi']

/** The base unit a scaled unit word (`milliseconds`, `kilobytes`, `minutes`) should be, or undefined. */
function baseUnitOf(word: string): string | undefined {
  if (['minutes', 'hours', 'days', 'weeks'].includes(word)) return 'seconds'
  return UNITS.find((u) => word.endsWith(u) && PREFIXES.includes(word.slice(0, -u.length)))
}
