/** The customer record as the customer app and the owner see it (api-v1 §2.7 "Customer account"). */
import * as v from 'valibot'
import type { CustomerRow } from '../../storage/customers.ts'
import { named } from './named.ts'

export type { CustomerRow }

const isRealDate = (s: string) => {
  const t = Date.parse(`${s}T00:00:00Z`)
  return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === s && t <= Date.now()
}
export const Birthday = v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/, 'Use YYYY-MM-DD.'), v.check(isRealDate, 'Not a past calendar date.'))
/** Consents are named yes/no answers, e.g. `{"marketing_email": true, "marketing_sms": false}`. */
export const Consents = v.pipe(
  v.record(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]{0,39}$/, 'Consent names are lower_snake_case.')), v.boolean()),
  v.check((o) => Object.keys(o).length <= 20, 'At most 20 consents.'),
)

export const CustomerSchema = {
  type: 'object', required: ['id', 'restaurant_id', 'name', 'email', 'phone', 'birthday', 'consents'],
  properties: {
    id: { type: 'integer' }, restaurant_id: { type: 'integer' }, name: { type: ['string', 'null'] }, email: { type: ['string', 'null'] },
    phone: { type: ['string', 'null'] }, birthday: { type: ['string', 'null'], format: 'date' },
    consents: { type: 'object', additionalProperties: { type: 'boolean' } }, created_at: { type: 'string' }, updated_at: { type: 'string' },
  },
}
named('Customer', CustomerSchema)

export function customerView(c: CustomerRow) {
  return {
    id: c.id, restaurant_id: c.store_id, name: c.name, email: c.email, phone: c.phone, birthday: c.birthday,
    consents: JSON.parse(c.consents) as Record<string, boolean>, created_at: c.created_at, updated_at: c.updated_at,
  }
}
