/**
 * Third-party order-integration controls (api-v1 §4.7 "integration"; docs/staff.md "Busy and
 * snooze"), pure: a store marked busy adds prep minutes for a while, a snoozed store accepts no
 * partner orders for a while. Both expire by time alone (no timer): an `until` in the past reads as off.
 */

/** What is stored per store; no row at all means neither busy nor snoozed. */
export interface IntegrationState { busy_until: string | null; extra_prep_minutes: number; snoozed_until: string | null }

export interface IntegrationStatus {
  busy: { active: boolean; until: string | null; extra_prep_minutes: number }
  snoozed: { active: boolean; until: string | null }
  prep_minutes: number
  accepting_orders: boolean
}

/** Prep minutes when the store's settings name none (or garbage). */
export const DEFAULT_PREP_MINUTES = 15

/** The store's own prep time from its settings JSON. */
export function basePrepMinutes(settingsJson: string | undefined): number {
  let settings: { prep_minutes?: unknown } = {}
  try {
    settings = JSON.parse(settingsJson ?? '{}') as { prep_minutes?: unknown }
  } catch {
    settings = {}
  }
  return prepMinutesIn(settings)
}

/** The store's own prep time from its settings, already parsed. */
export const prepMinutesIn = (settings: { prep_minutes?: unknown } | null): number => Number(settings?.prep_minutes ?? DEFAULT_PREP_MINUTES) || DEFAULT_PREP_MINUTES

/** The status at `nowMs`, given the stored state and the store's base prep time. */
export function integrationStatus(row: IntegrationState | undefined, basePrep: number, nowMs: number): IntegrationStatus {
  const busy = !!row?.busy_until && Date.parse(row.busy_until) > nowMs
  const snoozed = !!row?.snoozed_until && Date.parse(row.snoozed_until) > nowMs
  const extra = busy ? row!.extra_prep_minutes : 0
  return {
    busy: { active: busy, until: busy ? row!.busy_until : null, extra_prep_minutes: extra },
    snoozed: { active: snoozed, until: snoozed ? row!.snoozed_until : null },
    prep_minutes: basePrep + extra,
    accepting_orders: !snoozed,
  }
}
