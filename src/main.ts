/**
 * Entry point: configuration → database → app → listen → demo seed on an empty database → signals;
 * with NATS_URL, the same as a node of a cluster (src/cluster/boot.ts, docs/cluster.md).
 * Every refusal to start is one line on stderr and an exit code (src/startup.ts, docs/running.md).
 */
import { loadConfig, type Config } from './config.ts'
import { buildApp, type App } from './app.ts'
import { openDb, type Db } from './storage/db.ts'
import { seedDemo } from './seed.ts'
import { firstRunMessage } from './first-run.ts'
import { checkDbFolder, EXIT, fatal, StartupError } from './startup.ts'
import { createLogger } from './log.ts'
import { serveCluster, type Running } from './cluster/boot.ts'

let config: Config
try {
  config = loadConfig()
} catch (err) {
  const msg = err instanceof Error ? err.message : String(err)
  fatal(new StartupError(EXIT.config, msg.startsWith('invalid configuration') ? msg : `invalid configuration: ${msg}`))
}

const log = createLogger(config.logLevel)

const openDatabase = (): Db => {
  try {
    checkDbFolder(config.dbPath)
    return openDb(config.dbPath)
  } catch (err) {
    // SQLITE_CANTOPEN, "file is not a database", a migration that fails, or still locked after busy_timeout (5 s).
    fatal(err instanceof StartupError ? err : new StartupError(EXIT.database, `DB_PATH=${config.dbPath}: cannot open the database: ${(err as Error).message}`))
  }
}

/** The server as it runs: alone (the default) or as a node of a cluster (docs/cluster.md). */
const running: Running = config.cluster ? await startClusterNode() : await startSingle()

async function startClusterNode(): Promise<Running> {
  try {
    return await serveCluster(config, openDatabase, log, (why) => {
      // Nothing more is acknowledged from here (the replicator refuses every write); the refusals
      // already decided get a moment to reach their clients, then the process ends without a drain
      // and its supervisor starts it again, as a replica (docs/cluster.md "Failures").
      log.fatal({ why }, 'cluster node stopping')
      setTimeout(() => fatal(new StartupError(EXIT.fenced, `cluster node ${config.cluster!.nodeId} stopped: ${why}`)), 200)
    })
  } catch (err) {
    if (err instanceof StartupError) fatal(err)
    fatal(new StartupError(/cannot listen/.test((err as Error).message) ? EXIT.listen : EXIT.unavailable, `cluster node ${config.cluster!.nodeId}: ${(err as Error).message}`))
  }
}

async function startSingle(): Promise<Running> {
  const db = openDatabase()
  let app: App
  try {
    app = buildApp(config, { db, log })
  } catch (err) {
    db.close()
    throw err
  }
  const { svc } = app

  let port: number
  try {
    port = await app.listen()
  } catch (err) {
    await app.close()
    db.close()
    fatal(new StartupError(EXIT.listen, (err as Error).message))
  }

  if (config.demoSeed && (svc.db.prepare('SELECT COUNT(*) FROM owners').pluck().get() as number) === 0) {
    // Printed once, on the first start with an empty database: these secrets are not stored raw.
    process.stdout.write(firstRunMessage(seedDemo(svc.db, config.siteUrl), config.siteUrl, config.providers.email.kind !== 'smtp'))
  }
  svc.log.info({ port, host: config.host, db: config.dbPath, base_url: config.baseUrl, group_commit: config.groupCommit }, 'dispatch server ready')
  return {
    async stop() {
      const complete = await app.close()
      db.close()
      return complete ? 0 : EXIT.shutdownTimeout
    },
  }
}

// SIGTERM (docker stop, systemd, Kubernetes) and SIGINT (Ctrl-C, or npm forwarding it): drain, then
// exit 0; exit 70 when SHUTDOWN_TIMEOUT_MS ran out. A second signal does not cut the drain short:
// the timer below is the bound, so a supervisor's own kill timeout should be a little longer.
let stopping = false
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (stopping) return
    stopping = true
    log.info({ sig }, 'shutting down')
    // The last resort should the stop itself hang (it is bounded by the same timeout inside).
    setTimeout(() => fatal(new StartupError(EXIT.shutdownTimeout, 'shutdown did not finish in time')), config.shutdownTimeoutMs + 5_000).unref()
    running.stop().then(
      (code) => process.exit(code),
      (err: unknown) => { process.stderr.write(`dispatch: shutdown failed: ${(err as Error).message}\n`); process.exit(1) },
    )
  })
}
