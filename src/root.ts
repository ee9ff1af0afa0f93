/**
 * The project root (package.json, README.md, docs/, node_modules), from the TypeScript sources
 * (src/root.ts, run through tsx) and from the compiled tree (dist/src/root.js, tools/build.mjs) alike:
 * files outside src/ are not copied into the build, so they are found from here, never relative to
 * the module that reads them.
 */
import { fileURLToPath } from 'node:url'

export const ROOT_URL = new URL(import.meta.url.endsWith('.ts') ? '../' : '../../', import.meta.url)
export const ROOT = fileURLToPath(ROOT_URL)
