/**
 * Keep a request in flight without a clock: the committer's next durable write waits until
 * `open()`, which also puts the committer back (and runs at the test's end anyway). `held` settles
 * when that write was asked for: the request is priced and waiting for its commit. Only the next
 * write is held; writes after it go through (a refused retry writes nothing; other requests may).
 * `from` narrows it to writes asked for by one module (a path fragment of the caller's stack).
 * Keep the hold short: the store actor's ask gives up after 10 s (a 500 for the held request).
 */
import type { Test } from 'tap'
import type { Committer } from '../../src/storage/commit.ts'
import type { Db } from '../../src/storage/db.ts'

export function holdNextCommit(t: Test, committer: Committer, from?: string): { held: Promise<void>; open: () => void } {
  const write = committer.write.bind(committer)
  let started!: () => void
  let release!: () => void
  const held = new Promise<void>((r) => { started = r })
  const gate = new Promise<void>((r) => { release = r })
  committer.write = <T>(fn: (db: Db) => T) => {
    // `from`: only a write asked for by that module is held (e.g. the store actor's order insert); a
    // background write in between (a reaction to an earlier subtest's order) goes through untouched.
    if (from !== undefined && !(new Error().stack ?? '').includes(from)) return write(fn)
    committer.write = write
    started()
    return gate.then(() => write(fn))
  }
  const open = () => { release(); committer.write = write }
  t.teardown(open)
  return { held, open }
}
