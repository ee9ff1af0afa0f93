/** Money: integer cents inside, JSON numbers and decimal strings outside. */
import t from 'tap'
import { centsToDecimalString, fromCents, hasAtMostTwoDecimals, toCents } from '../../src/domain/money.ts'

t.test('toCents and fromCents round-trip every two-decimal amount', async (t) => {
  let bad = 0
  for (let c = 0; c <= 200_000; c += 7) {
    if (toCents(c / 100) !== c || fromCents(c) !== c / 100) bad++
  }
  t.equal(bad, 0, 'no drift over 0.00 … 2000.00')
  t.equal(toCents(0.1 + 0.2), 30, 'float noise absorbed')
  t.equal(toCents(19.99), 1999)
  t.equal(toCents(1.15), 115)
  t.equal(toCents(-2.5), -250)
  t.equal(fromCents(1999), 19.99)
  t.equal(fromCents(0), 0)
})

t.test('decimal strings for webhook totals', async (t) => {
  t.equal(centsToDecimalString(0), '0.00')
  t.equal(centsToDecimalString(5), '0.05')
  t.equal(centsToDecimalString(1250), '12.50')
  t.equal(centsToDecimalString(123456), '1234.56')
  t.equal(centsToDecimalString(-150), '-1.50')
})

t.test('at most two decimals', async (t) => {
  for (const ok of [0, 1, 1.5, 19.99, 0.1 + 0.2, 1_000_000]) t.ok(hasAtMostTwoDecimals(ok), String(ok))
  for (const bad of [1.001, 0.125, 19.999, 1e-5]) t.notOk(hasAtMostTwoDecimals(bad), String(bad))
})
