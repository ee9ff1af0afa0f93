#!/usr/bin/env node
// The npm registry reachable here lacks some platform-only optional packages (e.g. msgpackr-extract's
// darwin and win32 builds), so `npm install` leaves them out of package-lock.json and `npm ci` then
// refuses the lock as out of sync. This adds a stub entry (version, os, cpu, optional) for every
// missing platform package; npm ci skips them on other platforms, exactly as it would with real ones.
// Run after every `npm install`: node tools/fix-lockfile.mjs
import { readFileSync, writeFileSync } from 'node:fs'

const path = new URL('../package-lock.json', import.meta.url)
const lock = JSON.parse(readFileSync(path, 'utf8'))
const pkgs = lock.packages
const PLATFORM = /-(darwin|linux|win32|freebsd|android|openbsd|sunos|aix|netbsd)-(x64|arm64|arm|ia32|ppc64|s390x|riscv64|loong64|mips64el)(-gnu|-musl|-msvc|-gnueabihf)?$/
let added = 0
for (const [key, entry] of Object.entries(pkgs)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = key === '' ? '' : `${key}/`
    const candidates = [`${base}node_modules/${name}`, `node_modules/${name}`]
    if (candidates.some((c) => c in pkgs)) continue
    const m = PLATFORM.exec(name)
    if (!m || !/^\d+\.\d+\.\d+/.test(version)) continue
    pkgs[`node_modules/${name}`] = { version, cpu: [m[2]], license: 'MIT', optional: true, os: [m[1]] }
    added++
  }
}
lock.packages = Object.fromEntries(Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)))
writeFileSync(path, JSON.stringify(lock, null, 2) + '\n')
console.log(`fix-lockfile: added ${added} platform stub(s)`)
