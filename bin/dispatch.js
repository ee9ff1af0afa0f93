#!/usr/bin/env node
// The `dispatch` operator CLI. Runs the compiled JavaScript (`npm run build`, dist/) when it is there
// and up to date with the sources, else the TypeScript sources through tsx: a checkout never runs
// stale code, and an image that carries only dist/ (the Dockerfile) runs it without a check.
import { existsSync } from 'node:fs'

const dist = new URL('../dist/src/cli.js', import.meta.url)
const hasSources = existsSync(new URL('../src/cli.ts', import.meta.url))
let compiled = existsSync(dist)
if (compiled && hasSources) {
  // A few milliseconds: stats of the sources against the build's stamp (no compiler is loaded).
  const { upToDate } = await import('../tools/build.mjs')
  compiled = upToDate()
}
let main
if (compiled) {
  ({ main } = await import(dist.href))
} else {
  const { register } = await import('tsx/esm/api')
  register()
  ;({ main } = await import('../src/cli.ts'))
}
main()
