/**
 * Thread CPU time (src/threads/cpu-time.ts), the clock of the theme pool's budgets (docs/themes.md
 * "Budgets: the theme pool"): it advances while the thread works and stands still while it waits,
 * so a job the machine kept waiting is not failed for the wait.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { currentThreadId, threadCpuClock, threadCpuMs } from '../../src/threads/cpu-time.ts'

const linux = process.platform === 'linux'

t.test('this thread has an id and a CPU time that work advances', { skip: !linux && 'thread CPU time is read from /proc (Linux)' }, async (t) => {
  const tid = currentThreadId()
  t.ok(tid !== null && tid > 0, 'the kernel id of the thread')
  const before = threadCpuMs(tid!)!
  const end = performance.now() + 200
  while (performance.now() < end) { /* work */ }
  t.ok(threadCpuMs(tid!)! - before >= 50, 'at least a quarter of 200 ms of busy work is counted (the rest may have been taken by the machine)')
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
  const end = performance.now() + 200
  while (performance.now() < end) now()
  t.ok(now() - b >= 50, 'busy work moves it')
})
