/**
 * The client's address behind reverse proxies (README "Configuration" `TRUST_PROXY`,
 * docs/deployment.md "Client addresses"). Rate limits, request logs, sessions and WebSocket
 * upgrades all key on the address this returns, so it must not be something a client can choose.
 *
 * The chain of addresses is the TCP peer, then the `X-Forwarded-For` entries (or the `for=` of
 * RFC 7239 `Forwarded`) from the right, the order in which proxies appended them. Walking from the
 * peer, an address is skipped while it is a trusted proxy; the first one that is not is the client.
 * Entries left of it were written by the client itself and are never read. With TRUST_PROXY unset
 * (the default) the chain is the peer alone: the headers are ignored.
 */
import { timingSafeEqual } from 'node:crypto'
import ipaddr from 'ipaddr.js'

type Addr = ipaddr.IPv4 | ipaddr.IPv6

const DOTTED_QUAD = /^(?:0|[1-9]\d{0,2})(?:\.(?:0|[1-9]\d{0,2})){3}$/

/**
 * Dotted quads (no leading zeros, each part ≤ 255) or IPv6, IPv4-mapped IPv6 as its IPv4; null for
 * anything else. ipaddr.js would also read `1.2.3` and `0x7f.1` as IPv4, which no proxy writes.
 * Parsed once: this runs for the peer and each forwarded hop of every request (ipaddr.js's
 * validators parse too, and `isValidFourPartDecimal` + `process` cost ~2 µs per address).
 */
function toAddr(s: string): Addr | null {
  if (DOTTED_QUAD.test(s)) {
    const parts = s.split('.').map(Number)
    return parts.every((n) => n <= 255) ? new ipaddr.IPv4(parts) : null
  }
  if (!s.includes(':')) return null
  try {
    const a = ipaddr.IPv6.parse(s)
    return a.isIPv4MappedAddress() ? a.toIPv4Address() : a
  } catch { return null }
}

/**
 * Whom the server believes: nobody (default), the nearest `hops` addresses, or addresses in ranges;
 * and, in cluster mode, another node of the cluster that forwarded the request (`clusterSecret`).
 */
export type TrustProxy = (
  | { readonly kind: 'off' }
  | { readonly kind: 'hops'; readonly hops: number }
  | { readonly kind: 'list'; readonly ranges: ReadonlyArray<readonly [Addr, number]> }
) & { readonly clusterSecret?: Buffer }

/**
 * A replica forwarding a request to the primary (src/http/forward.ts) names the client it served in
 * FORWARDED_CLIENT and proves it is a node of the cluster with FORWARDED_BY (the cluster's secret,
 * src/cluster/nats.ts): the primary then keys rate limits, logs and sessions on that client.
 */
export const FORWARDED_BY = 'x-dispatch-forwarded-by'
export const FORWARDED_CLIENT = 'x-dispatch-client'

/** `trust`, also believing requests another node of the cluster forwarded (proved by `secret`). */
export const withClusterSecret = (trust: TrustProxy, secret: string): TrustProxy =>
  Object.freeze({ ...trust, clusterSecret: Buffer.from(secret) })

/** Whether these headers were written by a node of the cluster (its secret, compared in constant time). */
export function forwardedByNode(headers: Readonly<Record<string, string | undefined>>, trust: TrustProxy): boolean {
  const shown = headers[FORWARDED_BY]
  if (!trust.clusterSecret || shown === undefined) return false
  const b = Buffer.from(shown)
  return b.length === trust.clusterSecret.length && timingSafeEqual(b, trust.clusterSecret)
}

export const NO_TRUST: TrustProxy = Object.freeze({ kind: 'off' })

/** Names an operator may use in the list, as in Express's `trust proxy`. */
const NAMED: Record<string, readonly string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
}

/**
 * Parse TRUST_PROXY: unset, empty, `0`, `false` or `off` → off; a whole number 1..32 → that many
 * proxies in front (the peer is the first); otherwise a comma-separated list of addresses, CIDR
 * ranges and the names `loopback`, `private`, `linklocal`. Throws a one-line message on anything else.
 */
export function parseTrustProxy(raw: string | undefined): TrustProxy {
  const text = (raw ?? '').trim()
  if (text === '' || ['0', 'false', 'off', 'no'].includes(text.toLowerCase())) return NO_TRUST
  if (/^\d+$/.test(text)) {
    const hops = Number(text)
    if (hops > 32) throw new Error(`invalid configuration: TRUST_PROXY hop count must be 1..32, got "${text}"`)
    return Object.freeze({ kind: 'hops', hops })
  }
  const ranges: Array<readonly [Addr, number]> = []
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    for (const item of NAMED[part.toLowerCase()] ?? [part]) {
      try {
        const a = toAddr(item.split('/')[0]!)
        if (!a) throw new Error(part)
        if (item.includes('/')) ranges.push(normalizeRange(ipaddr.parseCIDR(item)))
        else ranges.push([a, a.kind() === 'ipv4' ? 32 : 128])
      } catch {
        throw new Error(`invalid configuration: TRUST_PROXY: "${part}" is not an address, a CIDR range, loopback, private, linklocal or a hop count`)
      }
    }
  }
  return Object.freeze({ kind: 'list', ranges: Object.freeze(ranges) })
}

