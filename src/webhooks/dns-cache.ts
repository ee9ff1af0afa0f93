/**
 * Name resolution for webhook connects, cached and bounded (docs/webhooks.md "Fairness").
 *
 * `dns.lookup` is getaddrinfo on libuv's thread pool (4 threads by default) — the same pool that
 * makes group commits durable (storage/wal-sync.ts fdatasyncs the WAL there). Without a cache every
 * new connection of every endpoint resolves again, and a failing endpoint opens a new connection
 * per attempt; a storm of them, or a name server that is slow to answer, would queue every tenant's
 * commits behind webhook lookups. So: answers are kept for `ttlMs` (failures for `negativeTtlMs`),
 * concurrent lookups of one name share one call, and at most `maxInFlight` run at once, leaving
 * the rest of the pool to the database. Whatever comes from here is still checked by
 * `guardedLookup` on every connect (ssrf.ts), so a cached answer cannot skip the SSRF check.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns'

type AllCallback = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void
/** The `lookup(hostname, {all: true}, cb)` shape `guardedLookup` calls. */
export type AllLookup = (hostname: string, options: LookupAllOptions, callback: AllCallback) => void

export interface DnsCacheOptions {
  ttlMs?: number
  negativeTtlMs?: number
  maxInFlight?: number
  /** Entries kept at most (oldest dropped first). */
  maxEntries?: number
  resolve?: AllLookup
  now?: () => number
}

interface Entry { at: number; err: NodeJS.ErrnoException | null; addresses: LookupAddress[] }

export function cachedLookup(opts: DnsCacheOptions = {}): AllLookup {
  const ttl = opts.ttlMs ?? 30_000
  const negativeTtl = opts.negativeTtlMs ?? 5_000
  const maxInFlight = opts.maxInFlight ?? 2
  const maxEntries = opts.maxEntries ?? 10_000
  const resolve: AllLookup = opts.resolve ?? ((h, o, cb) => dnsLookup(h, o, cb))
  const now = opts.now ?? Date.now
  const cache = new Map<string, Entry>()
  const waiting = new Map<string, AllCallback[]>()
  const queue: Array<() => void> = []
  let running = 0

  const next = (): void => {
    while (running < maxInFlight && queue.length > 0) {
      running++
      queue.shift()!()
    }
  }

  return (hostname, options, callback) => {
    const key = `${hostname}\u0000${options.family ?? 0}`
    const hit = cache.get(key)
    if (hit && now() - hit.at < (hit.err ? negativeTtl : ttl)) {
      // Asynchronous like a real lookup: callers may rely on it not answering inside the call.
      return void process.nextTick(callback, hit.err, hit.addresses)
    }
    const pending = waiting.get(key)
    if (pending) return void pending.push(callback)
    waiting.set(key, [callback])
    queue.push(() => resolve(hostname, { ...options, all: true }, (err, addresses) => {
      running--
      const entry: Entry = { at: now(), err, addresses: err ? [] : addresses }
      cache.delete(key)
      cache.set(key, entry)
      if (cache.size > maxEntries) cache.delete(cache.keys().next().value as string)
      const cbs = waiting.get(key) ?? []
      waiting.delete(key)
      for (const cb of cbs) cb(entry.err, entry.addresses)
      next()
    }))
    next()
  }
}
