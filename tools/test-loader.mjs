/**
 * The TypeScript loader of the test processes (package.json "tap" → "node-arg": `--import=./tools/test-loader.mjs`).
 *
 * Why not tsx there: the suite is CPU-bound on a 2-core machine and every one of its ~275 files is a
 * process that loads ~470 modules of src/ plus tap, so what a loader costs per module is paid ~130,000
 * times a run. tsx registers a resolve and a load hook for ES modules (its resolver looks for
 * tsconfig paths and extension-less files on every import) and patches CommonJS `require` too (every
 * `require` inside playwright-core, pino, undici…); a test file that starts a server spent ~2.0 s of
 * CPU before its first assertion with tsx, ~1.7 s with this loader (README.md "Quick start").
 *
 * What it does: only a load hook, only for `file:` URLs ending in `.ts` (imports here always name the
 * `.ts` file, tsconfig allowImportingTsExtensions, so Node's own resolver finds them). The file is
 * compiled by esbuild, the compiler tsx and the build (tools/build.mjs) use, with an inline source map
 * (stack traces point at the TypeScript), and the output is kept in a cache keyed by the source's
 * bytes, so a test run compiles a file once, not once per process. Everything else goes to Node as is.
 *
 * Other processes keep tsx: the servers tests start as children (test/helpers/process.ts) and the
 * worker threads (src/threads/spawn.ts) run as the product does from its sources.
 */
import { register } from 'node:module'

register('./test-loader-hooks.mjs', import.meta.url)
