/**
 * Requests from a chosen loopback source address (127.0.0.2, 127.0.0.3, …): the server keys its
 * rate limits on the peer address (never on X-Forwarded-For), so a test can act as several
 * clients on the internet. Linux routes all of 127.0.0.0/8 to loopback.
 */
import { request as httpRequest } from 'node:http'
import type { Res } from './server.ts'

export function requestFrom(localAddress: string, url: string, method: string, body?: unknown, token?: string): Promise<Res> {
  const payload = body === undefined ? undefined : JSON.stringify(body)
  const headers: Record<string, string> = {}
  if (payload !== undefined) headers['content-type'] = 'application/json'
  if (token) headers.authorization = `Bearer ${token}`
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, localAddress, headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let parsed: unknown
        try { parsed = text ? JSON.parse(text) : undefined } catch { parsed = undefined }
        const h = new Headers()
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v)
        resolve({ status: res.statusCode ?? 0, headers: h, body: parsed, text })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(payload)
  })
}

/** `n` distinct loopback addresses other than 127.0.0.1 (the address of every other test client). */
export const addresses = (n: number, from = 2): string[] => Array.from({ length: n }, (_, i) => `127.0.0.${from + i}`)
