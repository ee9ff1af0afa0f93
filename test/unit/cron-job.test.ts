/**
 * The scheduled-job shape the billing run and the retention prune share (src/maintenance/cron-job.ts):
 * runs never overlap, a failed run is logged and answers null, the catch-up run starts once after
 * start, and close cancels a catch-up not yet started and waits for the run under way.
 */
import t from 'tap'
import { Writable } from 'node:stream'
import { createLogger } from '../../src/log.ts'
import { startCronJob } from '../../src/maintenance/cron-job.ts'

/** A logger whose lines land in `lines`. */
function capture() {
  const lines: Array<{ msg: string; level: number }> = []
  const out = new Writable({ write(chunk, _enc, cb) { lines.push(JSON.parse(String(chunk)) as { msg: string; level: number }); cb() } })
  return { log: createLogger('info', out), lines }
}

/** A run that stays under way until `finish` is called. */
function gate() {
  let finish!: (n: number) => void
  const done = new Promise<number>((r) => { finish = r })
  return { done, finish }
}

t.test('a call while a run is under way answers null; the next one runs', async (t) => {
  const { log } = capture()
  const g = gate()
  let calls = 0
  const job = startCronJob({ name: 't1', what: 'test job', cron: 'off', log, run: () => { calls++; return calls === 1 ? g.done : Promise.resolve(2) } })
  const first = job.runNow()
  t.equal(await job.runNow(), null, 'overlapping call skipped')
  g.finish(1)
  t.equal(await first, 1)
  t.equal(await job.runNow(), 2, 'runs again once the first is done')
  t.equal(calls, 2)
  await job.close()
})

t.test('a failed run is logged and answers null; the job keeps running', async (t) => {
  const { log, lines } = capture()
  let fail = true
  const job = startCronJob({ name: 't2', what: 'test job', cron: 'off', log, run: () => (fail ? Promise.reject(new Error('boom')) : Promise.resolve('ok')) })
  t.equal(await job.runNow(), null)
  t.match(lines, [{ msg: 'test job failed; the next tick retries', level: 50 }])
  fail = false
  t.equal(await job.runNow(), 'ok')
  await job.close()
})

t.test('the run gets the date it is asked for', async (t) => {
  const { log } = capture()
  const at = new Date('2030-01-01T00:00:00Z')
  const job = startCronJob({ name: 't3', what: 'test job', cron: 'off', log, run: (d) => Promise.resolve(d) })
  t.equal(await job.runNow(at), at)
  t.equal(await job.runNow(), undefined, 'absent: the job uses its own clock')
  await job.close()
})

t.test('catch-up: 0 runs at once; a delay runs once later; close cancels one not yet started', async (t) => {
  const { log } = capture()
  let n = 0
  const now = startCronJob({ name: 't4', what: 'test job', cron: 'off', catchUpMs: 0, log, run: () => Promise.resolve(++n) })
  t.equal(n, 1, 'started synchronously')
  t.equal(await now.started, 1)
  await now.close()

  let later = 0
  const delayed = startCronJob({ name: 't5', what: 'test job', cron: 'off', catchUpMs: 20, log, run: () => Promise.resolve(++later) })
  t.equal(later, 0, 'not yet')
  // The catch-up timer is unref'd (it keeps no process alive): hold the test's process open meanwhile.
  const keepAlive = setTimeout(() => {}, 5_000)
  t.equal(await delayed.started, 1, 'ran after the delay')
  clearTimeout(keepAlive)
  await delayed.close()

  let never = 0
  const cancelled = startCronJob({ name: 't6', what: 'test job', cron: 'off', catchUpMs: 60_000, log, run: () => Promise.resolve(++never) })
  await cancelled.close()
  t.equal(await cancelled.started, null, 'close cancels the pending catch-up')
  t.equal(never, 0)

  const none = startCronJob({ name: 't7', what: 'test job', cron: 'off', log, run: () => Promise.resolve(1) })
  t.equal(await none.started, null, 'no catch-up without catchUpMs')
  await none.close()
})

t.test('close waits for the run under way; later calls answer null', async (t) => {
  const { log } = capture()
  const g = gate()
  let calls = 0
  const job = startCronJob({ name: 't8', what: 'test job', cron: '0 0 1 1 *', log, run: () => { calls++; return g.done } })
  const run = job.runNow()
  let closed = false
  const closing = job.close().then(() => { closed = true })
  await new Promise((r) => setImmediate(r))
  t.equal(closed, false, 'still waiting for the run')
  g.finish(7)
  await closing
  t.equal(await run, 7)
  t.equal(await job.runNow(), null, 'nothing runs after close')
  t.equal(calls, 1)
})
