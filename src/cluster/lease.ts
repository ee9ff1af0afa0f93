/**
 * The primary's lease (docs/cluster.md "Lease and fencing"): one key in a JetStream KV bucket whose
 * entries expire LEASE_MS after their last write. Creating the key succeeds for one node only;
 * the holder renews it every third of the lease with the revision it last wrote, so a renewal
 * after someone else took the key is refused. The holder counts its lease from the moment it *sent*
 * the renewal, never from the answer: it stops trusting the lease before the bucket expires it.
 */
import { randomBytes } from 'node:crypto'
import type { KV } from '@nats-io/kv'
import type { Logger } from '../log.ts'

const KEY = 'primary'
const enc = new TextEncoder()

/** Who holds the lease, and where the other nodes reach it (NODE_URL). */
/**
 * Who holds the lease. `term` names the holder's process (random at its start): a primary that
 * restarted and took the lease again is the same node in another term, whose live frames start over.
 */
export interface Holder { node: string; url: string | null; term: string | null }

/** The key's value: `{"node", "url", "term"}` (a bare node id from a build before forwarding is read too). */
function readHolder(text: string): Holder {
  try {
    const v = JSON.parse(text) as Partial<Holder>
    if (typeof v.node === 'string') return { node: v.node, url: typeof v.url === 'string' ? v.url : null, term: typeof v.term === 'string' ? v.term : null }
  } catch { /* a bare id */ }
  return { node: text, url: null, term: null }
}

export class Lease {
  private revision = 0
  private renewedAt = 0
  private timer: NodeJS.Timeout | null = null
  private renewing: Promise<boolean> | null = null
  /** The proof under way (`renewal`), shared by its callers. */
  private proving: Promise<boolean> | null = null
  /** When the renewal on its way (or the last one) was sent (performance.now()). */
  private sentAt = 0

  private readonly value: Uint8Array
  /** This process's term, written with the lease (see Holder). */
  readonly term = randomBytes(8).toString('hex')

  constructor(private readonly kv: KV, private readonly nodeId: string, nodeUrl: string, readonly ttlMs: number, private readonly log: Logger) {
    this.value = enc.encode(JSON.stringify({ node: nodeId, url: nodeUrl, term: this.term } satisfies Holder))
  }

  /** Held, and renewed less than a lease ago (with a margin for the clock of the bucket). */
  valid(): boolean {
    return this.revision > 0 && performance.now() - this.renewedAt < this.ttlMs * 0.9
  }

  /**
   * A renewal that may yet prove the lease after it ran out, or null when none can (the lease was
   * lost). It is the renewal on its way, else one sent now: the lease can run out while the event loop
   * was held and the renewal timer has not fired yet, and a renewal is refused unless the key is still
   * this node's at its revision, so nobody else can have taken it meanwhile. A renewal counts from
   * when it was sent; the answer settles false once it could no longer count (0.9 of a lease after
   * sending), so nothing waits on a request that can only come too late; one that came too late is
   * followed by one more (`prove`).
   */
  renewal(): Promise<boolean> | null {
    if (this.revision === 0) return null
    // One proof at a time: every write refused while the lease is proven, and keep(), share it
    // (no timers and promise chains per write on the capture path).
    return (this.proving ??= this.prove().finally(() => { this.proving = null }))
  }

  /**
   * Renew in time to count: the renewal on its way, or one sent now. One that was on its way while
   * the process was held (sent before a pause or a blocked event loop) cannot count however it ends,
   * since a renewal counts from its sending: once it has settled (its answer is usually already
   * waiting), one more is sent in its place. That second chance, the wait and the renewal together,
   * gets a third of a lease: a node cut off from NATS is still fenced soon after its lease ran out.
   */
  private async prove(): Promise<boolean> {
    if (await this.inTime(this.renewNow())) return this.valid()
    if (this.revision === 0 || this.valid()) return this.valid()
    const deadline = performance.now() + this.ttlMs / 3
    const late = this.renewing
    if (late && !await this.within(late.then(() => true, () => true), deadline - performance.now())) return false
    if (this.revision === 0 || this.valid()) return this.valid()
    return (await this.within(this.renewNow(), deadline - performance.now())) && this.valid()
  }

  /** Who holds the lease now, as the bucket says (null: nobody; the next to create it is primary). */
  async holder(): Promise<Holder | null> {
    const e = await this.kv.get(KEY)
    return e && e.operation === 'PUT' ? readHolder(e.string()) : null
  }

  /** Take the lease if nobody holds it; false when somebody does. */
  async acquire(): Promise<boolean> {
    const sent = performance.now()
    try {
      this.revision = await this.kv.create(KEY, this.value)
      this.renewedAt = sent
      return true
    } catch (err) {
      if (/wrong last sequence|key exists/i.test((err as Error).message)) return false
      throw err
    }
  }

  /** Renew every third of the lease; `lost` once a renewal is refused or the lease ran out unrenewed. */
  keep(lost: (why: string) => void): void {
    const tick = async () => {
      const ok = this.revision > 0 && await this.renewal()
      if (!ok && this.revision === 0) { this.stop(); return lost('another node holds the lease') }
      if (!this.valid()) { this.stop(); return lost('the lease ran out before it could be renewed') }
      if (this.timer) this.timer = setTimeout(() => void tick(), this.ttlMs / 3)
    }
    this.timer = setTimeout(() => void tick(), this.ttlMs / 3)
  }

  /**
   * Renew now — on schedule, or after work that held the event loop (building the server, seeding),
   * so the lease counts from now. One renewal at a time: a second call joins the one in flight.
   * False when it did not renew; `revision` becomes 0 when another node holds the lease.
   */
  renewNow(): Promise<boolean> {
    return (this.renewing ??= this.renewOnce().finally(() => { this.renewing = null }))
  }

  /** `renewal`'s answer, or false once it could no longer prove the lease (see `renewal`). */
  private inTime(renewal: Promise<boolean>): Promise<boolean> {
    return this.within(renewal, this.sentAt + this.ttlMs * 0.9 - performance.now())
  }

  /** `answer`, or false when it has not come within `ms`. */
  private within(answer: Promise<boolean>, ms: number): Promise<boolean> {
    if (ms <= 0) return Promise.resolve(false)
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), ms); timer.unref() })
    return Promise.race([answer, late]).finally(() => clearTimeout(timer))
  }

  private async renewOnce(): Promise<boolean> {
    if (this.revision === 0) return false
    const sent = performance.now()
    this.sentAt = sent
    try {
      this.revision = await this.kv.update(KEY, this.value, this.revision)
      this.renewedAt = sent
      return true
    } catch (err) {
      if (!/wrong last sequence/i.test((err as Error).message)) {
        this.log.warn({ err }, 'lease renewal failed; retrying')
        return false
      }
      // Our previous update may have landed with its answer lost: the key still ours at a newer revision.
      const e = await this.kv.get(KEY).catch(() => null)
      // This process's own write (its term), not another process started under the same NODE_ID.
      const holder = e && e.operation === 'PUT' ? readHolder(e.string()) : null
      if (e && holder?.node === this.nodeId && holder.term === this.term && e.revision > this.revision) {
        this.revision = e.revision
        return this.renewOnce()
      }
      this.revision = 0
      return false
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }

  /** Give the lease up at a graceful stop, so a replica takes over at once instead of after it expires. */
  async release(): Promise<void> {
    this.stop()
    if (this.revision > 0) await this.kv.delete(KEY, { previousSeq: this.revision }).catch(() => {})
    this.revision = 0
  }
}
