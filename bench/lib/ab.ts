/**
 * The alternating rounds of a same-run A/B (bench/orders-ab.ts, bench/website-checkout-ab.ts): each
 * round measures every target once, in A, B, B, A, … order, so other load on the machine falls on
 * both alike; per round the rate and the server's user and system CPU per answer, then the medians.
 */
import { cpuSplit, type Server } from './proc.ts'
import type { LoadResult } from './load.ts'

export interface AbTarget { name: string; tree: string; server: Server; rows: Array<{ rate: number; user: number; sys: number }> }

const median = (xs: number[]) => { const s = [...xs].sort((x, y) => x - y); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2 }

/** `measure` runs one round's load on a target and answers how many answers counted and the load's figures. */
export async function alternate<T extends AbTarget>(targets: T[], rounds: number, unit: string, measure: (t: T) => Promise<{ ok: number; load: LoadResult }>): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    for (const t of r % 2 === 0 ? targets : [...targets].reverse()) {
      const c0 = cpuSplit(t.server.proc.pid!)
      const { ok, load } = await measure(t)
      const c1 = cpuSplit(t.server.proc.pid!)
      const row = { rate: ok / load.durationSec, user: ((c1.user - c0.user) / ok) * 1e6, sys: ((c1.sys - c0.sys) / ok) * 1e6 }
      t.rows.push(row)
      console.log(`round ${r + 1} ${t.name}: ${Math.round(row.rate)} ${unit}s/s, ${(row.user + row.sys).toFixed(0)} µs/${unit} (user ${row.user.toFixed(0)}, sys ${row.sys.toFixed(0)}), p99 ${load.p99.toFixed(1)} ms`)
    }
  }
  for (const t of targets) {
    console.log(`${t.name} ${t.tree}: median ${Math.round(median(t.rows.map((x) => x.rate)))} ${unit}s/s, ${median(t.rows.map((x) => x.user + x.sys)).toFixed(0)} µs/${unit} (user ${median(t.rows.map((x) => x.user)).toFixed(0)}, sys ${median(t.rows.map((x) => x.sys)).toFixed(0)})`)
  }
}
