/**
 * Section schemas (issue 15 item 1): the JSON in a `{% schema %}…{% endschema %}` tag, in the
 * section-schema convention of hosted store platforms — `name`, `settings: [{type, id, label,
 * default, …}]`, `blocks`, `max_blocks`, `presets`. Extraction keeps line numbers so every
 * problem points at the file and line an author must fix.
 */
import { SETTING_TYPES } from './reference.ts'
import type { Problem } from './problems.ts'

export interface SettingOption { value: string; label: string }

export interface Setting {
  type: string
  id?: string
  label?: string
  default?: unknown
  info?: string
  options?: SettingOption[]
  min?: number
  max?: number
  step?: number
  [k: string]: unknown
}

export interface BlockSchema { type: string; name: string; settings?: Setting[]; limit?: number }
export interface Preset { name: string; settings?: Record<string, unknown>; blocks?: Array<{ type: string; settings?: Record<string, unknown> }> }

export interface SectionSchema {
  name: string
  tag?: string
  class?: string
  settings?: Setting[]
  blocks?: BlockSchema[]
  max_blocks?: number
  presets?: Preset[]
}

/** The raw schema text of a file and the line its JSON starts on, or null when it has none. */
export interface RawSchema { json: string; line: number; count: number }

const SCHEMA_RE = /\{%-?\s*schema\s*-?%\}([\s\S]*?)\{%-?\s*endschema\s*-?%\}/g
const lineAt = (text: string, index: number) => text.slice(0, index).split('\n').length

export function extractSchema(source: string): RawSchema | null {
  const matches = [...source.matchAll(SCHEMA_RE)]
  if (matches.length === 0) return null
  const m = matches[0]!
  const start = m.index + m[0].indexOf('%}') + 2
  return { json: m[1]!, line: lineAt(source, start), count: matches.length }
}

/** Line of a JSON.parse error inside the schema text (Node names the character position). */
function jsonErrorLine(raw: RawSchema, err: Error): number {
  const pos = /position (\d+)/.exec(err.message)
  if (!pos) return raw.line
  return raw.line + raw.json.slice(0, Number(pos[1])).split('\n').length - 1
}

/** Line of the nth occurrence (0 = first) of a needle in the schema, for pointing at a setting. */
function lineOf(raw: RawSchema, needle: RegExp, nth = 0): number {
  const m = [...raw.json.matchAll(new RegExp(needle.source, 'g'))][nth] ?? [...raw.json.matchAll(new RegExp(needle.source, 'g'))][0]
  return m ? raw.line + raw.json.slice(0, m.index).split('\n').length - 1 : raw.line
}

