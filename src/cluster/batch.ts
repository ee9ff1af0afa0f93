/**
 * One message of the replication stream (docs/cluster.md "The stream"), MessagePack-encoded:
 * - a **batch**: the rows one committed transaction of the primary changed, in order;
 * - a **part** of a batch too large for one NATS message (`max_payload`, 1 MiB by default: a theme
 *   upload's row alone can be that): the batch's encoded bytes cut into consecutive messages that
 *   replicas put back together before they apply any of it;
 * - an **epoch**: written by a node becoming primary before anything else, with the expected last
 *   sequence it caught up to; once it is in the stream, nothing the previous primary sends can be.
 * Every message says which node wrote it, its id (node, boot, count: stable across publish retries,
 * so JetStream's deduplication drops a repeated publish) and the schema version (the newest
 * migration) of the code that wrote it: a replica whose code is older refuses to apply it.
 */
import { Packr } from 'msgpackr'
import type { ChangeSet } from '../storage/changes.ts'

export const FORMAT = 1

interface Common { f: number; node: string; id: string; schema: number; at: number }
export type StreamMessage =
  | Common & { k: 'batch'; set: ChangeSet }
  | Common & { k: 'part'; i: number; n: number; bytes: Uint8Array }
  | Common & { k: 'epoch' }

const packr = new Packr({ useRecords: false, mapsAsObjects: true })

export const encodeMessage = (m: StreamMessage): Uint8Array => packr.pack(m)

export function decodeMessage(data: Uint8Array): StreamMessage {
  const m = packr.unpack(data) as StreamMessage
  if (!m || typeof m !== 'object' || (m.k !== 'batch' && m.k !== 'epoch' && m.k !== 'part')) throw new Error('not a replication message')
  return m
}

/**
 * A batch as the messages that carry it: itself when it fits in `maxBytes`, else parts of at most
 * `maxBytes` of its encoded form (each part message adds a few hundred bytes of its own).
 */
export function messagesOf(batch: Extract<StreamMessage, { k: 'batch' }>, maxBytes: number): Uint8Array[] {
  const whole = encodeMessage(batch)
  if (whole.length <= maxBytes) return [whole]
  const chunk = Math.max(1024, maxBytes - 1024)
  const n = Math.ceil(whole.length / chunk)
  const { set: _set, k: _k, ...common } = batch
  return Array.from({ length: n }, (_, i) => encodeMessage({ ...common, k: 'part', i, n, bytes: whole.subarray(i * chunk, (i + 1) * chunk) }))
}
