/**
 * WebSocket frame codecs (ARCHITECTURE "Real time"): JSON text frames by default; a client asks for
 * MessagePack binary frames with `?format=msgpack` or the subprotocol `msgpack`.
 */
import { Packr } from 'msgpackr'

export type Format = 'json' | 'msgpack'

const packr = new Packr({ useRecords: false })

export function chooseFormat(query: Readonly<Record<string, string>>, subprotocols: string): Format {
  if (query.format === 'msgpack') return 'msgpack'
  return subprotocols.split(',').map((s) => s.trim()).includes('msgpack') ? 'msgpack' : 'json'
}

export function encode(format: Format, msg: unknown): string | Uint8Array {
  return format === 'msgpack' ? packr.pack(msg) : JSON.stringify(msg)
}

/** Decode an incoming frame in whichever form it came; throws on garbage (callers answer an error frame). */
export function decode(message: ArrayBuffer, isBinary: boolean): unknown {
  if (isBinary) return packr.unpack(new Uint8Array(message))
  return JSON.parse(Buffer.from(message).toString('utf8'))
}
