/**
 * Socket frame bindings of operations (issue 33 item 1), beside the HTTP routes of `bind` and the
 * MCP tools: `frame(op, {type})` names the frame type a socket accepts for an operation; the socket
 * runs it with its own principal through the one pipeline (src/ops/invoke.ts: authorize → resolve
 * scope (404) → validate (422) → run, plan features in the operation's wrapper), so a frame is
 * refused exactly as the operation's HTTP route would be, and the socket keeps only what is its own:
 * which frames it reads, the `seq` it echoes, and how the answer is framed.
 */
import type { Principal } from '../auth/principals.ts'
import { invoke } from '../ops/invoke.ts'
import { authorize } from '../auth/policy.ts'
import { validate } from '../ops/validate.ts'
import type { Op, ScopeIds } from '../ops/op.ts'
import type { Services } from '../services.ts'

export interface BoundFrame<O = unknown> {
  /** The frame's `type`. */
  type: string
  op: Op<unknown, O>
  /** The operation's input from the frame; default: the frame without `type` and `seq`. */
  input: (frame: Readonly<Record<string, unknown>>) => unknown
}

const withoutEnvelope = (f: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const input: Record<string, unknown> = {}
  for (const k in f) if (k !== 'type' && k !== 'seq') input[k] = f[k]
  return input
}

/** Bind `op` to the frames of `type`. */
export function frame<I, O>(op: Op<I, O>, b: { type: string; input?: (frame: Readonly<Record<string, unknown>>) => unknown }): BoundFrame<O> {
  return { type: b.type, op: op as Op<unknown, O>, input: b.input ?? withoutEnvelope }
}

/** What a socket knows when a frame arrives. */
export interface FrameCall {
  svc: Services
  /** The socket's principal, as its last credential check found it. */
  principal: Principal
  /** The scope ids the socket is bound to (its store, …). */
  ids: ScopeIds
  frame: Readonly<Record<string, unknown>>
  /** The socket's client address. */
  ip: string
}

/** Run a frame's operation; resolves to its output, or rejects with the ApiError to answer as an `error` frame. */
export async function runFrame<O>(bound: BoundFrame<O>, call: FrameCall): Promise<O> {
  const { value } = await invoke(bound.op, {
    svc: call.svc, principal: call.principal, ids: call.ids, where: 'body', read: () => bound.input(call.frame), requestId: `ws:${bound.type}`, ip: call.ip,
  })
  return value as O
}

/**
 * Admit a frame whose operation the socket runs in batches (driver positions: the latest position
 * per driver per turn becomes one message to the driver's actor, the operation's message): the
 * operation's policy and input, frame by frame, without running it. Answers the validated input, or
 * throws the ApiError to answer as an `error` frame.
 */
export function admitFrame<I>(bound: BoundFrame<unknown>, principal: Principal, frame: Readonly<Record<string, unknown>>): I {
  authorize(principal, bound.op.access)
  return (bound.op.input ? validate(bound.op.input, bound.input(frame), 'body') : undefined) as I
}
