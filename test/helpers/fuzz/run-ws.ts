/**
 * The WebSocket fuzz run (issue 21 item 1), shared by test/fuzz-ws.test.ts and `npm run fuzz`: on
 * every socket kind, generated frames one at a time, each followed by a `ping` so its answer is
 * known. Properties: a frame is answered with a documented error frame or not at all, or the
 * socket closes with a documented code for that frame; a refused frame writes nothing; afterwards
 * `/healthz` still answers and a witness socket opened first still gets its `pong`. Odd upgrade
 * addresses are answered 101 or with the §7 envelope.
 */
import fc from 'fast-check'
import type { TestServer } from '../server.ts'
import { WsClient, wsBase } from '../ws-client.ts'
import { rawUpgrade } from '../raw-ws.ts'
import { framesFor, SOCKET_FRAMES, type WsFrame } from './frames.ts'
import { ODD_PATH_IDS } from './mutations.ts'
import { ANSWER_BOUND_MS, envelopeProblem, Snapshots, subSeed, Tally } from './properties.ts'
import { buildWorld, type World } from './world.ts'
import type { RunOptions } from './run-http.ts'
import { ERROR_CATALOG } from '../../../src/errors.ts'
import { specCode } from '../spec-errors.ts'

/**
 * Error frame reasons a client may get: docs/realtime.md "Errors" (`internal_error` is a failure on
 * our side), and on the kitchen socket the API's own refusals (docs/kds.md: "the same rules as the
 * HTTP routes"), any catalog code below 500; the `code` is the spec's for its status (api-v1 §7).
 */
const FRAME_CODES = new Set(['bad_frame', 'unknown_type', 'validation_failed', ...Object.entries(ERROR_CATALOG).filter(([, e]) => e.status < 500).map(([c]) => c)])

/** Closes any frame may get (docs/realtime.md "Close codes"): 1008 for one nesting deeper than 64 levels. */
const ANY_FRAME_MAY_CLOSE = new Set(['1008 nesting_too_deep'])

interface SocketKind { name: string; path: (w: World) => string; token: (w: World) => string | undefined; limit: number }

export const SOCKETS: SocketKind[] = [
  { name: 'driver', path: () => '/ws/driver', token: (w) => w.tokens.driver, limit: 4096 },
  { name: 'track', path: (w) => `/ws/track/${w.trackToken}`, token: () => undefined, limit: 1024 },
  { name: 'dispatch', path: (w) => `/ws/dispatch/${w.ids.store}`, token: (w) => w.tokens.owner, limit: 1024 },
  { name: 'orders', path: (w) => `/ws/orders/${w.ids.store}`, token: (w) => w.tokens.owner, limit: 1024 },
  { name: 'kds', path: () => '/ws/kds', token: (w) => w.tokens.staff, limit: 4096 },
]

const isPong = (f: any) => f?.type === 'pong'

export async function fuzzWs(s: TestServer, opts: RunOptions, tally = new Tally()): Promise<Tally> {
  const snaps = new Snapshots(s.dbPath)
  const w = await buildWorld(s)
  const base = wsBase(s)
  const witness = await WsClient.open(`${base}/ws/track/${w.trackToken}`)
  try {
    for (const k of SOCKETS) {
      const subject = `ws ${k.name}`
      if (opts.only && !subject.includes(opts.only)) continue
      const seed = subSeed(opts.seed, subject)
      const hints = { ...w.hints, item_id: w.hints.line_id ?? [1, 2, 3] }
      const frames = fc.sample(fc.tuple(fc.boolean(), framesFor(SOCKET_FRAMES[k.name]!, k.limit, hints)), { seed, numRuns: opts.runs })
      let sock: WsClient | null = null
      for (const [msgpack, frame] of frames) {
        const url = `${base}${k.path(w)}${msgpack ? '?format=msgpack' : ''}`
        sock ??= await WsClient.open(url, { token: k.token(w) })
        const problem = await sendFrame(sock, frame, snaps)
        tally.count(k.name, frame.kind, problem?.outcome ?? 'answered')
        if (problem?.closed) sock = null
        if (problem?.message) tally.failures.push(`seed ${opts.seed} (socket seed ${seed}) ${subject}: ${problem.message}\n  frame [${frame.kind}, ${frame.binary ? 'binary' : 'text'}${msgpack ? ', msgpack socket' : ''}] ${describeFrame(frame)}`)
      }
      await sock?.close()
      const health = await fetch(`${s.site}/healthz`)
      if (health.status !== 200) tally.failures.push(`seed ${opts.seed} ${subject}: /healthz answered ${health.status} after the frames`)
      witness.send({ type: 'ping' })
      await witness.next(isPong, ANSWER_BOUND_MS).catch(() => tally.failures.push(`seed ${opts.seed} ${subject}: the witness socket got no pong after the frames`))
    }
    if (!opts.only || 'ws upgrade'.includes(opts.only)) await fuzzUpgrades(s, w, opts, tally)
  } finally {
    await witness.close()
    snaps.close()
  }
  return tally
}

