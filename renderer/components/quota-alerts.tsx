import { quotaName } from '../../main/contract/index.ts';
import type { QuotaAlert } from '../../main/contract/index.ts';
import { formatDateTime } from '../lib/format.ts';

const number = new Intl.NumberFormat();
export const formatCount = (n: number): string => number.format(n);
export { quotaName };

/** One sentence per alert: which quota, how much of it, and when it resets. */
export function quotaAlertText(q: QuotaAlert): string {
  const state = q.level === 'exceeded' ? 'used up' : 'nearly used up';
  return `${quotaName(q)} is ${state}: ${formatCount(q.used)} of ${formatCount(q.limit)}. It resets ${formatDateTime(q.reset_at)}.`;
}

/**
 * Quotas used up or nearly so, most urgent first. A used-up quota is an alert
 * (screen readers announce it); a near one is a plain warning.
 */
export function QuotaAlerts({ alerts }: { alerts: readonly QuotaAlert[] }) {
  if (alerts.length === 0) return null;
  const sorted = [...alerts].sort((a, b) => (a.level === b.level ? 0 : a.level === 'exceeded' ? -1 : 1));
  const exceeded = sorted.some((a) => a.level === 'exceeded');
  return (
    <div className={`quota-alerts ${exceeded ? 'error-box' : 'notice'}`} role={exceeded ? 'alert' : 'status'}>
      <ul aria-label="Quota warnings">
        {sorted.map((q) => (
          <li key={`${q.scope}:${q.subject ?? ''}:${q.metric}:${q.period ?? ''}`} className={`quota-${q.level}`}>
            {quotaAlertText(q)}
            {q.level === 'exceeded' ? (
              <span className="detail">
                {' '}
                (code quota_exceeded{q.source === 'refusal' ? ', seen on a refused request' : ''})
              </span>
            ) : null}
          </li>
        ))}
      </ul>
    </div>
  );
}
