/**
 * The frames of the kitchen socket `{base_url}/ws/kds` (docs/kds.md "Kitchen socket"), as the server
 * builds them (src/ws/kds.ts) and the kitchen screen reads them (src/browser/kds.ts, a type-only
 * import): a renamed field fails the type check of both.
 */
import type { KdsItem, KdsTicket } from '../storage/kds.ts'

export type { KdsItem, KdsTicket }

/** What a card heads with, sent with an `item` frame so a screen can draw a card it did not have. */
export type KdsTicketHead = Omit<KdsTicket, 'items'>

export interface KdsSnapshotFrame { type: 'snapshot'; station: string | null; tickets: KdsTicket[] }
export interface KdsTicketFrame { type: 'ticket'; ticket: KdsTicket }
export interface KdsItemFrame { type: 'item'; order_id: number; order_status: string; order: KdsTicketHead; items: KdsItem[] }
export interface KdsStatusFrame { type: 'status'; order_id: number; status: string; previous_status: string }
export interface KdsAckFrame { type: 'ack'; seq: number | null; item_id: number; kds_state: string; order_id: number; order_status: string }
/** A refused frame (src/ws/frames.ts): the §7 envelope and the frame's `seq`. */
export interface KdsErrorFrame { type: 'error'; code: string; reason: string; message: string; errors?: Record<string, string[]>; seq?: number | null }
export interface KdsPongFrame { type: 'pong' }

/** Every frame a kitchen screen receives. */
export type KdsOutFrame = KdsSnapshotFrame | KdsTicketFrame | KdsItemFrame | KdsStatusFrame | KdsAckFrame | KdsErrorFrame | KdsPongFrame

/** What a kitchen screen sends: a step of one line (`seq` comes back on its ack or error). */
export interface KdsStepFrame { type: 'bump' | 'recall'; item_id: number; seq?: number }
