import { useMemo, useState } from 'react';
import type { CloudUsageView } from '../../../main/contract/index.ts';
import type { LimitState } from '../../../main/contract/cloud/usage.ts';
import { formatCount, QuotaAlerts, quotaName } from '../../components/quota-alerts.tsx';
import { metricWords } from '../../lib/cloud-words.ts';
import { formatDateTime } from '../../lib/format.ts';
import { PRODUCT_NAMES } from '../../lib/words.ts';
import { FailureText, fromCloudFailure } from '../cloud/cloud-failure.tsx';
import { cloudSeries, historyMetrics, quotaLevel, sortLimits, usedPercent } from './quota-series.ts';
import { BarChart, bucketLabel } from './usage-chart.tsx';

export const QUOTA_DAYS = 30;

/**
 * The cloud's quotas (usage/limits + usage/summary through `cloud.usage`):
 * a bar per limit with used, left and reset, a warning when one is near or
 * over, and the daily history as a chart per metric.
 */
export function Quotas({ usage }: { usage: CloudUsageView }) {
  if (usage.source === 'local') {
    return (
      <p className="state-off">
        Not connected. Quota bars per metric and scope, with their reset times, appear here once this Gatehouse is
        linked to a cloud gateway (see <a href="#cloud">Cloud</a>). Local calls are not limited by a cloud quota
        meanwhile.
      </p>
    );
  }
  return (
    <>
      <Source usage={usage} />
      <QuotaAlerts alerts={usage.quota_alerts} />
      {usage.limits.length === 0 ? (
        <p className="muted">The cloud gateway has not reported any quota figures yet.</p>
      ) : (
        <ul className="quota-bars" aria-label="Quotas">
          {sortLimits(usage.limits).map((l) => (
            <QuotaBar key={`${l.scope}:${l.subject}:${l.metric}:${l.period}`} limit={l} />
          ))}
        </ul>
      )}
      {usage.summary ? (
        <p className="muted">
          {formatCount(usage.summary.events)} events this {usage.summary.period}, since{' '}
          {formatDateTime(usage.summary.period_start)}.
        </p>
      ) : null}
      <HistoryChart history={usage.history} />
    </>
  );
}

function Source({ usage }: { usage: CloudUsageView }) {
  if (usage.source === 'cloud')
    return <p className="muted">From the cloud gateway, {formatDateTime(usage.fetched_at)}.</p>;
  return (
    <p className="state-warn">
      {usage.fetched_at
        ? `The gateway could not be asked now; these figures are from ${formatDateTime(usage.fetched_at)}.`
        : 'The gateway could not be asked now and no figures were kept.'}
      {usage.error ? (
        <>
          {' '}
          <FailureText failure={fromCloudFailure(usage.error)} />
        </>
      ) : null}
    </p>
  );
}

const LEVEL_WORDS = { ok: '', near: 'nearly used up', exceeded: 'used up', none: 'not included in the plan' } as const;

function QuotaBar({ limit: l }: { limit: LimitState }) {
  const level = quotaLevel(l);
  const pct = usedPercent(l);
  const name = quotaName(l);
  return (
    <li className={`quota quota-${level}`}>
      <div className="quota-head">
        <span className="quota-name">{name}</span>
        <span className="quota-figures">
          {level === 'none' ? LEVEL_WORDS.none : `${formatCount(l.used)} of ${formatCount(l.limit)}`}
          {l.reserved ? <span className="detail"> (+{formatCount(l.reserved)} held for running AI calls)</span> : null}
        </span>
      </div>
      {level === 'none' ? null : (
        <svg
          className="quota-meter"
          viewBox="0 0 100 6"
          preserveAspectRatio="none"
          role="meter"
          aria-label={name}
          aria-valuemin={0}
          aria-valuemax={l.limit}
          aria-valuenow={Math.min(l.used, l.limit)}
          aria-valuetext={`${pct}% used${LEVEL_WORDS[level] ? `, ${LEVEL_WORDS[level]}` : ''}`}
        >
          <rect width="100" height="6" rx="3" className="quota-track" />
          <rect width={pct} height="6" rx="3" className={`quota-fill-${level}`} />
        </svg>
      )}
      <p className="quota-meta">
        {level === 'exceeded' ? (
          <strong>Used up. </strong>
        ) : level === 'near' ? (
          <strong>Nearly used up. </strong>
        ) : null}
        {level === 'none' ? '' : `${formatCount(Math.max(0, l.remaining))} left · `}resets {formatDateTime(l.reset_at)}
        {l.source !== 'plan' ? (
          <span className="detail"> · set by the {l.source === 'operator' ? 'gateway’s operator' : 'account'}</span>
        ) : null}
      </p>
    </li>
  );
}

function HistoryChart({ history }: { history: CloudUsageView['history'] }) {
  const metrics = useMemo(() => historyMetrics(history), [history]);
  const [chosen, setChosen] = useState<string | null>(null);
  const metric = chosen && metrics.includes(chosen) ? chosen : (metrics[0] ?? null);
  const series = useMemo(
    () => (metric ? cloudSeries(history, metric, QUOTA_DAYS, Date.now()) : null),
    [history, metric],
  );
  if (!metric || !series) return <p className="muted">No daily history from the gateway yet.</p>;
  return (
    <>
      <div className="card-head">
        <h3>Daily use, last {QUOTA_DAYS} days</h3>
        {metrics.length > 1 ? (
          <div className="field inline">
            <label htmlFor="us-metric">Metric</label>
            <select id="us-metric" value={metric} onChange={(e) => setChosen(e.target.value)}>
              {metrics.map((m) => (
                <option key={m} value={m}>
                  {metricWords(m)}
                </option>
              ))}
            </select>
          </div>
        ) : null}
      </div>
      <BarChart
        id="us-cloud-chart"
        series={series}
        words={{
          title: `${metricWords(metric)} per day, last ${QUOTA_DAYS} days, by product`,
          bucket: (start) => bucketLabel(start, '30d'),
          key: (p) => PRODUCT_NAMES[p]?.split(':')[0] ?? p,
          unit: (n) => `${formatCount(n)} ${metricWords(metric).toLowerCase()}`,
          keys: 'Products',
          fill: (p) => `fill-product fill-product-${p}`,
        }}
      />
    </>
  );
}
