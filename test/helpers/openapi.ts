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

const mediaType = (type: string) => type.split(';')[0]!.trim().toLowerCase()
const mediaMatches = (listed: string, type: string) => {
  const [l, t] = [mediaType(listed), mediaType(type)]
  return l === t || (l.endsWith('/*') && t.startsWith(l.slice(0, -1)))
}

/**
 * What a fuzzer reading the document checks of one answer: the operation lists its status (by
 * number, else its class such as `4XX`); an answer with a body has a media type that response
 * lists; a redirect lists `Location`. The problem, or null when the document says what was answered.
 */
export function undocumented(doc: Doc, op: any, answer: { status: number; contentType: string | null; body: string; location?: string | null }): string | null {
  const res = responseOf(doc, op, answer.status)
  if (!res) return `${answer.status} is not listed (${Object.keys(op?.responses ?? {}).join(', ')})`
  const listed = Object.keys(res.content ?? {})
  if (answer.body.length > 0 || listed.length > 0) {
    const type = answer.contentType ?? ''
    if (!listed.some((l) => mediaMatches(l, type))) return `${answer.status} ${type || 'without a content type'} is not among ${listed.join(', ') || 'no content'}`
  }
  if (answer.location && !res.headers?.Location) return `${answer.status} with Location, which that response does not list`
  return null
}
