/**
 * A local stand-in for an outside HTTP service (Twilio, a Web Push service, Google's token address,
 * FCM) in the provider tests (docs/providers.md "Tests"): records every request and answers from a
 * queue of planned answers, then with the default.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Recorded { method: string; path: string; headers: IncomingHttpHeaders; body: Buffer }
export interface Answer { status: number; body?: unknown; headers?: Record<string, string> }

export interface FakeService {
  url: string
  requests: Recorded[]
  /** Answers for the next requests, in order; `answer(req)` decides when the queue is empty. */
  plan(...answers: Answer[]): void
  /** Replace `answer(req)`. */
  respond(answer: (req: Recorded) => Answer): void
  /** Resolves once `n` requests have arrived in total. */
  received(n: number): Promise<Recorded[]>
  close(): Promise<void>
}

export async function startFake(answer: (req: Recorded) => Answer): Promise<FakeService> {
  const requests: Recorded[] = []
  const planned: Answer[] = []
  const waiters: Array<{ n: number; resolve: (r: Recorded[]) => void }> = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const rec: Recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) }
      requests.push(rec)
      const a = planned.shift() ?? answer(rec)
      const body = a.body === undefined ? '' : typeof a.body === 'string' ? a.body : JSON.stringify(a.body)
      res.writeHead(a.status, { 'content-type': 'application/json', ...(a.headers ?? {}) })
      res.end(body)
      for (const w of [...waiters]) if (requests.length >= w.n) { waiters.splice(waiters.indexOf(w), 1); w.resolve(requests) }
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    plan: (...a) => { planned.push(...a) },
    respond: (fn) => { answer = fn },
    received: (n) => (requests.length >= n ? Promise.resolve(requests) : new Promise((resolve) => waiters.push({ n, resolve }))),
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()) }),
  }
}
