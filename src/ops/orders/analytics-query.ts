/** `from`/`to` for analytics (api-v1 §4.2): `YYYY-MM-DD`, default the last 30 days, invalid → 422. */
import * as v from 'valibot'
import { ApiError } from '../../errors.ts'
import type { AnalyticsRange } from '../../storage/analytics.ts'

const isRealDate = (s: string) => {
  const t = Date.parse(`${s}T00:00:00Z`)
  return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === s
}
export const DateStr = v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/, 'Use the format YYYY-MM-DD.'), v.check(isRealDate, 'Not a calendar date.'))

export const AnalyticsQuery = v.object({ from: v.optional(DateStr), to: v.optional(DateStr) })

export function analyticsRange(q: v.InferOutput<typeof AnalyticsQuery>, now = Date.now()): AnalyticsRange {
  const to = q.to ?? new Date(now).toISOString().slice(0, 10)
  const from = q.from ?? new Date(Date.parse(`${to}T00:00:00Z`) - 29 * 86_400_000).toISOString().slice(0, 10)
  if (from > to) throw new ApiError('validation_failed', undefined, { from: ['`from` must not be after `to`.'] })
  return { from, to }
}
