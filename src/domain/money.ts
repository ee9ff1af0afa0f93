/** Money: integer minor units inside, JSON numbers (and decimal strings for webhooks) outside. */

export type Cents = number & { readonly __brand: 'Cents' }

/** 12.5 → 1250. Rounds half away from zero to absorb binary-float noise (0.1 + 0.2). */
export function toCents(amount: number): Cents {
  return Math.round(amount * 100 + Number.EPSILON * Math.sign(amount)) as Cents
}

export const cents = (n: number): Cents => n as Cents

/** 1250 → 12.5 (a JSON number, as the API shows prices). */
export const fromCents = (c: number): number => Math.round(c) / 100

/** 1250 → "12.50" (webhook `total`, api-v1 §6). */
export const centsToDecimalString = (c: number): string => {
  const sign = c < 0 ? '-' : ''
  const abs = Math.abs(Math.round(c))
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`
}

/** True when `amount` has at most two decimals, i.e. is representable in cents. */
export const hasAtMostTwoDecimals = (amount: number): boolean => Math.abs(amount * 100 - Math.round(amount * 100)) < 1e-6
