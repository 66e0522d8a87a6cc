import type { LimitState } from '../contract/cloud/usage.ts';
import { QUOTA_NEAR_SHARE, QuotaAlert } from '../contract/cloud-actions.ts';
import type { Clock } from '../lib/clock.ts';
import type { CloudClient } from './cloud-client.ts';
import { isCloudClientError } from './errors.ts';
import { counterKey } from './outbox-answers.ts';

const DAY = 24 * 3600_000;
const MAX_REFUSAL_ALERTS = 20;
const LEVEL_RANK = { exceeded: 2, near: 1 } as const;

/** Alerts about one counter (scope, subject, metric, period) become one: the worse level, then the newer word. */
export function onePerCounter(alerts: readonly QuotaAlert[]): QuotaAlert[] {
  const byCounter = new Map<string, QuotaAlert>();
  for (const a of alerts) {
    // a refusal that does not name its subject or period (an older gateway's error) stands for its scope's counter of that metric
    const key = [...byCounter.keys()].find((k) => sameCounter(byCounter.get(k)!, a)) ?? counterKey(a);
    const held = byCounter.get(key);
    if (!held || LEVEL_RANK[a.level] > LEVEL_RANK[held.level] || (a.level === held.level && a.seen_at > held.seen_at))
      byCounter.set(key, a);
  }
  return [...byCounter.values()];
}

const sameCounter = (x: QuotaAlert, y: QuotaAlert): boolean =>
  x.scope === y.scope &&
  x.metric === y.metric &&
  (x.subject === null || y.subject === null || x.subject === y.subject) &&
  (x.period === null || y.period === null || x.period === y.period);

export interface QuotaAlertsDeps {
  client: CloudClient;
  clock: Clock;
  changed: () => void;
  /** the limits as last fetched (cloud.usage), or null */
  fetchedLimits: () => { fetched_at: string; limits: LimitState[] } | null;
}

/** The quota alerts of cloud.status and cloud.usage: refusals seen on calls and at upload, and limits near or over. */
export function quotaAlerts(d: QuotaAlertsDeps) {
  const iso = (t: number) => new Date(t).toISOString();
  let refusals: QuotaAlert[] = [];
  return {
    /** One alert per counter: a refusal (a call's, or events' at upload) and the limits as last fetched; the worse wins, then the newer word. */
    list(): QuotaAlert[] {
      const now = d.clock.now();
      refusals = refusals.filter((a) => Date.parse(a.reset_at) > now);
      const fromEvents = d.client.usage.quotaRefusals().flatMap(({ quota: q, seen_at }) => {
        const a = QuotaAlert.safeParse({ level: 'exceeded', ...q, source: 'refusal', seen_at });
        return a.success ? [a.data] : [];
      });
      const fetched = d.fetchedLimits();
      const fromLimits: QuotaAlert[] = (fetched?.limits ?? []).flatMap((l) => {
        if (l.limit <= 0 || Date.parse(l.reset_at) <= now) return [];
        const used = l.used + l.reserved;
        const level = used >= l.limit ? 'exceeded' : used >= l.limit * QUOTA_NEAR_SHARE ? 'near' : null;
        return level
          ? [
              {
                level,
                scope: l.scope,
                subject: l.subject,
                metric: l.metric,
                period: l.period,
                limit: l.limit,
                used,
                reset_at: l.reset_at,
                source: 'limits' as const,
                seen_at: fetched!.fetched_at,
              },
            ]
          : [];
      });
      return onePerCounter([...refusals, ...fromEvents, ...fromLimits]);
    },

    /** A quota_exceeded seen on a call (AI, usage upload): an alert until its reset. */
    notice(e: unknown): void {
      if (!isCloudClientError(e) || e.cloudCode !== 'quota_exceeded') return;
      const x = e.info.details ?? {};
      const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : 0);
      const str = (v: unknown) => (typeof v === 'string' ? v.slice(0, 100) : null);
      const parsed = QuotaAlert.safeParse({
        level: 'exceeded',
        scope: str(x.scope) ?? 'site',
        subject: str(x.subject),
        metric: str(x.metric),
        period: str(x.period),
        limit: num(x.limit),
        used: num(x.used),
        reset_at: str(x.reset_at) ?? iso(d.clock.now() + DAY),
        source: 'refusal',
        seen_at: iso(d.clock.now()),
      });
      if (!parsed.success) return;
      const alert = parsed.data;
      refusals = [alert, ...refusals.filter((a) => !(a.scope === alert.scope && a.metric === alert.metric))].slice(
        0,
        MAX_REFUSAL_ALERTS,
      );
      d.changed();
    },

    /** the old site's alerts are not the next one's */
    reset(): void {
      refusals = [];
    },
  };
}
