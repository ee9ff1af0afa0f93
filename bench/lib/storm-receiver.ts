/**
 * Owner A's failing receiver for the storm bench, in a process of its own so that its work (64
 * hung connections torn down at once, hundreds of 500s) does not land on the bench process, where
 * owner B's latency is measured. `node --import tsx bench/lib/storm-receiver.ts hang|500`: prints
 * `port N` once listening; on SIGTERM prints `arrivals N` and exits.
 */
import { createServer } from 'node:http'

const mode = process.argv[2] === 'hang' ? 'hang' : '500'
let arrivals = 0
const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    arrivals++
    if (mode === '500') res.writeHead(500).end('down')
  })
})
server.keepAliveTimeout = 30_000
server.listen(0, '127.0.0.1', () => console.log(`port ${(server.address() as { port: number }).port}`))
process.on('SIGTERM', () => {
  console.log(`arrivals ${arrivals}`)
  server.closeAllConnections()
  server.close(() => process.exit(0))
})
