/** State that belongs to one server, such as in-memory limiters (tests run several servers in one process). */
import type { Services } from './services.ts'

/** One `make()` per server, made on first use. */
export function perServer<T>(make: () => T): (svc: Services) => T {
  const made = new WeakMap<Services, T>()
  return (svc) => {
    let x = made.get(svc)
    if (x === undefined) made.set(svc, (x = make()))
    return x
  }
}
