#!/usr/bin/env node
/**
 * Compile the server's TypeScript to JavaScript ahead of time (issue 19 item 4: cold start). Loading
 * through tsx compiles ~400 files at every start (about 1.5 s here); the compiled tree starts in a
 * fraction of that. One file in, one file out (no bundling), ES modules, relative `.ts` import
 * specifiers rewritten to `.js`; the output mirrors the tree under `dist/` (dist/src/main.js), and the
 * files the code reads next to itself (migrations, templates, themes, page assets) are copied beside
 * it, so every `new URL('./…', import.meta.url)` still finds its file. What lives outside src/
 * (README.md, docs/, package.json, node_modules) is resolved from the project root (src/root.ts).
 *
 *   node tools/build.mjs            build (always)
 *   node tools/build.mjs --if-stale build only when the sources differ from the last build's (npm start)
 *   node tools/build.mjs --out <dir> build into another folder directly in the project root
 *   node tools/build.mjs --check    build nothing; exit 78 with one line when dist/ is not the build of
 *                                   these sources (deploy/dispatch.service runs it before the server: the
 *                                   code folder is read-only to the service, so it cannot rebuild itself)
 *
 * esbuild is the same compiler tsx uses at run time (it comes with tsx), so the compiled code is
 * what the tests run. Type checking stays `npm run typecheck`.
 *
 * The browser code (src/browser/: the dashboard's modules, the kitchen screen's and the tracking page's
 * scripts; issue 33 item 4) is TypeScript too, compiled here for the browser instead of for node:
 * `browserCode()` is the one place that says how, used by the build (dist/src/browser/*.js) and by a
 * server running from its TypeScript sources, which has no build to read (src/http/pages/browser-code.ts).
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
/** What is compiled: the server and the CLI. Bench, tests and tools keep running through tsx. */
const SOURCES = ['src']
/** Inputs that change the output besides the sources themselves (paths from the root). */
const INPUTS = ['tsconfig.json', 'package.json', 'tools/build.mjs']
const STAMP = '.build-stamp'

export const DEFAULT_OUT = join(ROOT, 'dist')

function walk(dir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) walk(p, out)
    else if (e.isFile()) out.push(p)
  }
  return out
}

const sourceFiles = () => SOURCES.flatMap((d) => walk(join(ROOT, d)))
const isTs = (f) => f.endsWith('.ts') && !f.endsWith('.d.ts')

/** Code that runs in the browser, type-checked with the DOM library (src/browser/tsconfig.json). */
export const BROWSER_DIR = join(ROOT, 'src', 'browser')
const isBrowser = (f) => f.startsWith(BROWSER_DIR + '/')

/**
 * The browser code as JavaScript, `{ 'dashboard/app.js': '…', 'kds.js': '…' }` (paths under
 * src/browser/). One file in, one file out, like the server: the dashboard's files stay ES modules
 * importing each other (`./core.js`; the page tags them by content, src/http/pages/dashboard/assets.ts);
 * the kitchen screen's and the tracking page's scripts are inlined into their pages as classic
 * scripts, so each becomes one function run at once. Imports from the server are types only
 * (ESLint: consistent-type-imports) and vanish here.
 */
export async function browserCode(files = walk(BROWSER_DIR).filter(isTs)) {
  const { build } = await import('esbuild')
  const out = {}
  for (const [format, entries] of [['esm', files.filter((f) => f.includes('/dashboard/'))], ['iife', files.filter((f) => !f.includes('/dashboard/'))]]) {
    if (entries.length === 0) continue
    const result = await build({
      absWorkingDir: ROOT,
      entryPoints: entries,
      outdir: BROWSER_DIR,
      outbase: BROWSER_DIR,
      bundle: false,
      format,
      platform: 'browser',
      target: 'es2022',
      tsconfig: join(BROWSER_DIR, 'tsconfig.json'),
      write: false,
      logLevel: 'warning',
    })
    for (const f of result.outputFiles) out[relative(BROWSER_DIR, f.path)] = f.text
  }
  return out
}

/**
 * A digest of every input: the names and contents of the sources, the compiler options and this
 * script. Contents, not modification times: a checkout, an unpacked archive or a copy that keeps
 * old times cannot leave a stale build behind. About 2 MB read and hashed: ~10 ms.
 */
