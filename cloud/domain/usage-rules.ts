import {
  CloudUsageEvent,
  unitsMetricOf,
  type Metric,
  type Period,
  type Scope,
  type UsageRecordResult,
} from '../../main/contract/cloud/index.ts';
import { describeZod } from './describe-zod.ts';
import { periodStart } from './periods.ts';

/**
 * Usage, pure: which events of a request are valid for the signing site, what
 * each one counts (metric and amount), and which counters those amounts go to.
 */
export interface SiteScopes {
  site_id: string;
  account_id: string | null;
  department: string | null;
  project: string | null;
}

export interface Subject {
  scope: Scope;
  subject: string;
}

/** The scopes a site's usage counts in: always the site, then its account, department and project when it has them. */
export function subjectsOf(s: SiteScopes): Subject[] {
  const out: Subject[] = [{ scope: 'site', subject: s.site_id }];
  if (s.account_id) {
    out.push({ scope: 'account', subject: s.account_id });
    if (s.department) out.push({ scope: 'department', subject: `${s.account_id}/${s.department}` });
    if (s.project) out.push({ scope: 'project', subject: `${s.account_id}/${s.project}` });
  }
  return out;
}

export interface Contribution {
  metric: Metric;
  amount: number;
}

/** An event's units go to its name's metric; its tokens go to ai_tokens. */
export function contributionsOf(
  e: Pick<CloudUsageEvent, 'event' | 'units' | 'tokens_input' | 'tokens_output'>,
): Contribution[] {
  const out: Contribution[] = [];
  const m = unitsMetricOf(e.event);
  if (m && e.units > 0) out.push({ metric: m, amount: e.units });
  const tokens = e.tokens_input + e.tokens_output;
  if (tokens > 0) out.push({ metric: 'ai_tokens', amount: tokens });
  return out;
}

export const PERIODS: readonly Period[] = ['day', 'month'];

export interface CounterKey extends Subject {
  metric: Metric;
  period: Period;
  period_start: string;
}

export const counterId = (k: CounterKey): string => `${k.scope}|${k.subject}|${k.metric}|${k.period}|${k.period_start}`;

/** Every counter one event moves, with its amount. */
export function countersFor(
  scopes: SiteScopes,
  contributions: readonly Contribution[],
  at: Date,
): Array<CounterKey & { amount: number }> {
  const out: Array<CounterKey & { amount: number }> = [];
  for (const c of contributions) {
    for (const p of PERIODS) {
      const start = periodStart(p, at).toISOString();
      for (const s of subjectsOf(scopes))
        out.push({ ...s, metric: c.metric, period: p, period_start: start, amount: c.amount });
    }
  }
  return out;
}

/** Events may be up to 5 minutes ahead of the gateway's clock, and at most 90 days old. */
export const FUTURE_SKEW_MS = 5 * 60_000;
export const MAX_AGE_MS = 90 * 86_400_000;

export type Checked = { ok: true; event: CloudUsageEvent; at: Date } | { ok: false; result: UsageRecordResult };

/** Validates one raw event of a request for the signing site. */
export function checkEvent(raw: unknown, siteId: string, now: Date): Checked {
  const idGuess =
    raw && typeof raw === 'object' && typeof (raw as { event_id?: unknown }).event_id === 'string'
      ? (raw as { event_id: string }).event_id.slice(0, 64)
      : null;
  const reject = (reason: UsageRecordResult['reason'], message: string): Checked => ({
    ok: false,
    result: { event_id: idGuess, status: 'rejected', reason, message },
  });
  const parsed = CloudUsageEvent.safeParse(raw);
  if (!parsed.success) return reject('invalid_event', describeZod(parsed.error));
  const e = parsed.data;
  if (e.site_id !== siteId) return reject('site_mismatch', 'site_id must be the id of the site that signs the request');
  const at = new Date(e.timestamp);
  if (at.getTime() > now.getTime() + FUTURE_SKEW_MS)
    return reject('timestamp_out_of_range', 'timestamp is more than 5 minutes in the future: check the site clock');
  if (at.getTime() < now.getTime() - MAX_AGE_MS)
    return reject('timestamp_out_of_range', 'timestamp is more than 90 days old');
  return { ok: true, event: e, at };
}
