/** Entry point: configuration → app → listen → demo seed on an empty database → signals. */
import { loadConfig } from './config.ts'
import { buildApp } from './app.ts'
import { seedDemo } from './seed.ts'

const config = loadConfig()
const app = buildApp(config)
const { svc } = app

if (config.demoSeed && (svc.db.prepare('SELECT COUNT(*) FROM owners').pluck().get() as number) === 0) {
  const demo = seedDemo(svc.db, config.siteUrl)
  // Printed once, on the first start with an empty database: these secrets are not stored raw.
  process.stdout.write(`\nDemo account created (shown once, keep it):\n${JSON.stringify(demo, null, 2)}\n\n`
    + `Owner dashboard: ${config.siteUrl}/login\n  email:    ${demo.owner.email}\n  password: ${demo.owner.password}\n\n`)
}

const port = await app.listen()
svc.log.info({ port, host: config.host, db: config.dbPath, base_url: config.baseUrl, group_commit: config.groupCommit }, 'dispatch server ready')

let stopping = false
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (stopping) return
    stopping = true
    svc.log.info({ sig }, 'shutting down')
    app.close().then(() => process.exit(0), (err) => { svc.log.error({ err }, 'shutdown failed'); process.exit(1) })
  })
}