/** `::ffff:10.0.0.0/104` is the IPv4 range `10.0.0.0/8`: peers are compared in their IPv4 form. */
function normalizeRange([a, bits]: [Addr, number]): readonly [Addr, number] {
  if (a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) return [(a as ipaddr.IPv6).toIPv4Address(), bits - 96]
  return [a, bits]
}

/** An address from a header or the socket, or null when it is none (`unknown`, `_hidden`, garbage). */
function parseAddr(text: string): Addr | null {
  let s = text.trim()
  if (s.startsWith('"') && s.endsWith('"') && s.length >= 2) s = s.slice(1, -1)
  // `[v6]:port` and `[v6]` (RFC 7239 §6), `v4:port` (Forwarded, and some X-Forwarded-For writers).
  const bracket = /^\[([^\]]+)\](?::\d+)?$/.exec(s)
  if (bracket) s = bracket[1]!
  else if (/^[\d.]+:\d+$/.test(s)) s = s.slice(0, s.indexOf(':'))
  return toAddr(s)
}

/** The `for=` values of RFC 7239 `Forwarded`, in header order (one per proxy hop). */
export function forwardedFor(header: string): string[] {
  const out: string[] = []
  for (const element of header.split(',')) {
    // An element without `for=` still counts as a hop whose client is unknown.
    const pair = element.split(';').map((p) => p.trim()).find((p) => /^for=/i.test(p))
    out.push(pair ? pair.slice(4) : 'unknown')
  }
  return out
}

function trusted(a: Addr, index: number, trust: TrustProxy): boolean {
  if (trust.kind === 'hops') return index < trust.hops
  if (trust.kind === 'list') return trust.ranges.some(([r, bits]) => r.kind() === a.kind() && a.match(r, bits))
  return false
}

/** Walk `hops` (nearest first) from the peer; the first untrusted address is the client. */
function walk(peer: Addr, hops: string[], trust: TrustProxy): Addr {
  let current = peer
  for (let i = 0; i < hops.length; i++) {
    if (!trusted(current, i, trust)) return current
    const next = parseAddr(hops[i]!)
    // A trusted proxy handed us something that is not an address: stop at that proxy.
    if (!next) return current
    current = next
  }
  return current
}

const listOf = (header: string): string[] => header.split(',').map((s) => s.trim()).filter(Boolean)

/**
 * The client address of one request. `peer` is the socket's address as uWS gives it; `headers`
 * the request headers with lower-case names. Without trust the peer is returned untouched.
 *
 * Both `Forwarded` and `X-Forwarded-For` present and naming different clients: the proxy wrote one
 * and passed the other through from the client, and which one is unknowable here, so neither is
 * believed and the nearest trusted proxy's address is used (docs/deployment.md "Client addresses").
 */
export function clientAddress(peer: string, headers: Readonly<Record<string, string | undefined>>, trust: TrustProxy): string {
  if (trust.clusterSecret && headers[FORWARDED_BY] !== undefined && forwardedByNode(headers, trust)) {
    const client = parseAddr(headers[FORWARDED_CLIENT] ?? '')
    if (client) return client.toString()
  }
  if (trust.kind === 'off') return peer
  const p = parseAddr(peer)
  if (!p) return peer
  const xff = headers['x-forwarded-for']
  const fwd = headers['forwarded']
  if (!xff && !fwd) return p.toString()
  const viaXff = xff ? walk(p, listOf(xff).reverse(), trust) : null
  const viaFwd = fwd ? walk(p, forwardedFor(fwd).reverse(), trust) : null
  if (viaXff && viaFwd && viaXff.toString() !== viaFwd.toString()) return p.toString()
  return (viaXff ?? viaFwd)!.toString()
}

/**
 * Record one request header line under its lower-case name. Repeated forwarding lines are one list
 * (RFC 9110 §5.3), the last proxy's line the rightmost, as `clientAddress` reads them; any other
 * repeated header keeps its last line.
 */
export function addHeaderLine(headers: Record<string, string>, name: string, value: string): void {
  headers[name] = (name === 'x-forwarded-for' || name === 'forwarded') && headers[name] !== undefined ? `${headers[name]}, ${value}` : value
}

/** The peer address uWS reports, as text (`getRemoteAddressAsText` returns bytes). */
export function peerAddress(res: { getRemoteAddressAsText(): ArrayBuffer }): string {
  return Buffer.from(res.getRemoteAddressAsText()).toString()
}
