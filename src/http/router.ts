/** Path matching over the route table: a segment trie, `{name}` segments capture parameters. */
import type { Method, Route } from './route.ts'

interface Node {
  statics: Map<string, Node>
  param: { name: string; node: Node } | null
  routes: Map<Method, Route>
}
const newNode = (): Node => ({ statics: new Map(), param: null, routes: new Map() })

export type Match =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allowed: Method[] }
  | { kind: 'not_found' }

export class Router {
  private readonly root = newNode()

  add(fullPath: string, r: Route): void {
    let node = this.root
    for (const seg of split(fullPath)) {
      const m = /^\{(\w+)\}$/.exec(seg)
      if (m) {
        if (node.param && node.param.name !== m[1]) throw new Error(`conflicting parameter names at ${fullPath}`)
        node.param ??= { name: m[1]!, node: newNode() }
        node = node.param.node
      } else {
        let next = node.statics.get(seg)
        if (!next) node.statics.set(seg, (next = newNode()))
        node = next
      }
    }
    if (node.routes.has(r.method)) throw new Error(`duplicate route ${r.method} ${fullPath}`)
    node.routes.set(r.method, r)
  }

  match(method: string, path: string): Match {
    const params: Record<string, string> = {}
    const node = walk(this.root, split(path), 0, params)
    if (!node || node.routes.size === 0) return { kind: 'not_found' }
    const route = node.routes.get(method as Method)
    if (!route) return { kind: 'method_not_allowed', allowed: [...node.routes.keys()] }
    return { kind: 'found', route, params }
  }

  /** Methods served at a path (for CORS preflight), empty when unknown. */
  methodsAt(path: string): Method[] {
    const node = walk(this.root, split(path), 0, {})
    return node ? [...node.routes.keys()] : []
  }
}

function split(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0)
}

/** Statics win over parameters; backtrack when a static branch dead-ends. */
function walk(node: Node, segs: string[], i: number, params: Record<string, string>): Node | null {
  if (i === segs.length) return node
  const seg = segs[i]!
  const st = node.statics.get(seg)
  if (st) {
    const found = walk(st, segs, i + 1, params)
    if (found && found.routes.size > 0) return found
  }
  if (node.param) {
    let value: string
    try { value = decodeURIComponent(seg) } catch { return null }
    const found = walk(node.param.node, segs, i + 1, params)
    if (found) { params[node.param.name] = value; return found }
  }
  return null
}
