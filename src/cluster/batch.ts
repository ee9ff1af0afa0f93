/**
 * One message of the replication stream (docs/cluster.md "The stream"), MessagePack-encoded:
 * - a **batch**: the rows one committed transaction of the primary changed, in order;
 * - an **epoch**: written by a node becoming primary before anything else, with the expected last
 *   sequence it caught up to; once it is in the stream, nothing the previous primary sends can be.
 * Every message says which node wrote it, its id (node, boot, count: stable across publish retries,
 * so JetStream's deduplication drops a repeated publish) and the schema version (the newest
 * migration) of the code that wrote it: a replica whose code is older refuses to apply it.
 */
import { Packr } from 'msgpackr'
import type { ChangeSet } from '../storage/changes.ts'

export const FORMAT = 1

export type StreamMessage =
  | { k: 'batch'; f: number; node: string; id: string; schema: number; at: number; set: ChangeSet }
  | { k: 'epoch'; f: number; node: string; id: string; schema: number; at: number }

const packr = new Packr({ useRecords: false, mapsAsObjects: true })

export const encodeMessage = (m: StreamMessage): Uint8Array => packr.pack(m)

export function decodeMessage(data: Uint8Array): StreamMessage {
  const m = packr.unpack(data) as StreamMessage
  if (!m || typeof m !== 'object' || (m.k !== 'batch' && m.k !== 'epoch')) throw new Error('not a replication message')
  return m
}
