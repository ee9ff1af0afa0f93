/**
 * Proof-of-delivery photos on disk (docs/drivers.md "Proof of delivery"): files under the data
 * directory, next to the database; the `deliveries` row names the file by a relative path.
 */
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'

/** Where uploaded files live: next to the database (`:memory:` databases use the temp directory). */
export function dataDir(dbPath: string): string {
  return dbPath === ':memory:' ? join(tmpdir(), 'dispatch-data') : dirname(resolve(dbPath))
}

export const photoPath = (dbPath: string, rel: string): string => join(dataDir(dbPath), rel)

/**
 * Write a photo durably and return its relative path: written, fsynced and renamed before the
 * order references it, so a crash never leaves the order naming a missing or partial file.
 */
export async function savePodPhoto(dbPath: string, orderId: number, bytes: Buffer, type: string): Promise<string> {
  const rel = join('pod', `${orderId}-${randomBytes(12).toString('hex')}.${type.slice('image/'.length)}`)
  const full = photoPath(dbPath, rel)
  await mkdir(dirname(full), { recursive: true })
  const tmp = `${full}.tmp`
  const fh = await open(tmp, 'w', 0o600)
  try {
    await fh.writeFile(bytes)
    await fh.sync()
  } finally {
    await fh.close()
  }
  await rename(tmp, full)
  return rel
}

/** The photo's bytes, or null when the file is gone. */
export function readPodPhoto(dbPath: string, rel: string): Promise<Buffer | null> {
  return readFile(photoPath(dbPath, rel)).catch(() => null)
}

/** Remove a photo file; a file already gone is fine. */
export async function removePodPhoto(dbPath: string, rel: string): Promise<void> {
  await unlink(photoPath(dbPath, rel)).catch(() => {})
}
