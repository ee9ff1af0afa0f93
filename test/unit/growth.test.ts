/**
 * The soak's growth detector (bench/lib/growth.ts, issue 21 item 6): a leak is reported, a plateau
 * after a warm-up, noise, a GC sawtooth, a lone spike and a step that came back are not.
 */
import t from 'tap'
import { detectGrowth, median, quantile, slope } from '../../bench/lib/growth.ts'
import { rng } from '../../bench/lib/rng.ts'

const noisy = (n: number, f: (i: number) => number, amp: number, seed = 1): number[] => {
  const r = rng(seed)
  return Array.from({ length: n }, (_, i) => f(i) + (r() - 0.5) * 2 * amp)
}

t.test('median and slope', async (t) => {
  t.equal(median([3, 1, 2]), 2)
  t.equal(median([4, 1, 3, 2]), 2.5)
  t.ok(Number.isNaN(median([])))
  t.equal(quantile([1, 2, 3, 4, 5], 0), 1)
  t.equal(quantile([1, 2, 3, 4, 5], 0.25), 2)
  t.equal(quantile([10, 20], 0.1), 11)
  t.equal(slope([1, 3, 5, 7]), 2)
  t.equal(slope([5, 5, 5]), 0)
  t.equal(slope([1]), 0)
})

t.test('a steady leak is growing', async (t) => {
  // 100 MB rising 0.5 MB per sample over 120 samples, with ±2 MB noise.
  const v = detectGrowth(noisy(120, (i) => 100 + 0.5 * i, 2))
  t.ok(v.growing, v.reason)
  t.ok(v.slope > 0.4 && v.slope < 0.6, `slope ${v.slope}`)
  // A slow fd leak: one more descriptor every 4 samples.
  t.ok(detectGrowth(Array.from({ length: 120 }, (_, i) => 30 + Math.floor(i / 4)), { tolerance: 0, slack: 5 }).growing, 'fds leaking')
})

t.test('a warm-up ramp followed by a plateau is not growing', async (t) => {
  const v = detectGrowth(noisy(120, (i) => (i < 25 ? 60 + 2 * i : 110), 3))
  t.notOk(v.growing, v.reason)
})

t.test('without the warm-up cut, the same ramp would count', async (t) => {
  const ramp = Array.from({ length: 120 }, (_, i) => (i < 60 ? 60 + i : 120))
  t.ok(detectGrowth(ramp.slice(0, 90), { warmup: 0 }).growing, 'a ramp into the middle third is growth when nothing is ignored')
  t.notOk(detectGrowth(ramp, { warmup: 0.5 }).growing, 'and not once it is inside the warm-up')
})

t.test('noise and a GC sawtooth are not growing', async (t) => {
  t.notOk(detectGrowth(noisy(180, () => 200, 15, 7)).growing, 'flat with ±15 noise')
  const saw = Array.from({ length: 180 }, (_, i) => 80 + (i % 12) * 3) // heap fills, GC empties it
  t.notOk(detectGrowth(saw).growing, 'sawtooth')
})

t.test('a lone spike at the end or a step that came back down is not growing', async (t) => {
  const spike = Array.from({ length: 120 }, (_, i) => (i === 118 ? 500 : 100))
  t.notOk(detectGrowth(spike).growing, 'one sample at 5x')
  // Up by 40% for a while in the middle of the run, then back where it was.
  const back = Array.from({ length: 120 }, (_, i) => (i >= 65 && i < 80 ? 140 : 100))
  const v = detectGrowth(back)
  t.notOk(v.growing, v.reason)
})

t.test('memory floors: a long GC sawtooth is steady at level 0.1, a rising floor is not', async (t) => {
  // The heap climbs from 60 to 160 MB over 20 samples and drops back (a major GC), 60 samples in all:
  // the thirds catch the teeth at different heights, so their medians differ by chance.
  const saw = Array.from({ length: 60 }, (_, i) => 60 + 5 * ((i + 7) % 20))
  t.ok(detectGrowth(saw, { tolerance: 0.15, slack: 8 }).growing, 'medians are fooled by the phase of a long sawtooth')
  t.notOk(detectGrowth(saw, { tolerance: 0.15, slack: 8, level: 0.1 }).growing, 'the floors are not')
  const leak = saw.map((x, i) => x + 1.5 * i) // the floor rises 1.5 MB per sample
  const v = detectGrowth(leak, { tolerance: 0.15, slack: 8, level: 0.1 })
  t.ok(v.growing, v.reason)
  t.match(v.reason, /p10/)
})

t.test('tolerance and slack', async (t) => {
  const up8 = Array.from({ length: 90 }, (_, i) => 100 + (8 * i) / 90) // +8% over the run
  t.notOk(detectGrowth(up8, { tolerance: 0.1 }).growing, '8% rise within 10% tolerance')
  t.ok(detectGrowth(up8, { tolerance: 0.01 }).growing, 'but over 1%')
  const fds = Array.from({ length: 90 }, (_, i) => 20 + Math.floor(i / 30)) // 20 → 22
  t.notOk(detectGrowth(fds, { tolerance: 0, slack: 5 }).growing, 'two more fds is within the slack')
})

t.test('too few samples give no verdict', async (t) => {
  const v = detectGrowth([1, 2, 3, 4, 5, 6])
  t.notOk(v.growing)
  t.match(v.reason, /too few samples/)
})
