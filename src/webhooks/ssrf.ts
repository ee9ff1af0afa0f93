/**
 * Keeping webhook URLs away from internal hosts (api-v1 §6 "protected against requests to internal
 * hosts"; OWASP SSRF prevention). Only globally routable unicast addresses are allowed — an
 * allow-list, so new special ranges are refused by default. IPv4-mapped IPv6 is unwrapped first.
 * `allowLoopback` (WEBHOOK_ALLOW_LOOPBACK) admits loopback receivers, for development and tests.
 *
 * Two checks: `checkUrl` + `resolvesPublic` at registration, and `guardedLookup` at connect time
 * (the address checked is the address connected to, so DNS rebinding cannot slip through).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import ipaddr from 'ipaddr.js'
import type { AllLookup } from './dns-cache.ts'

export type Verdict = { ok: true } | { ok: false; reason: string }

const refuse = (reason: string): Verdict => ({ ok: false, reason })

/** The ipaddr.js range of an address (`unicast` for public ones), mapped IPv6 unwrapped; null if not an IP. */
export function rangeOf(ip: string): string | null {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip
  if (!ipaddr.isValid(bare)) return null
  // `process` turns ::ffff:a.b.c.d into a.b.c.d, so a mapped loopback is classified as loopback.
  const addr = ipaddr.process(bare)
  // Deprecated IPv4-compatible IPv6 (::a.b.c.d, RFC 4291 §2.5.5.1): ipaddr.js calls it unicast,
  // but a tunnel could carry it to the embedded (internal) IPv4 address.
  const range = addr.range()
  if (range === 'unicast' && addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).match(ipaddr.IPv6.parse('::'), 96)) return 'ipv4Compatible'
  return range
}

/** May a webhook request go to `ip`? */
export function checkAddress(ip: string, allowLoopback: boolean): Verdict {
  const range = rangeOf(ip)
  if (range === null) return refuse(`${ip} is not an IP address`)
  if (range === 'unicast') return { ok: true }
  if (range === 'loopback' && allowLoopback) return { ok: true }
  return refuse(`${ip} is not a public address (${range})`)
}

const isLoopbackName = (host: string): boolean => host === 'localhost' || host.endsWith('.localhost')

/**
 * The checks that need no DNS: parseable absolute URL, `https` (plain `http` only to loopback when
 * allowed), no credentials, a host; an IP-literal host must be public. The WHATWG parser has already
 * turned decimal, hex and octal IPv4 forms (`http://2130706433`) into dotted quads.
 */
export function checkUrl(raw: string, allowLoopback: boolean): Verdict & { url?: URL } {
  let url: URL
  try { url = new URL(raw) } catch { return refuse('Not a valid absolute URL.') }
  if (url.username || url.password) return refuse('The URL must not contain credentials.')
  const host = url.hostname.replace(/\.$/, '').toLowerCase()
  if (!host) return refuse('The URL has no host.')
  const literal = rangeOf(host) !== null
  const loopbackHost = isLoopbackName(host) || (literal && rangeOf(host) === 'loopback')
  if (url.protocol === 'http:') {
    if (!(allowLoopback && loopbackHost)) return refuse('Use an https URL.')
  } else if (url.protocol !== 'https:') {
    return refuse('Use an https URL.')
  }
  if (literal) {
    const v = checkAddress(host, allowLoopback)
    return v.ok ? { ok: true, url } : refuse(`The host ${v.reason}.`)
  }
  if (isLoopbackName(host) && !allowLoopback) return refuse('The host is a loopback name, not a public host.')
  return { ok: true, url }
}

export type Resolver = (host: string) => Promise<string[]>

/** Every address `host` resolves to (A and AAAA, as the OS resolver answers). */
export const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (err, addrs) => (err ? reject(err) : resolve(addrs.map((a) => a.address)))))

/** Registration check for a host name: it must resolve, and to public addresses only. */
export async function resolvesPublic(host: string, allowLoopback: boolean, resolver: Resolver = systemResolver, timeoutMs = 5000): Promise<Verdict> {
  if (rangeOf(host) !== null) return checkAddress(host, allowLoopback)
  let timer: NodeJS.Timeout | undefined
  try {
    const addrs = await Promise.race([
      resolver(host),
      new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('timeout')), timeoutMs) }),
    ])
    if (addrs.length === 0) return refuse('The host does not resolve.')
    for (const a of addrs) {
      const v = checkAddress(a, allowLoopback)
      if (!v.ok) return refuse('The host resolves to an address that is not public.')
    }
    return { ok: true }
  } catch {
    return refuse('The host does not resolve.')
  } finally {
    clearTimeout(timer)
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A `lookup` for net/tls `connect` (undici `Agent({connect: {lookup}})`): resolves, refuses the
 * connection when any address is not public, and otherwise hands back exactly what it checked.
 * Answers in both shapes Node asks for (`all: true` with autoSelectFamily, single otherwise).
 */
export function guardedLookup(allowLoopback: boolean, resolve: AllLookup = (h, o, cb) => dnsLookup(h, o, cb)) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, { ...options, all: true }, (err, addrs) => {
      if (err) return callback(err, [])
      const list = addrs
      for (const a of list) {
        const v = checkAddress(a.address, allowLoopback)
        if (!v.ok) {
          // The address stays out of the message: it would reach the owner through the attempt log.
          const e: NodeJS.ErrnoException = new Error(`webhook refused: ${hostname} does not resolve to a public address`)
          e.code = 'EWEBHOOKBLOCKED'
          return callback(e, [])
        }
      }
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' }), [])
      if (options.all) return callback(null, list)
      callback(null, list[0]!.address, list[0]!.family)
    })
  }
}
