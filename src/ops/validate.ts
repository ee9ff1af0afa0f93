/** Input validation for every front door: valibot → 422 `validation_failed` with `errors` keyed by dot path (api-v1 §7). */
import * as v from 'valibot'
import { ApiError, WHOLE_REQUEST, type FieldErrors } from '../errors.ts'

export function validate<T>(schema: v.GenericSchema<unknown, T>, input: unknown, where: 'query' | 'body' | 'arguments'): T {
  const r = v.safeParse(schema, input)
  if (r.success) return r.output
  const errors: FieldErrors = {}
  for (const issue of r.issues) {
    // An issue of the input as a whole (not an object, …): the query string, else the request's one whole-input key.
    const key = v.getDotPath(issue) ?? (where === 'query' ? 'query' : WHOLE_REQUEST)
    ;(errors[key] ??= []).push(issue.message)
  }
  throw new ApiError('validation_failed', undefined, errors)
}
