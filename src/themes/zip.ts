/**
 * Theme files from a zip archive (issue 15: owners upload a theme as a zip). A minimal reader of
 * the central directory (APPNOTE.TXT §4.3), stored and deflated entries only, with node's zlib: no
 * package needed. Bounded before anything is inflated: entry count, each entry's declared and
 * actual size (a zip bomb stops at the limit), so the limits of THEME_LIMITS hold as for JSON.
 */
import { inflateRawSync } from 'node:zlib'
import { ApiError } from '../errors.ts'
import { THEME_LIMITS } from './reference.ts'
import type { ThemeFiles } from './compile.ts'

const EOCD = 0x06054b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50
const THEME_ROOTS = new Set(['layout', 'templates', 'sections'])

const refuse = (message: string) => new ApiError('validation_failed', message, { files: [message] })
const utf8 = new TextDecoder('utf-8', { fatal: true })

function endOfCentralDirectory(buf: Buffer): number {
  // The record is 22 bytes plus a comment of at most 65535.
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) if (buf.readUInt32LE(i) === EOCD) return i
  throw refuse('The body is not a zip archive.')
}

/** The text files of a zip; one top-level folder around layout/, templates/, sections/ is removed. */
export function themeFilesFromZip(buf: Buffer): ThemeFiles {
  const end = endOfCentralDirectory(buf)
  const count = buf.readUInt16LE(end + 10)
  let at = buf.readUInt32LE(end + 16)
  if (count > THEME_LIMITS.maxFiles * 2) throw refuse(`A theme has at most ${THEME_LIMITS.maxFiles} files.`)
  const files: Record<string, string> = {}
  let total = 0
  for (let n = 0; n < count; n++) {
    if (at + 46 > buf.length || buf.readUInt32LE(at) !== CENTRAL) throw refuse('The zip archive is damaged (central directory).')
    const flags = buf.readUInt16LE(at + 8)
    const method = buf.readUInt16LE(at + 10)
    const packed = buf.readUInt32LE(at + 20)
    const size = buf.readUInt32LE(at + 24)
    const nameLen = buf.readUInt16LE(at + 28)
    const local = buf.readUInt32LE(at + 42)
    const name = buf.subarray(at + 46, at + 46 + nameLen).toString('utf8')
    at += 46 + nameLen + buf.readUInt16LE(at + 30) + buf.readUInt16LE(at + 32)
    if (name.endsWith('/') || name.startsWith('__MACOSX/') || /(^|\/)\.[^/]*$/.test(name)) continue // folders, Finder and dot files
    if (flags & 1) throw refuse(`${name}: encrypted entries are not supported.`)
    if (method !== 0 && method !== 8) throw refuse(`${name}: only stored and deflated entries are supported.`)
    if (size > THEME_LIMITS.maxFileBytes) throw refuse(`${name}: a file has at most ${THEME_LIMITS.maxFileBytes} bytes.`)
    if ((total += size) > THEME_LIMITS.maxTotalBytes) throw refuse(`A theme has at most ${THEME_LIMITS.maxTotalBytes} bytes of files.`)
    if (local + 30 > buf.length || buf.readUInt32LE(local) !== LOCAL) throw refuse(`${name}: the zip archive is damaged (local header).`)
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28)
    if (start + packed > buf.length) throw refuse(`${name}: the zip archive is truncated.`)
    const raw = buf.subarray(start, start + packed)
    let data: Buffer
    try {
      data = method === 0 ? raw : inflateRawSync(raw, { maxOutputLength: THEME_LIMITS.maxFileBytes })
    } catch {
      throw refuse(`${name}: cannot be inflated, or is larger than ${THEME_LIMITS.maxFileBytes} bytes.`)
    }
    if (data.length !== size) throw refuse(`${name}: the zip archive is damaged (size).`)
    try {
      files[name] = utf8.decode(data)
    } catch {
      throw refuse(`${name}: theme files are UTF-8 text.`)
    }
  }
  return stripFolder(files)
}

/** `my-theme/layout/theme.liquid` → `layout/theme.liquid` when every file shares that one folder. */
function stripFolder(files: Record<string, string>): ThemeFiles {
  const names = Object.keys(files)
  const first = names[0]?.split('/')[0]
  if (!first || THEME_ROOTS.has(first) || !names.every((p) => p.startsWith(`${first}/`))) return files
  return Object.fromEntries(names.map((p) => [p.slice(first.length + 1), files[p]!]))
}
