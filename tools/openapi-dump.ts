/**
 * Print the OpenAPI document of the live route table (issue 20 item 7) without starting a server:
 * `node --import tsx tools/openapi-dump.ts [out.json]`. `npm run lint:openapi` lints what this
 * writes and `npm run check:client` generates the example client's types from it.
 */
import { writeFileSync } from 'node:fs'
import { loadConfig } from '../src/config.ts'
import { allRoutes } from '../src/http/routes/index.ts'
import { buildOpenApi } from '../src/http/openapi.ts'

// The document only needs the addresses from the configuration; the environment's own settings
// (a real SITE_URL) are used when present, otherwise the defaults.
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' })
const json = `${JSON.stringify(buildOpenApi(allRoutes(), config), null, 2)}\n`
const out = process.argv[2]
if (out) writeFileSync(out, json)
else process.stdout.write(json)
