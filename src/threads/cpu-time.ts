/**
 * CPU time of one thread, for budgets that must mean work done rather than time passed (the theme
 * pool's jobs run at a lowered priority, so on a busy machine a small theme can wait far longer than
 * its budget without doing more work). Linux only (`/proc/<pid>/task/<tid>/stat`); elsewhere `null`,
 * and callers fall back to wall time.
 */
import { readFileSync, readlinkSync } from 'node:fs'

/** USER_HZ, the unit of the `stat` file's times: 100 on every Linux architecture Node runs on. */
const TICKS_PER_SECOND = 100

/** This thread's id as the kernel knows it, or null where there is no /proc. */
export function currentThreadId(): number | null {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    return Number.isInteger(tid) && tid > 0 ? tid : null
  } catch {
    return null
  }
}

/** User + system CPU time of thread `tid` of this process in ms (10 ms steps), or null if unreadable. */
export function threadCpuMs(tid: number): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1')
    // Fields after the command name (which may hold spaces and parentheses): state is the first, utime the 12th, stime the 13th.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(rest[11]) + Number(rest[12])
    return Number.isFinite(ticks) ? ticks * (1000 / TICKS_PER_SECOND) : null
  } catch {
    return null
  }
}

/**
 * A clock in ms that advances with this thread's CPU time instead of wall time: exact each time it
 * reads /proc (at most every `refreshMs` of wall time, so a hot loop that asks often costs nothing
 * measurable), advanced by wall time in between (so it over-counts by at most `refreshMs`). Null
 * where thread CPU time cannot be read.
 */
export function threadCpuClock(wallNow: () => number, refreshMs = 20): (() => number) | null {
  const tid = currentThreadId()
  const first = tid === null ? null : threadCpuMs(tid)
  if (tid === null || first === null) return null
  let readAt = wallNow()
  let cpu = first
  return () => {
    const wall = wallNow()
    if (wall - readAt < refreshMs) return cpu + (wall - readAt)
    readAt = wall
    cpu = threadCpuMs(tid) ?? cpu + refreshMs
    return cpu
  }
}
