#!/usr/bin/env node
/**
 * Make tap's test runner match package.json's plugin list before `tap` runs (npm test).
 *
 * Why: tap compiles its plugins into @tapjs/test ahead of time; `npm ci` installs the default set,
 * which includes @tapjs/typescript. tap notices the difference and rebuilds, but only after it has
 * already computed the loaders for this run's test processes from the old build: on a fresh install
 * every test file of the first run also loaded @tapjs/typescript's TypeScript loader next to tsx
 * (about twice the suite's wall time in CI). Rebuilding first, only when the lists differ, fixes it.
 */
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { TapConfig } from '@tapjs/config'
import { signature } from '@tapjs/test'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const config = await TapConfig.load()
if (config.pluginSignature !== signature) {
  process.stderr.write('tap: plugins differ from the installed build; running `tap build` first\n')
  const r = spawnSync(join(root, 'node_modules', '.bin', 'tap'), ['build'], { cwd: root, stdio: 'inherit' })
  process.exit(r.status ?? 1)
}
