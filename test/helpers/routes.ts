/** The live route table as tests see it, and filling `{param}` paths with ids. */
import { allRoutes } from '../../src/http/routes/index.ts'
import type { Route } from '../../src/http/route.ts'
import { fullPath } from '../../src/http/server.ts'

export type { Route }

export const liveRoutes = (): Route[] => allRoutes()
export const ownerRoutes = (): Route[] => allRoutes().filter((r) => r.auth === 'owner')

export const paramsOf = (path: string): string[] => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!)

/** Replace every `{name}` with `values[name]`, or `fallback` when the table has no value for it. */
export function fill(path: string, values: Record<string, string | number>, fallback?: string | number): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = values[name] ?? fallback
    if (v === undefined) throw new Error(`no value for {${name}} in ${path}`)
    return encodeURIComponent(String(v))
  })
}

/** Absolute URL of a route under a server's site root. */
export const urlOf = (site: string, r: Route, values: Record<string, string | number>, fallback?: string | number): string =>
  site + fill(fullPath(r), values, fallback)

export const label = (r: Route): string => `${r.method} ${fullPath(r)}`
