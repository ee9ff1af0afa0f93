/**
 * The orders bench's lean load generator (bench/lib/raw-load.ts): its response parser on reads split
 * anywhere, several responses in one read, bodies without an order id, chunked encoding refused; and
 * the generator itself against a local HTTP server (counts, ids, a server closing connections).
 */
import t from 'tap'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ResponseParser, requestBytes, runRawLoad } from '../../bench/lib/raw-load.ts'

const res = (status: number, body: string, extra = '') =>
  `HTTP/1.1 ${status} X\r\nContent-Type: application/json\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`

function collect(wantId = true) {
  const got: [number, number][] = []
  const errors: string[] = []
  const p = new ResponseParser((s, id) => got.push([s, id]), (r) => errors.push(r))
  p.wantId = wantId
  return { p, got, errors }
}

t.test('one response split at every byte boundary gives the same status and id', async (t) => {
  const bytes = Buffer.from(res(200, '{"id":12345,"status":"new"}'))
  for (let cut = 1; cut < bytes.length; cut++) {
    const { p, got, errors } = collect()
    p.feed(bytes.subarray(0, cut))
    p.feed(bytes.subarray(cut))
    t.same(got, [[200, 12345]], `cut at ${cut}`)
    t.same(errors, [])
  }
})

t.test('a response fed one byte at a time', async (t) => {
  const bytes = Buffer.from(res(201, '{"id":7}'))
  const { p, got } = collect()
  for (let i = 0; i < bytes.length; i++) p.feed(bytes.subarray(i, i + 1))
  t.same(got, [[201, 7]])
})

t.test('two responses in one read, then a third split across the next two', async (t) => {
  const a = res(200, '{"id":1,"x":[1,2,3]}')
  const b = res(422, '{"error":{"code":"invalid"}}')
  const c = Buffer.from(res(200, '{"id":99}'))
  const { p, got } = collect()
  p.feed(Buffer.concat([Buffer.from(a + b), c.subarray(0, 5)]))
  t.same(got, [[200, 1], [422, -1]])
  p.feed(c.subarray(5))
  t.same(got, [[200, 1], [422, -1], [200, 99]])
})

t.test('a reused read buffer: only the first `length` bytes count, and a kept partial head is a copy', async (t) => {
  const bytes = Buffer.from(res(200, '{"id":42}') + res(200, '{"id":43}'))
  const shared = Buffer.alloc(4096, 0x5a)
  const { p, got, errors } = collect()
  const cut = 78 + 30 // the first response (78 bytes) whole, then into the second one's header block
  bytes.copy(shared, 0, 0, cut)
  p.feed(shared, cut)
  shared.fill(0x5a) // the next read overwrites the buffer
  bytes.copy(shared, 0, cut)
  p.feed(shared, bytes.length - cut)
  t.same(got, [[200, 42], [200, 43]])
  t.same(errors, [])
})

t.test('a body without a leading id names none (-1)', async (t) => {
  const { p, got } = collect()
  p.feed(Buffer.from(res(200, '{"ok":true}') + res(200, '{"id":"abc"}') + res(200, '{"id":}') + res(200, '') + res(204, '')))
  t.same(got, [[200, -1], [200, -1], [200, -1], [200, -1], [204, -1]])
})

t.test('the id is not scanned when the request does not ask for it', async (t) => {
  const { p, got } = collect(false)
  p.feed(Buffer.from(res(200, '{"id":5}')))
  t.same(got, [[200, -1]])
})

t.test('header names are case-insensitive; other headers ignored', async (t) => {
  const { p, got } = collect()
  p.feed(Buffer.from('HTTP/1.1 200 OK\r\nCONTENT-LENGTH: 8\r\nx-content-length: 99\r\n\r\n{"id":3}'))
  t.same(got, [[200, 3]])
})

