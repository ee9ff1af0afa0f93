/** Input validation for every front door: valibot → 422 `validation_failed` with `errors` keyed by dot path (api-v1 §7). */
import * as v from 'valibot'
import { ApiError, type FieldErrors } from '../errors.ts'

export function validate<T>(schema: v.GenericSchema<unknown, T>, input: unknown, where: 'query' | 'body' | 'arguments'): T {
  const r = v.safeParse(schema, input)
  if (r.success) return r.output
  const errors: FieldErrors = {}
  for (const issue of r.issues) {
    const key = v.getDotPath(issue) ?? where
    ;(errors[key] ??= []).push(issue.message)
  }
  throw new ApiError('validation_failed', undefined, errors)
}
