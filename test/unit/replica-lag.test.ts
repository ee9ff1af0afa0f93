/**
 * A replica's `lag_ms` (src/cluster/node.ts replicaLagMs): 0 while it holds the whole stream; behind,
 * the age of the last moment its data is known complete — never the age of the last message applied
 * alone, which after an idle spell would report hours of lag for a message committed a moment ago
 * (and take the replica out of /readyz and out of serving reads for it).
 */
import t from 'tap'
import { replicaLagMs } from '../../src/cluster/node.ts'

const HOUR = 3_600_000
const now = 10 * HOUR

t.test('caught up: no lag, however old the last message is', async (t) => {
  t.equal(replicaLagMs({ appliedSeq: 7, appliedAt: now - HOUR, streamLast: 7, pending: 0, currentAt: now - 500, now }), 0)
})

t.test('a message after an idle hour: as far behind as the last check that found it current', async (t) => {
  t.equal(replicaLagMs({ appliedSeq: 7, appliedAt: now - HOUR, streamLast: 8, pending: 0, currentAt: now - 900, now }), 900)
})

t.test('behind under load: the commit time of the last message applied, when that is later', async (t) => {
  t.equal(replicaLagMs({ appliedSeq: 500, appliedAt: now - 40, streamLast: 520, pending: 20, currentAt: now - 3000, now }), 40)
})

t.test('messages still pending behind what the stream length said count as behind', async (t) => {
  t.equal(replicaLagMs({ appliedSeq: 9, appliedAt: now - 2000, streamLast: 9, pending: 3, currentAt: now - 5000, now }), 2000)
})

t.test('a node behind that never knew itself current is as far behind as can be, not 0 (not ready, no local reads)', async (t) => {
  t.equal(replicaLagMs({ appliedSeq: 0, appliedAt: 0, streamLast: 100, pending: 0, currentAt: 0, now }), now)
})
