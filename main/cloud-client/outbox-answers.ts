import type { QuotaDetails } from '../contract/cloud/errors.ts';
import type { CloudUsageEvent, UsageRecordAnswer } from '../contract/cloud/usage.ts';
import type { Rejection } from './outbox-journal.ts';

/** The gateway's per-event answers to one batch, sorted (usage-outbox.ts applies them). */
export interface SortedAnswers {
  delivered: string[];
  dup: string[];
  rejected: Rejection[];
  /** timestamp_out_of_range on a batch stamped with an offset since corrected: sent again, once */
  again: string[];
  /** the counters that refused events (reason quota_exceeded) */
  quotas: QuotaDetails[];
}

/**
 * An answer that does not name the event it stands for (another event_id)
 * is skipped: the event stays queued. `mayRestamp` says whether a
 * `timestamp_out_of_range` may be sent again (the gateway did not store it,
 * so sending it again cannot count it twice).
 */
export function sortAnswers(
  batch: readonly CloudUsageEvent[],
  answer: UsageRecordAnswer,
  mayRestamp: (eventId: string) => boolean,
): SortedAnswers {
  const out: SortedAnswers = { delivered: [], dup: [], rejected: [], again: [], quotas: [] };
  batch.forEach((e, i) => {
    const r = answer.results[i];
    if (!r || (r.event_id !== null && r.event_id !== e.event_id)) return;
    if (r.status === 'accepted') out.delivered.push(e.event_id);
    else if (r.status === 'duplicate') out.dup.push(e.event_id);
    else if (r.reason === 'timestamp_out_of_range' && mayRestamp(e.event_id)) out.again.push(e.event_id);
    else {
      out.rejected.push({
        event_id: e.event_id,
        reason: r.reason ?? 'rejected',
        message: (r.message ?? '').slice(0, 500),
      });
      if (r.reason === 'quota_exceeded' && r.quota) out.quotas.push(r.quota);
    }
  });
  return out;
}

/** The counter a quota answer is about: one alert per counter. */
export const counterKey = (q: {
  scope: string;
  subject: string | null;
  metric: string;
  period: string | null;
}): string => [q.scope, q.subject ?? '', q.metric, q.period ?? ''].join('|');

const MAX_COUNTERS = 50;

/**
 * The counters the gateway named when it refused events (an `mcp_actions`
 * limit reached while calls go on), the latest word per counter, until the
 * counter resets: what cloud status, the console and the tray show.
 */
export class QuotaRefusals {
  private readonly byCounter = new Map<string, { quota: QuotaDetails; seen_at: string }>();

  note(quota: QuotaDetails, now: number): void {
    const key = counterKey(quota);
    this.byCounter.delete(key);
    this.byCounter.set(key, { quota, seen_at: new Date(now).toISOString() });
    while (this.byCounter.size > MAX_COUNTERS) this.byCounter.delete(this.byCounter.keys().next().value!);
  }

  /** The refusals whose counter has not reset yet. */
  list(now: number): Array<{ quota: QuotaDetails; seen_at: string }> {
    for (const [k, v] of this.byCounter) if (!(Date.parse(v.quota.reset_at) > now)) this.byCounter.delete(k);
    return [...this.byCounter.values()];
  }

  clear(): void {
    this.byCounter.clear();
  }
}
