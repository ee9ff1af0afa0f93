/** HTML text and attribute escaping for every server-rendered page (one copy; themes escape in src/themes/engine.ts). */
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** `s` as text safe in HTML content and quoted attributes; null and undefined become ''. */
export const esc = (s: unknown): string => String(s ?? '').replace(/[&<>"']/g, (c) => ENTITIES[c]!)

/** JSON safe inside a <script> element (no `</script>`, no HTML comment openers). */
export const scriptJson = (x: unknown): string => JSON.stringify(x).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026')
