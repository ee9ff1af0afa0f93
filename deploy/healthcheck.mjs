#!/usr/bin/env node
// The container's HEALTHCHECK (Dockerfile; docs/deploy.md): exit 0 when GET /readyz answers 200,
// 1 otherwise (503 while draining or when the database is not ready, refused, or no answer in
// 4 s). It asks the server on this machine directly, over HTTP/1.1, on PORT (default 8080).
const port = Number(process.env.PORT ?? 8080)
const url = `http://127.0.0.1:${Number.isInteger(port) && port > 0 ? port : 8080}/readyz`
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(4000) })
  await res.arrayBuffer()
  if (res.status !== 200) console.error(`not ready: ${url} answered ${res.status}`)
  process.exit(res.status === 200 ? 0 : 1)
} catch (e) {
  console.error(`not ready: ${url}: ${e instanceof Error ? e.message : String(e)}`)
  process.exit(1)
}
