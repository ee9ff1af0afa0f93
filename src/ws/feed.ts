/**
 * The frames a listen-only feed socket accepts (tracking, dispatch, orders board): `ping` answers
 * `pong`, `refresh` sends a fresh snapshot, anything else an error frame; the socket stays open.
 */
import type { WebSocket } from 'uWebSockets.js'
import type { Hub, SocketData } from './hub.ts'
import { decode } from './codec.ts'
import { errorFrame } from './frames.ts'

export function feedMessages<T extends SocketData>(hub: Hub, kind: string, refresh: (ws: WebSocket<T>) => void) {
  return (ws: WebSocket<T>, message: ArrayBuffer, isBinary: boolean): void => {
    let frame: unknown
    try { frame = decode(message, isBinary) } catch { return void hub.send(ws, errorFrame('bad_frame', 'The frame is not valid JSON or MessagePack.'), true) }
    const type = (frame as { type?: unknown } | null)?.type
    if (type === 'ping') return void hub.send(ws, { type: 'pong' }, true)
    if (type === 'refresh') return refresh(ws)
    hub.send(ws, errorFrame('unknown_type', `${kind} sockets accept only \`ping\` and \`refresh\` frames.`), true)
  }
}
