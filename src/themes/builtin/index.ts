/**
 * The built-in themes (issue 15 item 1): `classic` for restaurants (the default: `stores.template`
 * defaults to 'classic') and `market` for goods stores. Their files live next to this module and
 * are read once; they must compile without a single problem (test/unit/themes.test.ts).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { compileTheme, type CompiledTheme, type ThemeFiles } from '../compile.ts'

export const DEFAULT_THEME = 'classic'

export const BUILTIN_THEMES: Readonly<Record<string, { title: string; description: string }>> = {
  classic: { title: 'Classic', description: 'Restaurants and cafés: menu by category, dietary flags, variations and extras; warm and phone-first.' },
  market: { title: 'Market', description: 'Goods stores (grocery, retail): product grid, goods fields, quick add; clean and phone-first.' },
}

export interface BuiltinTheme {
  name: string
  files: ThemeFiles
  compiled: CompiledTheme
}

const dir = fileURLToPath(new URL('.', import.meta.url))
const cache = new Map<string, BuiltinTheme>()

function readTree(root: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of readdirSync(join(root, prefix))) {
    const rel = prefix ? `${prefix}/${name}` : name
    if (statSync(join(root, rel)).isDirectory()) Object.assign(out, readTree(root, rel))
    else if (name.endsWith('.liquid')) out[rel] = readFileSync(join(root, rel), 'utf8')
  }
  return out
}

/** A built-in theme by name, compiled on first use; undefined for an unknown name. */
export function builtinTheme(name: string): BuiltinTheme | undefined {
  if (!Object.hasOwn(BUILTIN_THEMES, name)) return undefined
  let t = cache.get(name)
  if (!t) {
    const files = readTree(join(dir, name))
    const r = compileTheme(files)
    if (!r.theme) throw new Error(`built-in theme ${name} does not compile: ${JSON.stringify(r.problems)}`)
    t = { name, files, compiled: r.theme }
    cache.set(name, t)
  }
  return t
}
