import t from 'tap'
import { newTrackToken } from '../../src/auth/tokens.ts'

// Track tokens are keys of a UNIQUE index: minted in order they must sort in order (so each new
// one lands at the index's end), and they keep the family prefix and 256 random bits.
t.test('track tokens sort in minting order and carry 256 random bits', async (t) => {
  const times = [1_700_000_000_000, 1_700_000_000_001, 1_700_000_000_255, 1_700_000_000_256, 1_800_000_000_000, 2 ** 44]
  const tokens = times.map((ms) => newTrackToken(ms))
  t.same([...tokens].sort(), tokens, 'byte order is minting order')
  for (const tok of tokens) t.match(tok, /^trk_[0-9a-f]{12}[A-Za-z0-9_-]{43}$/)
  const same = [newTrackToken(times[0]), newTrackToken(times[0])]
  t.not(same[0], same[1], 'the same millisecond still gives different tokens')
  t.equal(Buffer.from(tokens[0]!.slice(16), 'base64url').length, 32)
})
