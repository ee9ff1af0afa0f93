/**
 * The store's booking rules as a settings key (`reservations`, docs/stores.md; rules in
 * domain/reservations.ts). Sent as a whole: keys left out take their defaults, null restores all
 * defaults. Out-of-bounds values are a 422 and nothing changes.
 */
import * as v from 'valibot'
import { DEFAULT_RULES, RULE_BOUNDS } from '../../domain/reservations.ts'

const bounded = (k: keyof typeof RULE_BOUNDS) =>
  v.optional(v.pipe(v.number(), v.integer(), v.minValue(RULE_BOUNDS[k][0]), v.maxValue(RULE_BOUNDS[k][1])))

export const BookingRulesInput = v.pipe(
  v.strictObject({
    enabled: v.optional(v.boolean()),
    slot_minutes: bounded('slot_minutes'),
    duration_minutes: bounded('duration_minutes'),
    lead_minutes: bounded('lead_minutes'),
    max_days_ahead: bounded('max_days_ahead'),
    max_party_size: bounded('max_party_size'),
  }),
  v.transform((r) => ({ ...DEFAULT_RULES, ...Object.fromEntries(Object.entries(r).filter(([, x]) => x !== undefined)) })),
  v.description('Booking rules: {enabled, slot_minutes, duration_minutes, lead_minutes, max_days_ahead, max_party_size}; keys left out take their defaults (docs/operations.md "Reservations").'),
)

export const BookingRulesSchema = {
  type: 'object', description: 'Booking rules (docs/operations.md "Reservations")',
  properties: {
    enabled: { type: 'boolean', description: 'false: customers cannot book through the app' },
    slot_minutes: { type: 'integer' }, duration_minutes: { type: 'integer' }, lead_minutes: { type: 'integer', description: 'customers only' },
    max_days_ahead: { type: 'integer' }, max_party_size: { type: 'integer' },
  },
}
