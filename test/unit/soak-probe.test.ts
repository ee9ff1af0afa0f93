/**
 * The soak's probe (bench/lib/soak-probe.ts, issue 21 item 6), preloaded into a plain node process
 * as the soak preloads it into the server: it appends memory and event-loop-delay lines to
 * SOAK_PROBE_FILE, and never keeps a process alive (a process with nothing to do exits).
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const PROBE = join(ROOT, 'bench/lib/soak-probe.ts')
const dir = mkdtempSync(join(tmpdir(), 'soak-probe-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const run = (script: string, env: Record<string, string>) =>
  spawnSync(process.execPath, ['--import', 'tsx', '--import', PROBE, '-e', script], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 })

t.test('writes one JSON line per period with memory and event-loop delay', async (t) => {
  const file = join(dir, 'probe.jsonl')
  // Busy for a moment, then idle until the process has seen at least three periods.
  const r = run('let n = 0; const end = Date.now() + 100; while (Date.now() < end) n++; setTimeout(() => {}, 900)', { SOAK_PROBE_FILE: file, SOAK_PROBE_MS: '200' })
  t.equal(r.status, 0, r.stderr)
  const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, number>)
  t.ok(lines.length >= 3, `${lines.length} lines`)
  for (const l of lines) {
    t.ok(l.rss! > 0 && l.heapUsed! > 0 && l.heapTotal! >= l.heapUsed!, 'memory figures')
    t.ok(Number.isFinite(l.eldP99Ms) && l.eldP99Ms! >= 0 && Number.isFinite(l.t), 'event-loop delay p99 and a time')
  }
})

t.test('does nothing without SOAK_PROBE_FILE, and never holds the process open', async (t) => {
  const r = run('', { SOAK_PROBE_FILE: '' })
  t.equal(r.status, 0, 'a process with nothing to do exits (the probe timer is unref-ed or absent)')
  const file = join(dir, 'idle.jsonl')
  const idle = run('', { SOAK_PROBE_FILE: file, SOAK_PROBE_MS: '50' })
  t.equal(idle.status, 0, 'with the probe on, too')
  t.notOk(idle.signal, 'not killed by the timeout')
})
