/**
 * Start a worker thread from a module beside its caller, from the TypeScript sources (tests, tools)
 * or from the `dist/` build alike. Shared by the guest reader (src/storage/guests-reader.ts) and the
 * theme pool (src/themes/pool.ts).
 */
import { setPriority } from 'node:os'
import { Worker, type WorkerOptions } from 'node:worker_threads'
import { currentThreadId } from './cpu-time.ts'

/**
 * `entry` is the worker's module as a `.ts` URL relative to the caller (`new URL('./x-worker.ts',
 * import.meta.url)`); from the build its `.js` twin is started instead. Explicit `execArgv: []`: the
 * server's own flags (--cpu-prof, a test runner's hooks) are not the worker's business. Node 20 does
 * not run `--import` in workers, so a TypeScript entry registers tsx's hooks itself first.
 */
export function spawnWorker(entry: URL, opts: Omit<WorkerOptions, 'eval' | 'execArgv'> = {}): Worker {
  const fromSources = import.meta.url.endsWith('.ts')
  if (!fromSources) return new Worker(new URL(entry.href.replace(/\.ts$/, '.js')), { ...opts, execArgv: [] })
  const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}) })`
  return new Worker(boot, { ...opts, eval: true, execArgv: [] })
}

/**
 * Called inside a worker: lower this thread's CPU priority (Linux nice applies per thread), so on a
 * busy machine the kernel serves the event loop first and the worker's background work after it.
 * Elsewhere, or when /proc is not there, nothing changes.
 */
export function lowerThreadPriority(nice = 10): void {
  const tid = currentThreadId()
  try {
    if (tid !== null) setPriority(tid, nice)
  } catch { /* not allowed: the thread keeps the process's priority */ }
}
