/** Cash shift arithmetic (src/domain/shifts.ts; docs/operations.md "Cash shifts"): pure, in cents. */
import t from 'tap'
import { expectedCash, shiftTotals } from '../../src/domain/shifts.ts'

const figures = { openingFloat: 10_000, cashTaken: 2_550, cardTaken: 4_000, cashRefunded: 500 }

t.test('expected cash is float + cash taken − cash refunded; card money is not in the drawer', async (t) => {
  t.equal(expectedCash(figures), 12_050)
  t.equal(expectedCash({ ...figures, cardTaken: 99_999 }), 12_050, 'card taken does not change the drawer')
  t.equal(expectedCash({ openingFloat: 0, cashTaken: 0, cardTaken: 0, cashRefunded: 0 }), 0)
})

t.test('an open shift has no counted cash and no over/short', async (t) => {
  t.same(shiftTotals(figures, null), { ...figures, expectedCash: 12_050, countedCash: null, overShort: null })
})

t.test('over/short is counted − expected: short is negative, over positive, exact zero', async (t) => {
  t.equal(shiftTotals(figures, 12_000).overShort, -50, 'short 0.50')
  t.equal(shiftTotals(figures, 12_100).overShort, 50, 'over 0.50')
  t.equal(shiftTotals(figures, 12_050).overShort, 0, 'exact')
})

t.test('a closed shift keeps the expected cash recorded at close', async (t) => {
  const closed = shiftTotals({ ...figures, cashTaken: 9_999 }, 12_000, 12_050)
  t.equal(closed.expectedCash, 12_050, 'recorded, not recomputed')
  t.equal(closed.overShort, -50)
})