interface FrameProblem { outcome: string; closed?: boolean; message?: string }

async function sendFrame(sock: WsClient, frame: WsFrame, snaps: Snapshots): Promise<FrameProblem | null> {
  const before = snaps.take()
  sock.frames.length = 0
  sock.ws.send(frame.data, { binary: frame.binary })
  sock.send({ type: 'ping' })
  try {
    await sock.next(isPong, ANSWER_BOUND_MS)
  } catch {
    const closed = await Promise.race([sock.closed, new Promise<null>((r) => setTimeout(() => r(null), 100))])
    if (!closed) return { outcome: 'hang', message: `no pong within ${ANSWER_BOUND_MS} ms and the socket is still open` }
    const documented = frame.mayClose?.includes(closed.code) || ANY_FRAME_MAY_CLOSE.has(`${closed.code} ${closed.reason}`)
    return { outcome: `close ${closed.code}`, closed: true, ...(documented ? {} : { message: `closed with ${closed.code} ${closed.reason}` }) }
  }
  const errors = sock.frames.filter((f) => f?.type === 'error')
  for (const e of errors) if (!FRAME_CODES.has(e.reason) || e.code !== specCode(e.reason)) return { outcome: `error ${e.code}`, message: `error frame with code ${e.code}, reason ${e.reason}: ${JSON.stringify(e)}` }
  if (!errors.length) {
    await snaps.settle()
    return { outcome: 'answered' }
  }
  const written = Snapshots.diff(before, snaps.take())
  if (written.length) return { outcome: 'error frame', message: `refused (${errors[0].code}) but wrote: ${written.join('; ')}` }
  return { outcome: `error ${errors[0].code}` }
}

const describeFrame = (f: WsFrame): string =>
  f.data.length > 400 ? `${f.data.length} bytes starting ${JSON.stringify(f.data.subarray(0, 200).toString(f.binary ? 'hex' : 'utf8'))}` : JSON.stringify(f.data.toString(f.binary ? 'hex' : 'utf8'))

/** Upgrade requests with odd ids, tokens and query strings: 101, or a refusal with the envelope. */
async function fuzzUpgrades(s: TestServer, w: World, opts: RunOptions, tally: Tally): Promise<void> {
  const seed = subSeed(opts.seed, 'ws upgrade')
  const path = fc.oneof(
    fc.constantFrom(...ODD_PATH_IDS).chain((id) => fc.constantFrom(`/api/v1/ws/track/${id}`, `/api/v1/ws/dispatch/${id}`, `/api/v1/ws/orders/${id}`)),
    fc.constantFrom(...ODD_PATH_IDS).chain((q) => fc.constantFrom(`/api/v1/ws/driver?token=${q}`, `/api/v1/ws/kds?station_id=${q}&token=${w.tokens.staff}`, `/api/v1/ws/driver?format=${q}&token=${w.tokens.driver}`)),
    fc.constantFrom('/api/v1/ws/', '/api/v1/ws', '/api/v1/ws/nope', '/api/v1/ws/track/', `/api/v1/ws/dispatch/${w.ids.store}?token=${w.tokens.staff}`, `/api/v1/ws/kds?token=${w.tokens.owner}`),
  )
  for (const p of fc.sample(path, { seed, numRuns: Math.max(10, Math.ceil(opts.runs / 4)) })) {
    let problem: string | null = null
    try {
      const a = await rawUpgrade(s.port, p, {}, ANSWER_BOUND_MS)
      tally.count('upgrade', 'odd-upgrade', a.status === 101 ? '101' : `${String(a.status)[0]}xx`)
      if (a.status >= 500) problem = `${a.status} ${a.body.slice(0, 200)}`
      else if (a.status !== 101) problem = envelopeProblem(a.status, a.headers['content-type'] ?? null, a.body)
    } catch (err) {
      tally.count('upgrade', 'odd-upgrade', 'no-answer')
      problem = (err as Error).message
    }
    if (problem) tally.failures.push(`seed ${opts.seed} (upgrade seed ${seed}) ws upgrade GET ${p.slice(0, 300)}: ${problem}`)
  }
}
