/**
 * The browser code (src/browser/, TypeScript; issue 33 item 4) as the JavaScript the pages serve,
 * keyed by its path under src/browser/ with `.js`: `dashboard/app.js`, `kds.js`, `track.js`.
 *
 * The compiled server (dist/, tools/build.mjs) finds it built beside it, in dist/src/browser/. A server
 * running from its TypeScript sources (tests, tsx) has no build: it compiles the same files once, at
 * load, with the build's own `browserCode()`, so both serve the same JavaScript from one recipe.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { ROOT } from '../../root.ts'

const HERE = fileURLToPath(new URL('../../browser/', import.meta.url))

function builtFiles(dir: string, out: Record<string, string> = {}): Record<string, string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) builtFiles(p, out)
    else if (e.name.endsWith('.js')) out[relative(HERE, p)] = readFileSync(p, 'utf8')
  }
  return out
}

interface BuildTool { browserCode(): Promise<Record<string, string>> }

async function load(): Promise<Readonly<Record<string, string>>> {
  if (existsSync(join(HERE, 'kds.js'))) return builtFiles(HERE)
  const tool = await import(pathToFileURL(join(ROOT, 'tools', 'build.mjs')).href) as BuildTool
  return tool.browserCode()
}

export const BROWSER_CODE: Readonly<Record<string, string>> = await load()

/** One file's JavaScript; a missing name is a programming error, found at start. */
export function browserScript(name: string): string {
  const code = BROWSER_CODE[name]
  if (code === undefined) throw new Error(`no browser code ${name} (src/browser/${name.replace(/\.js$/, '.ts')})`)
  return code
}

/** A script inlined into its page (`<script nonce>…</script>`): it may not end the element early. */
export function inlineScript(name: string): string {
  const code = browserScript(name)
  if (/<\/script|<!--/i.test(code)) throw new Error(`src/browser/${name.replace(/\.js$/, '.ts')} cannot be inlined: it contains </script or <!--`)
  return code
}
