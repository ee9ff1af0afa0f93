/**
 * JSON-RPC ids exactly as the client wrote them (JSON-RPC 2.0 §4: the response's id is the same as
 * the request's). JSON.parse turns `9007199254740993` into 9007199254740992 and `1.0` into 1, so a
 * client using 64-bit ids could not match its answer. The text of each numeric id is read here from
 * the body, and stringifyAnswer writes it back in place of the parsed number.
 */
import type { RpcAnswer } from './protocol.ts'

const WS = new Set([0x20, 0x0a, 0x0d, 0x09])

/** The end (exclusive) of the JSON string token that starts at `at` (a `"`). */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x5c) i++
    else if (c === 0x22) return i + 1
  }
  return text.length
}

/**
 * For a JSON text already known to parse: per message (the document itself, or each element of a
 * top-level array), the raw text of its `id` member when that is a number, else undefined.
 */
export function rawNumericIds(text: string): Array<string | undefined> {
  const out: Array<string | undefined> = []
  const stack: Array<'{' | '['> = []
  let messageDepth = 0 // depth of the message objects: 1 for one message, 2 in a batch
  let key: string | null = null // the member key just read, at message depth
  let expectKey = false
  let elementStart = false // in a batch, the next token starts a message (of any type)
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (WS.has(c)) continue
    if (elementStart) {
      elementStart = false
      if (c !== 0x5d) out.push(undefined)
    }
    const top = stack[stack.length - 1]
    if (c === 0x22) {
      const end = stringEnd(text, i)
      if (expectKey && stack.length === messageDepth) key = JSON.parse(text.slice(i, end)) as string
      expectKey = false
      i = end - 1
    } else if (c === 0x7b || c === 0x5b) {
      if (stack.length === 0) {
        messageDepth = c === 0x7b ? 1 : 2
        if (messageDepth === 1) out.push(undefined)
      }
      stack.push(c === 0x7b ? '{' : '[')
      if (stack.length === 1 && messageDepth === 2) elementStart = true
      expectKey = c === 0x7b
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop()
      expectKey = false
    } else if (c === 0x2c) {
      expectKey = top === '{'
      if (stack.length === 1 && messageDepth === 2) elementStart = true
    } else if (c === 0x3a && stack.length === messageDepth && top === '{' && key === 'id') {
      let j = i + 1
      while (j < text.length && WS.has(text.charCodeAt(j))) j++
      let end = j
      while (end < text.length && NUMBER_CHAR.test(text[end]!)) end++
      if (end > j) out[out.length - 1] = text.slice(j, end)
      i = end - 1
      key = null
    }
  }
  return out
}

const NUMBER_CHAR = /[-+0-9.eE]/

/** The answer as JSON, its numeric id written as the request's own text when there is one. */
export function stringifyAnswer(answer: RpcAnswer, rawId: string | undefined): string {
  const json = JSON.stringify(answer)
  if (rawId === undefined || typeof answer.id !== 'number') return json
  // Answers are built as {jsonrpc, id, result | error}: the id is always written right after "jsonrpc".
  const head = `{"jsonrpc":"2.0","id":${JSON.stringify(answer.id)}`
  return json.startsWith(head) ? `{"jsonrpc":"2.0","id":${rawId}${json.slice(head.length)}` : json
}