function digest(files) {
  const h = createHash('sha256')
  for (const f of [...files.map((x) => relative(ROOT, x)).sort(), ...INPUTS]) {
    h.update(`${f}\0`)
    h.update(readFileSync(join(ROOT, f)))
    h.update('\0')
  }
  return h.digest('hex')
}

/** True when `out` holds the build of exactly these sources (its stamp is their digest). */
export function upToDate(out = DEFAULT_OUT, files = sourceFiles()) {
  const stamp = join(out, STAMP)
  return existsSync(stamp) && readFileSync(stamp, 'utf8') === digest(files)
}

/** `from './x.ts'`, `import('./x.ts')`, `export … from '../y.ts'` → `.js`; bare package names are left alone. */
const RELATIVE_TS = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}\/[^"'\n]*?)\.ts\2/g
export const rewriteImports = (code) => code.replace(RELATIVE_TS, (_m, head, q, path) => `${head}${q}${path}.js${q}`)

/** Compile into `out` unless `ifStale` and it is up to date; true when it built. */
export async function buildDist({ out = DEFAULT_OUT, ifStale = false, quiet = false } = {}) {
  const files = sourceFiles()
  if (ifStale && upToDate(out, files)) return false
  const OUT = resolve(out)
  // src/root.ts finds the project root as the parent of the output folder (dist/src/root.js → ../../).
  if (dirname(OUT) !== ROOT) throw new Error(`the output folder must be directly inside ${ROOT}, not ${OUT}`)
  const t0 = performance.now()
  // The digest of what is read now: a source saved while this build runs makes the next start rebuild.
  const inputs = digest(files)
  const ts = files.filter((f) => isTs(f) && !isBrowser(f))
  const browser = files.filter((f) => isTs(f) && isBrowser(f))
  // Loaded only when there is something to build: the up-to-date check of `npm start` stays a few ms.
  const { build } = await import('esbuild')
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ts,
    outdir: OUT,
    outbase: ROOT,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    tsconfig: join(ROOT, 'tsconfig.json'),
    write: false,
    logLevel: 'warning',
  })
  // A server may be running from this folder and load a module lazily at any time: every file is
  // replaced atomically (write beside, rename over), unchanged ones are left alone, and only files
  // no source produces any more are removed at the end.
  // No stamp while the folder is being changed: an interrupted build is rebuilt by the next start.
  rmSync(join(OUT, STAMP), { force: true })
  const produced = new Set([join(OUT, STAMP)])
  const put = (to, data) => {
    produced.add(to)
    try { if (readFileSync(to).equals(Buffer.from(data))) return } catch { /* new file */ }
    mkdirSync(dirname(to), { recursive: true })
    const tmp = `${to}.${process.pid}.tmp`
    writeFileSync(tmp, data)
    renameSync(tmp, to)
  }
  for (const f of result.outputFiles) put(f.path, f.path.endsWith('.js') ? rewriteImports(f.text) : f.contents)
  for (const [name, code] of Object.entries(await browserCode(browser))) put(join(OUT, relative(ROOT, BROWSER_DIR), name), code)
  // Everything else under src/ (SQL migrations, liquid themes, page HTML/CSS/JS) is read at run time.
  let copied = 0
  for (const f of files) {
    if (isTs(f)) continue
    put(join(OUT, relative(ROOT, f)), readFileSync(f))
    copied++
  }
  for (const f of walk(OUT)) if (!produced.has(f)) rmSync(f)
  writeFileSync(join(OUT, STAMP), inputs)
  const ms = performance.now() - t0
  if (!quiet) process.stderr.write(`build: ${ts.length} modules compiled, ${browser.length} browser scripts, ${copied} assets copied to ${relative(ROOT, OUT) || '.'}/ in ${ms.toFixed(0)} ms\n`)
  return true
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const outArg = args.indexOf('--out')
  const out = outArg >= 0 ? resolve(args[outArg + 1]) : DEFAULT_OUT
  if (args.includes('--check')) {
    if (!upToDate(out)) {
      process.stderr.write(`dispatch: ${relative(ROOT, out) || '.'}/ is not the build of these sources; run \`npm run build\` after updating the code\n`)
      process.exit(78)
    }
    process.exit(0)
  }
  buildDist({ ifStale: args.includes('--if-stale'), out }).catch((err) => {
    process.stderr.write(`build failed: ${err?.stack ?? err}\n`)
    process.exit(1)
  })
}
