/**
 * The load hook of tools/test-loader.mjs (it runs in Node's loader thread). A `.ts` file is compiled
 * by esbuild once per content: the cache (os.tmpdir()/dispatch-test-ts-<uid>/) is keyed by the file's
 * path, its bytes, esbuild's version and the options, each entry written beside and renamed over, so
 * parallel test processes never read half a file.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { transformSync, version } from 'esbuild'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const { compilerOptions } = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8'))
const OPTIONS = { loader: 'ts', format: 'esm', platform: 'node', target: 'node20', sourcemap: 'inline', tsconfigRaw: { compilerOptions } }
const SALT = `${version}\0${JSON.stringify(OPTIONS)}\0`
const CACHE = join(tmpdir(), `dispatch-test-ts-${process.getuid?.() ?? 'user'}`)
mkdirSync(CACHE, { recursive: true })

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context)
  const path = fileURLToPath(url)
  const source = readFileSync(path, 'utf8')
  const entry = join(CACHE, createHash('sha1').update(SALT).update(path).update('\0').update(source).digest('hex'))
  let code
  try {
    code = readFileSync(entry, 'utf8')
  } catch {
    code = transformSync(source, { ...OPTIONS, sourcefile: path }).code
    const beside = `${entry}.${process.pid}.tmp`
    writeFileSync(beside, code)
    renameSync(beside, entry)
  }
  return { format: 'module', source: code, shortCircuit: true }
}