const TYPES = new Map(SETTING_TYPES.map((t) => [t.type, t]))
const ID_RE = /^[a-z][a-z0-9_]*$/
const COLOR_RE = /^#[0-9a-fA-F]{6}$/
const TOP_KEYS = new Set(['name', 'tag', 'class', 'settings', 'blocks', 'max_blocks', 'presets'])
const SETTING_KEYS = new Set(['type', 'id', 'label', 'default', 'info'])
const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x)
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Is `value` a valid value of `setting` (the same rule for a default and for an owner's value)? */
export function valueFits(setting: Setting, value: unknown): string | null {
  const spec = TYPES.get(setting.type)
  if (!spec || spec.value === null) return null
  switch (setting.type) {
    case 'text': case 'textarea':
      return typeof value === 'string' ? null : 'must be a string'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'must be a number'
    case 'range': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number'
      const { min = -Infinity, max = Infinity, step } = setting
      if (value < min || value > max) return `must be between ${min} and ${max}`
      if (typeof step === 'number' && step > 0 && Math.abs(((value - (Number.isFinite(min) ? min : 0)) / step) - Math.round((value - (Number.isFinite(min) ? min : 0)) / step)) > 1e-9) return `must be on a step of ${step}`
      return null
    }
    case 'checkbox':
      return typeof value === 'boolean' ? null : 'must be true or false'
    case 'select': case 'radio':
      return typeof value === 'string' && (setting.options ?? []).some((o) => o.value === value) ? null : 'must be one of the option values'
    case 'color':
      return typeof value === 'string' && COLOR_RE.test(value) ? null : 'must be a colour "#rrggbb"'
    case 'url':
      return typeof value === 'string' && (/^\/(?!\/)/.test(value) || /^https:\/\/[^\s"'<>]+$/.test(value)) ? null : 'must be a path starting with "/" or an https:// address'
    default:
      return null
  }
}

/** The value a setting has when nobody set one. */
export function defaultOf(s: Setting): unknown {
  if (s.default !== undefined) return s.default
  switch (TYPES.get(s.type)?.value) {
    case 'boolean': return false
    case 'number': return s.type === 'range' ? (s.min ?? 0) : 0
    case 'string': return s.type === 'select' || s.type === 'radio' ? (s.options?.[0]?.value ?? '') : ''
    default: return null
  }
}

function checkSettings(file: string, raw: RawSchema, settings: unknown, where: string, out: Problem[]): void {
  if (settings === undefined) return
  if (!Array.isArray(settings)) {
    out.push({ file, line: raw.line, code: 'schema_invalid', message: `${where}settings must be an array` })
    return
  }
  const seen = new Set<string>()
  settings.forEach((s: unknown, i) => {
    const at = `${where}settings[${i}]`
    if (!isObj(s)) {
      out.push({ file, line: raw.line, code: 'schema_invalid', message: `${at} must be an object` })
      return
    }
    const line = typeof s.id === 'string' ? lineOf(raw, new RegExp(`"id"\\s*:\\s*"${esc(s.id)}"`)) : raw.line
    const spec = typeof s.type === 'string' ? TYPES.get(s.type) : undefined
    if (!spec) {
      out.push({ file, line, code: 'unknown_setting_type', message: `${at}: unknown setting type ${JSON.stringify(s.type)}; one of ${[...TYPES.keys()].join(', ')}` })
      return
    }
    for (const k of Object.keys(s)) {
      if (!SETTING_KEYS.has(k) && !spec.attributes.includes(k)) out.push({ file, line, code: 'schema_invalid', message: `${at}: "${k}" is not an attribute of a ${spec.type} setting` })
    }
    if (spec.value === null) return
    if (typeof s.id !== 'string' || !ID_RE.test(s.id)) {
      out.push({ file, line, code: 'schema_invalid', message: `${at}: id must match ${ID_RE.source}` })
      return
    }
    if (seen.has(s.id)) out.push({ file, line: lineOf(raw, new RegExp(`"id"\\s*:\\s*"${esc(s.id)}"`), 1), code: 'duplicate_setting_id', message: `${where}setting id "${s.id}" is declared twice` })
    seen.add(s.id)
    if (typeof s.label !== 'string' || s.label === '') out.push({ file, line, code: 'schema_invalid', message: `${at} (${s.id}): label is required` })
    if (s.type === 'select' || s.type === 'radio') {
      const ok = Array.isArray(s.options) && s.options.length > 0 && s.options.every((o) => isObj(o) && typeof o.value === 'string' && typeof o.label === 'string')
      if (!ok) { out.push({ file, line, code: 'schema_invalid', message: `${at} (${s.id}): options must be a non-empty array of {value, label}` }); return }
    }
    if (s.type === 'range') {
      const { min, max, step } = s
      if (typeof min !== 'number' || typeof max !== 'number' || typeof step !== 'number' || !(min < max) || !(step > 0)) {
        out.push({ file, line, code: 'schema_invalid', message: `${at} (${s.id}): range needs numbers min < max and step > 0` })
        return
      }
    }
    if (s.default !== undefined) {
      const why = valueFits(s as Setting, s.default)
      if (why) out.push({ file, line, code: 'bad_default', message: `${at} (${s.id}): default ${JSON.stringify(s.default)} ${why}` })
    }
  })
}

/** Parse and check a schema; problems are appended to `out`; the schema is returned when usable. */
export function parseSchema(file: string, raw: RawSchema, out: Problem[]): SectionSchema | null {
  if (raw.count > 1) out.push({ file, line: raw.line, code: 'schema_invalid', message: 'a file may have only one {% schema %} tag' })
  let data: unknown
  try {
    data = JSON.parse(raw.json)
  } catch (err) {
    out.push({ file, line: jsonErrorLine(raw, err as Error), code: 'schema_json', message: `schema is not valid JSON: ${(err as Error).message}` })
    return null
  }
  if (!isObj(data)) {
    out.push({ file, line: raw.line, code: 'schema_invalid', message: 'schema must be a JSON object' })
    return null
  }
  const before = out.length
  for (const k of Object.keys(data)) if (!TOP_KEYS.has(k)) out.push({ file, line: lineOf(raw, new RegExp(`"${esc(k)}"\\s*:`)), code: 'schema_invalid', message: `unknown schema key "${k}"; known: ${[...TOP_KEYS].join(', ')}` })
  if (typeof data.name !== 'string' || data.name === '') out.push({ file, line: raw.line, code: 'schema_invalid', message: 'schema name is required' })
  checkSettings(file, raw, data.settings, '', out)
  const blockTypes = new Set<string>()
  if (data.blocks !== undefined) {
    if (!Array.isArray(data.blocks)) out.push({ file, line: raw.line, code: 'schema_invalid', message: 'blocks must be an array' })
    else data.blocks.forEach((b: unknown, i) => {
      if (!isObj(b) || typeof b.type !== 'string' || !ID_RE.test(b.type) || typeof b.name !== 'string') {
        out.push({ file, line: raw.line, code: 'schema_invalid', message: `blocks[${i}] needs a type (${ID_RE.source}) and a name` })
        return
      }
      if (blockTypes.has(b.type)) out.push({ file, line: lineOf(raw, new RegExp(`"type"\\s*:\\s*"${esc(b.type)}"`)), code: 'schema_invalid', message: `block type "${b.type}" is declared twice` })
      blockTypes.add(b.type)
      checkSettings(file, raw, b.settings, `block "${b.type}" `, out)
    })
  }
  if (data.max_blocks !== undefined && !(Number.isInteger(data.max_blocks) && (data.max_blocks as number) >= 1)) {
    out.push({ file, line: lineOf(raw, /"max_blocks"/), code: 'schema_invalid', message: 'max_blocks must be an integer ≥ 1' })
  }
  if (data.presets !== undefined) {
    if (!Array.isArray(data.presets)) out.push({ file, line: raw.line, code: 'schema_invalid', message: 'presets must be an array' })
    else data.presets.forEach((p: unknown, i) => {
      if (!isObj(p) || typeof p.name !== 'string') { out.push({ file, line: raw.line, code: 'schema_invalid', message: `presets[${i}] needs a name` }); return }
      const blocks = p.blocks ?? []
      if (!Array.isArray(blocks)) { out.push({ file, line: raw.line, code: 'schema_invalid', message: `presets[${i}].blocks must be an array` }); return }
      for (const b of blocks) {
        if (!isObj(b) || typeof b.type !== 'string' || !blockTypes.has(b.type)) out.push({ file, line: lineOf(raw, /"presets"/), code: 'schema_invalid', message: `presets[${i}] uses block type ${JSON.stringify(isObj(b) ? b.type : b)} that the schema does not declare` })
      }
      if (typeof data.max_blocks === 'number' && blocks.length > data.max_blocks) out.push({ file, line: lineOf(raw, /"presets"/), code: 'schema_invalid', message: `presets[${i}] has more blocks than max_blocks (${data.max_blocks})` })
    })
  }
  return out.length === before ? (data as unknown as SectionSchema) : null
}

/** Setting ids a schema declares (for strict `section.settings.x` / `settings.x` checks). */
export const settingIds = (settings: readonly Setting[] | undefined): Set<string> =>
  new Set((settings ?? []).filter((s) => typeof s.id === 'string').map((s) => s.id!))

/**
 * Resolve stored values over the defaults: unknown keys are dropped and a value that does not fit
 * its setting falls back to the default, so a stale value never breaks a render.
 */
export function resolveSettings(settings: readonly Setting[] | undefined, values: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const s of settings ?? []) {
    if (!s.id) continue
    const v = values?.[s.id]
    out[s.id] = v !== undefined && valueFits(s, v) === null ? v : defaultOf(s)
  }
  return out
}

/** Problems with an owner's values for a schema (for the owner routes that set section settings). */
export function checkValues(schema: SectionSchema, values: Record<string, unknown>): Array<{ id: string; message: string }> {
  const byId = new Map((schema.settings ?? []).filter((s) => s.id).map((s) => [s.id!, s]))
  const out: Array<{ id: string; message: string }> = []
  for (const [id, v] of Object.entries(values)) {
    const s = byId.get(id)
    if (!s) { out.push({ id, message: 'no such setting' }); continue }
    const why = valueFits(s, v)
    if (why) out.push({ id, message: why })
  }
  return out
}
