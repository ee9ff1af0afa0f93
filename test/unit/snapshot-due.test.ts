/**
 * When the primary takes a snapshot (src/cluster/node.ts snapshotDue): CLUSTER_SNAPSHOT_EVERY
 * messages since the last one, and no sooner than CLUSTER_SNAPSHOT_MIN_INTERVAL_MS after the one it
 * started last — under a heavy write load the count alone would copy the whole file every few seconds.
 */
import t from 'tap'
import { snapshotDue } from '../../src/cluster/node.ts'

const base = { lastSnapshot: 1000, every: 10_000, minIntervalMs: 60_000, now: 5_000_000 }

t.test('not before CLUSTER_SNAPSHOT_EVERY messages, however long ago the last one was', async (t) => {
  t.notOk(snapshotDue({ ...base, confirmed: 10_999, lastStartedAt: null }))
  t.notOk(snapshotDue({ ...base, confirmed: 10_999, lastStartedAt: base.now - 3_600_000 }))
})

t.test('the count reached: at once for a primary that took none yet', async (t) => {
  t.ok(snapshotDue({ ...base, confirmed: 11_000, lastStartedAt: null }))
})

t.test('the count reached again within the interval: it waits for the interval', async (t) => {
  t.notOk(snapshotDue({ ...base, confirmed: 50_000, lastStartedAt: base.now - 59_999 }))
  t.ok(snapshotDue({ ...base, confirmed: 50_000, lastStartedAt: base.now - 60_000 }))
})

t.test('an interval of 0: by count alone', async (t) => {
  t.ok(snapshotDue({ ...base, minIntervalMs: 0, confirmed: 11_000, lastStartedAt: base.now }))
})
