/**
 * Age-restricted items at order time (issue 18 item 4; docs/verticals.md "Age-restricted items"):
 * pure. An item with a `min_age` may be ordered only when the order says `age_confirmed: true` —
 * the customer (or the staff member taking the order) confirms the buyer is at least the highest
 * `min_age` among its items. The store actor applies this to every order from every front door.
 */

export interface AgeGatedLine { item_id: number; name: string; min_age: number | null }

/** What a refusal names: the highest age asked for and the items asking. */
export interface AgeRefusal { min_age: number; items: { item_id: number; name: string; min_age: number }[] }

/** The refusal for these lines, or null when none is restricted or the age was confirmed. */
export function ageGate(lines: readonly AgeGatedLine[], ageConfirmed: boolean | null | undefined): AgeRefusal | null {
  if (ageConfirmed === true) return null
  const items: AgeRefusal['items'] = []
  const seen = new Set<number>()
  for (const l of lines) {
    if (l.min_age === null || seen.has(l.item_id)) continue
    seen.add(l.item_id)
    items.push({ item_id: l.item_id, name: l.name, min_age: l.min_age })
  }
  if (items.length === 0) return null
  return { min_age: Math.max(...items.map((i) => i.min_age)), items }
}

/** The sentence a client can show (the refusal's `message`). */
export const ageRefusalMessage = (r: AgeRefusal): string =>
  `${r.items.map((i) => i.name).join(', ')} ${r.items.length === 1 ? 'is' : 'are'} for buyers aged ${r.min_age} or over: confirm the buyer's age with age_confirmed: true.`
