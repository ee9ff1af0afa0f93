/**
 * Cheap checks on what a client sends, run before anything expensive looks at it (docs/limits.md,
 * issue 21 item 5): the request head's size, and how deeply a JSON or MessagePack document nests.
 * Pure functions over bytes; no allocation proportional to the input.
 */
import { ApiError } from '../errors.ts'

/**
 * Deepest nesting of arrays/objects accepted in a JSON body or a WebSocket frame. No API input
 * nests beyond a handful of levels; the limit keeps recursive walkers (JSON.stringify of a stored
 * value, validation, msgpackr's recursive decoder) far from the stack's end.
 */
export const MAX_NESTING = 64

/**
 * The shape a JSON body or socket frame may have (docs/limits.md "Body shape"), checked by a byte scan
 * before it is parsed: parsing, validating and reporting errors all cost per key and per element, so
 * a body within BODY_LIMIT_BYTES could still hold a million keys. Far above any input the API takes
 * (its largest lists hold 1,000 ids; a theme has at most 200 files).
 */
export const JSON_SHAPE = {
  /** Arrays and objects inside one another. */
  depth: MAX_NESTING,
  /** Members of one object. */
  members: 1_000,
  /** Elements of one array. */
  elements: 10_000,
  /** Values in the whole document (each member's or element's value, and the document itself). */
  nodes: 50_000,
} as const

export type ShapeLimit = keyof typeof JSON_SHAPE
export interface ShapeProblem { limit: ShapeLimit; max: number }

/**
 * The first limit of `limits` a JSON text goes past, or null. Brackets, commas and whitespace inside
 * strings (escapes included) do not count; malformed JSON is left for the parser to refuse. Members
 * and elements are counted by their separating commas, one more for a container that is not empty.
 */
export function jsonShapeProblem(buf: Uint8Array, limits: Readonly<Record<ShapeLimit, number>> = JSON_SHAPE): ShapeProblem | null {
  const counts = new Int32Array(limits.depth + 1)
  const objects = new Uint8Array(limits.depth + 1)
  let depth = 0
  let nodes = 1
  let inString = false
  let opened = false // the last token opened a container: the next one may be its first member
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!
    if (inString) {
      if (c === 0x5c) i++ // backslash: skip the escaped byte (a `\"` does not end the string)
      else if (c === 0x22) inString = false
      continue
    }
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue
    if (opened) {
      opened = false
      if (c !== 0x5d && c !== 0x7d) {
        counts[depth] = 1
        if (++nodes > limits.nodes) return { limit: 'nodes', max: limits.nodes }
      }
    }
    if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limits.depth) return { limit: 'depth', max: limits.depth }
      counts[depth] = 0
      objects[depth] = c === 0x7b ? 1 : 0
      opened = true
    } else if (c === 0x5d || c === 0x7d) {
      if (depth > 0) depth--
    } else if (c === 0x2c && depth > 0) {
      const n = ++counts[depth]!
      if (objects[depth] ? n > limits.members : n > limits.elements) return objects[depth] ? { limit: 'members', max: limits.members } : { limit: 'elements', max: limits.elements }
      if (++nodes > limits.nodes) return { limit: 'nodes', max: limits.nodes }
    }
  }
  return null
}

/**
 * The first limit of `limits` a MessagePack document goes past, or null (msgpack spec "Formats"):
 * JSON_SHAPE's limits, a map's entries counting as its members and a key with its value as one node.
 * Walks the headers without decoding: a stack of the items each open container still expects, at
 * most `limits.depth` long. A truncated or invalid document answers null: the decoder refuses it.
 */
