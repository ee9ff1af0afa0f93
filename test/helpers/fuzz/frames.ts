/**
 * WebSocket frames for the socket fuzzer (issue 21 item 1; docs/realtime.md, docs/kds.md): the
 * frames a socket documents, valid and mutated, as JSON text or MessagePack binary, plus garbage
 * bytes, bytes that are not UTF-8 in a text frame, non-objects, deep nesting and messages over the
 * socket's limit and over the hard cap. Pure: bytes only.
 */
import fc from 'fast-check'
import { pack } from 'msgpackr'
import { validOf, type Hints, type Schema } from './arbitraries.ts'
import { nearMiss, nested } from './mutations.ts'

export interface WsFrame {
  kind: string
  binary: boolean
  data: Buffer
  /** Why the server may close the socket on this frame (docs/realtime.md "Close codes"), if it may. */
  mayClose?: number[]
}

/** uWS's own cap (src/ws/guard.ts FRAME_HARD_CAP): above it the connection drops without a close frame (1006). */
export const FRAME_HARD_CAP = 16 * 1024

const seq = { type: 'integer', minimum: 0, maximum: 1_000_000 }
/** The frames each socket documents, as JSON Schema. */
export const SOCKET_FRAMES: Record<string, Schema[]> = {
  driver: [
    { type: 'object', properties: { type: { const: 'location' }, lat: { type: 'number', minimum: -90, maximum: 90 }, lng: { type: 'number', minimum: -180, maximum: 180 }, seq }, required: ['type', 'lat', 'lng'] },
    { type: 'object', properties: { type: { const: 'ping' } }, required: ['type'] },
  ],
  kds: [
    { type: 'object', properties: { type: { enum: ['bump', 'recall'] }, item_id: { type: 'integer', minimum: 1 }, seq }, required: ['type', 'item_id'] },
    { type: 'object', properties: { type: { enum: ['refresh', 'ping'] } }, required: ['type'] },
  ],
  track: [{ type: 'object', properties: { type: { const: 'ping' } }, required: ['type'] }],
  dispatch: [{ type: 'object', properties: { type: { const: 'ping' } }, required: ['type'] }],
  orders: [{ type: 'object', properties: { type: { const: 'ping' } }, required: ['type'] }],
}

const text = (kind: string, s: string, limit: number): WsFrame => {
  const data = Buffer.from(s, 'utf8')
  return { kind, binary: false, data, ...(data.length > limit ? { mayClose: data.length > FRAME_HARD_CAP ? [1006, 1009] : [1009] } : {}) }
}
const binary = (kind: string, data: Buffer, limit: number): WsFrame =>
  ({ kind, binary: true, data, ...(data.length > limit ? { mayClose: data.length > FRAME_HARD_CAP ? [1006, 1009] : [1009] } : {}) })

/** Frames for a socket with `schemas` and a message limit of `limit` bytes. */
export function framesFor(schemas: Schema[], limit: number, hints: Hints = {}): fc.Arbitrary<WsFrame> {
  const valid = fc.oneof(...schemas.map((s) => validOf(s, hints)))
  const safeJson = (v: unknown) => JSON.stringify(v) ?? 'null'
  return fc.oneof(
    { arbitrary: valid.map((v) => text('valid-json', safeJson(v), limit)), weight: 3 },
    { arbitrary: valid.map((v) => binary('valid-msgpack', safePack(v), limit)), weight: 2 },
    { arbitrary: nearMiss(valid).map((v) => text('near-miss-json', safeJson(v), limit)), weight: 5 },
    { arbitrary: nearMiss(valid).map((v) => binary('near-miss-msgpack', safePack(v), limit)), weight: 2 },
    { arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => binary('garbage-binary', Buffer.from(b), limit)), weight: 2 },
    { arbitrary: fc.constantFrom('{', '', 'null', '1', '"ping"', '[]', '{"type":null}', '{"type":{"$gt":""}}', '{"type":"__proto__"}', '\u0000').map((s) => text('not-a-frame', s, limit)), weight: 2 },
    // A text frame whose bytes are not UTF-8: uWS drops the connection before any server code runs (docs/realtime.md).
    { arbitrary: fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80]).map((b) => ({ kind: 'invalid-utf8', binary: false, data: Buffer.from(b), mayClose: [1006, 1007] })), weight: 1 },
    { arbitrary: fc.constantFrom(200, 2000).map((d) => text('deep-nesting', JSON.stringify(nested(d)), limit)), weight: 1 },
    { arbitrary: fc.constantFrom(100, 1000, 10_000).map((d) => binary('deep-msgpack', deepMsgpack(d), limit)), weight: 1 },
    { arbitrary: fc.constantFrom(limit + 1, limit * 3, FRAME_HARD_CAP + 10).map((n) => text('huge', JSON.stringify({ type: 'ping', pad: 'x'.repeat(n) }), limit)), weight: 1 },
  )
}

/** MessagePack of `v`; a value too deep for msgpackr's recursive encoder becomes the same depth written by hand. */
export function safePack(v: unknown): Buffer {
  try { return pack(v) } catch { return deepMsgpack(1000) }
}

/** `depth` nested one-element arrays around `1`, as MessagePack (fixarray 0x91 … positive fixint 0x01). */
export const deepMsgpack = (depth: number): Buffer => Buffer.concat([Buffer.alloc(depth, 0x91), Buffer.from([0x01])])
