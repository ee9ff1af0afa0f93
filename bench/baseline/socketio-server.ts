/**
 * The Socket.IO baseline for bench/tracking.ts: the same relay on a conventional stack — Node's
 * http server + Socket.IO (WebSocket transport only, its fastest setting). Drivers emit `location`;
 * the server validates it, keeps the driver's latest position and emits it to the order's room,
 * where the watchers are. No database write (the server under test writes every position to
 * SQLite), no authentication lookups: the baseline is given every advantage. With `store` (the fan-out
 * scenario, bench/tracking-fanout.ts) each position also goes to the store's room (`role=feed` sockets).
 *
 *   node --import tsx bench/baseline/socketio-server.ts   (PORT, default 8090)
 */
import { createServer } from 'node:http'
import { Server } from 'socket.io'

const port = Number(process.env.PORT ?? 8090)
const http = createServer((req, res) => {
  if (req.url === '/healthz') { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"status":"ok"}'); return }
  res.writeHead(404); res.end()
})
const io = new Server(http, { transports: ['websocket'], serveClient: false, perMessageDeflate: false })
const latest = new Map<number, { lat: number; lng: number; at: string }>()

io.on('connection', (socket) => {
  const { role, order, driver, store } = socket.handshake.query as Record<string, string>
  const orderId = Number(order)
  if (!Number.isInteger(orderId)) return void socket.disconnect(true)
  if (role === 'watcher') {
    void socket.join(`track:${orderId}`)
  } else if (role === 'feed') {
    // bench/tracking-fanout.ts: a store's dispatch feed and operations screen, each in the store's room.
    void socket.join(`store:${Number(store)}`)
  } else if (role === 'driver') {
    const driverId = Number(driver)
    const storeId = store === undefined ? null : Number(store)
    socket.on('location', (f: { lat?: unknown; lng?: unknown }) => {
      if (typeof f?.lat !== 'number' || typeof f.lng !== 'number' || Math.abs(f.lat) > 90 || Math.abs(f.lng) > 180) return
      const pos = { lat: f.lat, lng: f.lng, at: new Date().toISOString() }
      latest.set(driverId, pos)
      io.to(`track:${orderId}`).emit('location', { order_id: orderId, driver: { name: `Driver ${driverId}`, lat: pos.lat, lng: pos.lng, location_updated_at: pos.at } })
      // The fan-out scenario: the driver's store feed too (one emit to the room, as a relay would).
      if (storeId !== null) io.to(`store:${storeId}`).emit('location', { driver_id: driverId, name: `Driver ${driverId}`, lat: pos.lat, lng: pos.lng, location_updated_at: pos.at })
    })
  }
  socket.emit('ready')
})

http.listen(port, '127.0.0.1')
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => { void io.close(); process.exit(0) })
