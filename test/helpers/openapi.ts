/** Reading the OpenAPI document in tests: follow a `$ref` into `components`. */
type Doc = Record<string, any>

/** `x`, or what its `$ref` (`#/components/...`) points at. */
export function deref(doc: Doc, x: any): any {
  if (!x?.$ref) return x
  return (x.$ref as string).replace(/^#\//, '').split('/').reduce((o: any, k) => o?.[k], doc)
}

/** The documented response of an operation for a status (`404`, or its `4XX` class as a fallback). */
export function responseOf(doc: Doc, op: any, status: number | string): any {
  const s = String(status)
  return deref(doc, op?.responses?.[s] ?? op?.responses?.[`${s[0]}XX`])
}
