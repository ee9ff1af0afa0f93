/** concurrencyLimit (src/domain/concurrency.ts): at most `max` jobs at once, the rest in arrival order, failures free their place. */
import t from 'tap'
import { concurrencyLimit } from '../../src/domain/concurrency.ts'

t.test('at most two at once, in arrival order; a failure frees its place', async (t) => {
  const limit = concurrencyLimit(2)
  let running = 0
  let most = 0
  const started: number[] = []
  const gates = new Map<number, () => void>()
  const job = (n: number, fail = false) => limit(() => new Promise<number>((resolve, reject) => {
    running++
    most = Math.max(most, running)
    started.push(n)
    gates.set(n, () => { running--; if (fail) reject(new Error(`job ${n}`)); else resolve(n) })
  }))
  const all = [job(1), job(2, true), job(3), job(4)]
  await new Promise((r) => setImmediate(r))
  t.same(started, [1, 2], 'two start, two wait')
  gates.get(2)!()
  await t.rejects(all[1]!, /job 2/, 'the failure reaches its caller')
  await new Promise((r) => setImmediate(r))
  t.same(started, [1, 2, 3], 'the failed job\'s place goes to the next in line')
  gates.get(1)!()
  await new Promise((r) => setImmediate(r))
  t.same(started, [1, 2, 3, 4])
  gates.get(3)!()
  gates.get(4)!()
  t.same(await Promise.all([all[0], all[2], all[3]]), [1, 3, 4])
  t.equal(most, 2, 'never more than two')
})
