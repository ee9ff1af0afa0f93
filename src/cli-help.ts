/**
 * What the CLI says before it touches a database (README "Operator CLI"): `--help` for everything or
 * one command, `--version`, a command group typed alone (`dispatch token`), and the closest command
 * when a word is mistyped. The command table is read from the usage text itself, so a command is
 * known here exactly when it is documented.
 */
import { readFileSync } from 'node:fs'
import { ROOT_URL } from './root.ts'

export interface Entry { cmd: string; sub: string | null; text: string }

/** Usage entries (`  dispatch cmd sub …` plus its indented continuation lines) and the notes after them. */
export function parseUsage(usage: string): { entries: Entry[]; notes: string } {
  const lines = usage.split('\n')
  const entries: Entry[] = []
  let i = lines[0]?.startsWith('usage') ? 1 : 0
  for (; i < lines.length && lines[i]!.trim() !== ''; i++) {
    const line = lines[i]!
    const m = /^ {2}dispatch ([a-z][\w-]*)(?: ([a-z][\w|-]*))?/.exec(line)
    if (!m) { if (entries.length) entries[entries.length - 1]!.text += `\n${line}`; continue }
    // `grant|revoke` documents two subcommands with one line.
    for (const sub of m[2] ? m[2].split('|') : [null]) entries.push({ cmd: m[1]!, sub, text: line })
  }
  return { entries, notes: lines.slice(i).join('\n').trim() }
}

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = cur
    }
  }
  return row[b.length]!
}

/** The candidate closest to `word` (a prefix counts as close), or null when none is plausibly meant. */
export function closest(word: string, candidates: readonly string[]): string | null {
  let best: string | null = null
  let bestD = Infinity
  for (const c of new Set(candidates)) {
    const d = c.startsWith(word) || word.startsWith(c) ? 0.5 : distance(word.toLowerCase(), c)
    if (d < bestD) { best = c; bestD = d }
  }
  return best !== null && bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : null
}

export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT_URL), 'utf8')) as { version: string }
  return pkg.version
}

export type Reply = { code: number; out: string }
export type Emit = (obj: Record<string, unknown>, text: string) => string

/**
 * Answer what needs no database: help, version, a group alone, an unknown word (thrown through
 * `fail`, exit 2). Null when the command should run.
 */
export function preflight(usage: string, positionals: readonly string[], flags: { help?: boolean; version?: boolean }, emit: Emit, fail: (m: string) => Error): Reply | null {
  const { entries, notes } = parseUsage(usage)
  const [cmd, sub] = positionals
  if (flags.version) {
    const version = packageVersion()
    return { code: 0, out: emit({ version }, `dispatch ${version}`) }
  }
  const full = `${usage}\n\nRun "dispatch COMMAND --help" for one command, "dispatch --version" for the version.`
  if (!cmd) return { code: flags.help ? 0 : 2, out: emit({ usage: entries.map((e) => e.text.trim()), notes }, full) }
  const mine = entries.filter((e) => e.cmd === cmd)
  if (mine.length === 0) {
    const guess = closest(cmd, entries.map((e) => e.cmd))
    throw fail(`unknown command "${cmd}"${guess ? `; did you mean "dispatch ${guess}"?` : '.'} Run "dispatch --help" to see every command.`)
  }
  // `dispatch token create --help`: that one; `dispatch token --help`: the group.
  const one = mine.filter((e) => sub !== undefined && e.sub === sub)
  const texts = [...new Set((one.length ? one : mine).map((e) => e.text))]
  const help = (title: string) => ({ code: 0, out: emit({ command: cmd, usage: texts.map((t) => t.trim()) }, `${title}\n${texts.join('\n')}${notesFor(texts, notes)}`) })
  if (flags.help) return help('usage:')
  const subs = mine.map((e) => e.sub).filter((s): s is string => s !== null)
  // A group typed alone lists its subcommands; commands without subcommands (seed, migrate) run.
  if (subs.length > 0 && !mine.some((e) => e.sub === null) && !sub) return help(`"dispatch ${cmd}" needs a subcommand:`)
  if (subs.length > 0 && sub !== undefined && !subs.includes(sub) && !mine.some((e) => e.sub === null)) {
    const guess = closest(sub, subs)
    throw fail(`unknown command "${cmd} ${sub}"${guess ? `; did you mean "dispatch ${cmd} ${guess}"?` : '.'} Run "dispatch ${cmd} --help" to see its subcommands.`)
  }
  return null
}

/** The notes (what LIST and DURATION mean) only when the shown lines use those words. */
function notesFor(texts: readonly string[], notes: string): string {
  const words = notes.match(/^[A-Z]+(?= is )/gm) ?? []
  return words.some((w) => texts.some((t) => new RegExp(`\\b${w}\\b`).test(t))) ? `\n\n${notes}` : ''
}
