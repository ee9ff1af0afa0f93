/**
 * `npm run bench:readme`: regenerate README.md's bench table from the newest complete result per
 * scenario under bench/results/ (issue 19 item 5). The rules are in bench/lib/readme-table.ts.
 * `--check` exits 1 when the README is not up to date instead of writing it.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { rewriteReadme, type ResultFile } from '../bench/lib/readme-table.ts'
import { RESULTS_DIR as RESULTS } from '../bench/lib/scenario.ts'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const README = join(ROOT, 'README.md')

function readResults(): ResultFile[] {
  if (!existsSync(RESULTS)) return []
  const out: ResultFile[] = []
  for (const f of readdirSync(RESULTS).filter((f) => f.endsWith('.json')).sort()) {
    try {
      const r = JSON.parse(readFileSync(join(RESULTS, f), 'utf8')) as ResultFile
      if (typeof r.name === 'string' && typeof r.startedAt === 'string') out.push(r)
    } catch (err) {
      console.warn(`skipped ${f}: ${(err as Error).message}`)
    }
  }
  return out
}

/**
 * The commit a result measured: recorded in results written since the runner records it; for older
 * ones, the last commit before the run started, marked `~` (the working tree may have differed).
 */
function commitOf(r: ResultFile): string | null {
  if (r.machine?.commit) return r.machine.commit
  try {
    const sha = execFileSync('git', ['log', '-1', `--before=${r.startedAt}`, '--format=%h'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    return sha ? `~${sha}` : null
  } catch {
    return null
  }
}

const before = readFileSync(README, 'utf8')
const after = rewriteReadme(before, readResults(), commitOf)
if (process.argv.includes('--check')) {
  if (after !== before) {
    console.error('README.md bench table is out of date: run npm run bench:readme')
    process.exit(1)
  }
  console.log('README.md bench table is up to date')
} else if (after === before) {
  console.log('README.md bench table unchanged')
} else {
  writeFileSync(README, after)
  console.log('README.md bench table regenerated')
}
