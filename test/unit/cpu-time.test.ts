/**
 * Thread CPU time (src/threads/cpu-time.ts), the clock of the theme pool's budgets (docs/themes.md
 * "Budgets: the theme pool"): it advances while the thread works and stands still while it waits,
 * so a job the machine kept waiting is not failed for the wait.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { currentThreadId, threadCpuClock, threadCpuMs } from '../../src/threads/cpu-time.ts'

const linux = process.platform === 'linux'

/**
 * Work on this thread until the process has spent `ms` of CPU time (getrusage, the kernel's count),
 * calling `step` meanwhile. Bounded by CPU spent, not by the wall clock: on a busy machine 200 ms
 * of wall time may hold only a few ms of this thread's CPU (this test failed that way under a load
 * of 10 on two cores). The test's other threads are idle, so nearly all of it is this thread's.
 */
function busy(ms: number, step: () => unknown): void {
  const start = process.cpuUsage()
  const spent = () => { const d = process.cpuUsage(start); return (d.user + d.system) / 1000 }
  while (spent() < ms) step()
}

t.test('this thread has an id and a CPU time that work advances', { skip: !linux && 'thread CPU time is read from /proc (Linux)' }, async (t) => {
  const tid = currentThreadId()
  t.ok(tid !== null && tid > 0, 'the kernel id of the thread')
  const before = threadCpuMs(tid!)!
  busy(200, () => undefined)
  t.ok(threadCpuMs(tid!)! - before >= 50, 'at least a quarter of 200 ms of busy work is counted')
  t.equal(threadCpuMs(999_999_999), null, 'another process\'s or no thread: null')
})

t.test('the CPU clock stands still while the thread waits, and moves while it works', { skip: !linux && 'thread CPU time is read from /proc (Linux)' }, async (t) => {
  const now = threadCpuClock(() => performance.now(), 20)!
  t.ok(now, 'a clock on Linux')
  const a = now()
  await sleep(300)
  const waited = now() - a
  t.ok(waited < 150, `300 ms of waiting is not 300 ms of CPU (${waited.toFixed(0)} ms counted)`)
  const b = now()
  busy(200, now)
  t.ok(now() - b >= 50, 'busy work moves it')
})