export function msgpackShapeProblem(buf: Uint8Array, limits: Readonly<Record<ShapeLimit, number>> = JSON_SHAPE): ShapeProblem | null {
  const open: number[] = []
  const maps: boolean[] = []
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  const u8 = (at: number) => (at < buf.length ? buf[at]! : 0)
  const u16 = (at: number) => (at + 2 <= buf.length ? view.getUint16(at) : 0)
  const u32 = (at: number) => (at + 4 <= buf.length ? view.getUint32(at) : 0)
  let nodes = 0
  let i = 0
  while (i < buf.length) {
    const b = buf[i++]!
    let items = -1 // children of a container (-1: not a container)
    let map = false
    if (b <= 0x7f || b >= 0xe0) { /* positive/negative fixint */ }
    else if (b <= 0x8f) { items = (b & 0x0f) * 2; map = true }
    else if (b <= 0x9f) items = b & 0x0f
    else if (b <= 0xbf) i += b & 0x1f
    else {
      switch (b) {
        case 0xc4: case 0xd9: i += 1 + u8(i); break // bin8, str8
        case 0xc5: case 0xda: i += 2 + u16(i); break // bin16, str16
        case 0xc6: case 0xdb: i += 4 + u32(i); break // bin32, str32
        case 0xc7: i += 2 + u8(i); break // ext8
        case 0xc8: i += 3 + u16(i); break // ext16
        case 0xc9: i += 5 + u32(i); break // ext32
        case 0xcc: case 0xd0: i += 1; break
        case 0xcd: case 0xd1: i += 2; break
        case 0xca: case 0xce: case 0xd2: i += 4; break
        case 0xcb: case 0xcf: case 0xd3: i += 8; break
        case 0xd4: i += 2; break // fixext 1..16: type byte + data
        case 0xd5: i += 3; break
        case 0xd6: i += 5; break
        case 0xd7: i += 9; break
        case 0xd8: i += 17; break
        case 0xdc: items = u16(i); i += 2; break
        case 0xdd: items = u32(i); i += 4; break
        case 0xde: items = u16(i) * 2; i += 2; map = true; break
        case 0xdf: items = u32(i) * 2; i += 4; map = true; break
        case 0xc0: case 0xc2: case 0xc3: break // nil, false, true
        default: return null // 0xc1 (never used): not MessagePack
      }
    }
    const top = open.length - 1
    // A map's items alternate key, value: its remaining count is even before each key.
    const isKey = top >= 0 && maps[top]! && open[top]! % 2 === 0
    if (!isKey && ++nodes > limits.nodes) return { limit: 'nodes', max: limits.nodes }
    if (top >= 0) open[top]!--
    if (items >= 0) {
      if (open.length + 1 > limits.depth) return { limit: 'depth', max: limits.depth }
      if (map ? items / 2 > limits.members : items > limits.elements) return map ? { limit: 'members', max: limits.members } : { limit: 'elements', max: limits.elements }
      if (items > 0) { open.push(items); maps.push(map) }
    }
    while (open.length > 0 && open[open.length - 1] === 0) { open.pop(); maps.pop() }
  }
  return null
}

/** What one header line adds to `headerBytes`: `name: value\r\n` (the HTTP door and socket upgrades alike). */
export const headerLineBytes = (name: string, value: string): number => name.length + value.length + 4

/** The request-head limits an operator sets (MAX_URL_BYTES, MAX_HEADER_BYTES). */
export interface HeadLimits { maxUrlBytes: number; maxHeaderBytes: number }

/**
 * 414 for a request target (path + query) over `maxUrlBytes`, 431 for header lines adding up to
 * more than `maxHeaderBytes` (RFC 9110 §15.5.15, RFC 6585 §5); null when the head is fine.
 * `headerBytes` counts each line as `name: value\r\n`.
 */
export function headProblem(urlBytes: number, headerBytes: number, limits: HeadLimits): ApiError | null {
  if (urlBytes > limits.maxUrlBytes) {
    return new ApiError('uri_too_long', `The request URL (path and query) must be at most ${limits.maxUrlBytes} bytes.`)
  }
  if (headerBytes > limits.maxHeaderBytes) {
    return new ApiError('request_header_fields_too_large', `The request headers must add up to at most ${limits.maxHeaderBytes} bytes.`)
  }
  return null
}
