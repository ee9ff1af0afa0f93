/**
 * At most `max` of some asynchronous work at once, the rest waiting in arrival order. Pure (no I/O):
 * used where each job may take a lot of memory for a while, so that many arriving together run a
 * few at a time instead of all at once (the photo decoder, src/ops/menu/menu-photos.ts).
 */
export function concurrencyLimit(max: number): <T>(job: () => Promise<T>) => Promise<T> {
  let running = 0
  const waiting: Array<() => void> = []
  const next = () => {
    running--
    waiting.shift()?.()
  }
  return <T>(job: () => Promise<T>): Promise<T> => {
    const start = (): Promise<T> => {
      running++
      return job().finally(next)
    }
    if (running < max) return start()
    return new Promise<T>((resolve, reject) => { waiting.push(() => { start().then(resolve, reject) }) })
  }
}
