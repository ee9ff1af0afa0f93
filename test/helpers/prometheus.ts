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