t.test('chunked transfer encoding and a response without a length are refused', async (t) => {
  const chunked = collect()
  t.equal(chunked.p.feed(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n{"id":3}\r\n0\r\n\r\n')), false)
  t.same(chunked.got, [])
  t.match(chunked.errors, [/chunked/])
  const unbounded = collect()
  t.equal(unbounded.p.feed(Buffer.from('HTTP/1.1 200 OK\r\n\r\n{"id":3}')), false)
  t.match(unbounded.errors, [/content-length/])
  const garbage = collect()
  t.equal(garbage.p.feed(Buffer.from('SSH-2.0-OpenSSH\r\n\r\n')), false)
})

t.test('request bytes: method, path, host, headers, content-length, body', async (t) => {
  const b = requestBytes({ method: 'POST', path: '/a', headers: { authorization: 'Bearer x' }, body: '{"é":1}' }, '127.0.0.1:9')
  t.equal(b.toString(), 'POST /a HTTP/1.1\r\nhost: 127.0.0.1:9\r\nauthorization: Bearer x\r\ncontent-length: 8\r\n\r\n{"é":1}')
})

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

t.test('against a server: every request answered once, ids and statuses counted', async (t) => {
  let next = 0
  const server = createServer((req, rsp) => {
    req.resume()
    req.on('end', () => {
      const id = ++next
      const body = req.url === '/bad' ? '{"error":"no"}' : JSON.stringify({ id, pad: 'x'.repeat(id % 3000) })
      rsp.writeHead(req.url === '/bad' ? 400 : 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
      rsp.end(body)
    })
  })
  t.teardown(() => server.close())
  const url = await listen(server)
  const ids: number[] = []
  const onId = (s: number, id: number) => { if (s === 200) ids.push(id) }
  const r = await runRawLoad({
    url, connections: 4, durationSec: 0, amount: 500, label: 'test',
    requests: [{ method: 'POST', path: '/ok', body: '{}', onId }, { method: 'POST', path: '/ok', body: '{}', onId }, { method: 'POST', path: '/bad', body: '{}' }],
  })
  t.equal(r.ok2xx + r.non2xx, 500)
  t.equal(r.errors, 0)
  t.equal(r.timeouts, 0)
  t.equal(ids.length, r.ok2xx)
  t.equal(new Set(ids).size, ids.length, 'each 200 id once')
  t.ok(ids.every((id) => id >= 1 && id <= 500))
  t.equal(r.statuses['400'], r.non2xx)
  t.ok(r.p50 > 0 && r.p99 >= r.p50 && r.max >= r.p99)
  t.type(r.generatorCpuSec, 'number')
})

t.test('a server that closes connections: the request in flight is an error, the generator reconnects', async (t) => {
  let n = 0
  const server = createServer((req, rsp) => {
    req.resume()
    req.on('end', () => {
      n++
      if (n % 5 === 0) { req.socket.destroy(); return }
      rsp.writeHead(200, { 'content-length': 8 })
      rsp.end('{"id":1}')
    })
  })
  t.teardown(() => server.close())
  const url = await listen(server)
  const r = await runRawLoad({ url, connections: 2, durationSec: 0, amount: 100, label: 'test', requests: [{ method: 'POST', path: '/', body: 'x' }] })
  t.equal(r.ok2xx + r.errors, 100)
  t.equal(r.errors, 20)
})

t.test('a chunked answer counts an error and the connection is replaced', async (t) => {
  let n = 0
  const server = createServer((req, rsp) => {
    req.resume()
    req.on('end', () => {
      n++
      if (n % 4 === 0) { rsp.write('{"id":'); rsp.end('1}'); return } // no length: node sends chunked
      rsp.writeHead(200, { 'content-length': 8 })
      rsp.end('{"id":1}')
    })
  })
  t.teardown(() => server.close())
  const url = await listen(server)
  const r = await runRawLoad({ url, connections: 1, durationSec: 0, amount: 40, label: 'test', requests: [{ method: 'POST', path: '/', body: 'x' }] })
  t.equal(r.ok2xx, 30)
  t.equal(r.errors, 10)
})
