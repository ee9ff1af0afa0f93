/**
 * The context a bench result is only meaningful with: CPU, cores, load average, Node, git commit.
 * Recorded in every result JSON and printed in the run's markdown summary.
 */
import { execFileSync } from 'node:child_process'
import { cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** `abc1234` or `abc1234+dirty` (uncommitted changes), or null outside a git checkout. */
export function gitCommit(cwd = ROOT): string | null {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    return sha ? `${sha}${dirty ? '+dirty' : ''}` : null
  } catch {
    return null
  }
}

export interface MachineInfo {
  node: string
  cpus: number
  cpuModel: string
  loadavg: number[]
  commit: string | null
}

export function machineInfo(): MachineInfo {
  return { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model?.trim() ?? 'unknown', loadavg: loadavg(), commit: gitCommit() }
}
