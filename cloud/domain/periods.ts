import type { Period } from '../../main/contract/cloud/index.ts';

/** Quota periods are UTC calendar days and months. */
export function periodStart(period: Period, at: Date): Date {
  return period === 'day'
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/** When the period containing `at` resets (the start of the next one). */
export function periodReset(period: Period, at: Date): Date {
  const s = periodStart(period, at);
  return period === 'day'
    ? new Date(s.getTime() + 86_400_000)
    : new Date(Date.UTC(s.getUTCFullYear(), s.getUTCMonth() + 1, 1));
}

/** Whole seconds until the reset, at least 1 (a Retry-After value). */
export const secondsUntil = (reset: Date, now: Date): number =>
  Math.max(1, Math.ceil((reset.getTime() - now.getTime()) / 1000));
