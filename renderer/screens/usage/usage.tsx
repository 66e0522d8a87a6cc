import { DataTable } from '../../components/data-table.tsx';
import { useMemo, useState } from 'react';
import type { Stats } from '../../../main/contract/index.ts';
import { LoadState } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';
import { formatDateTime, plural } from '../../lib/format.ts';
import { useApiEvents } from '../../lib/use-events.ts';
import { useLoad } from '../../lib/use-load.ts';
import { RANGES, buildSeries, toolRows } from './series.ts';
import type { Range } from './series.ts';
import { UsageChart } from './usage-chart.tsx';
import { UsageEvents } from './usage-events.tsx';
import { QUOTA_DAYS, Quotas } from './quotas.tsx';

export function Usage() {
  const api = useApi();
  const stats = useLoad(() => api['stats.get']({}), [api]);
  const cloud = useLoad(() => api['cloud.usage']({ period: 'month', days: QUOTA_DAYS }), [api]);
  useApiEvents((event) => {
    if (event.type === 'audit' || event.type === 'health') stats.reload();
    if (event.type === 'health') cloud.reload();
  });
  return (
    <div className="usage">
      <LoadState state={stats.state} what="usage figures" onRetry={stats.reload}>
        {(data) => <LocalUsage stats={data} />}
      </LoadState>
      <section className="card" aria-labelledby="us-quota">
        <h2 id="us-quota">Cloud quotas</h2>
        <LoadState state={cloud.state} what="the cloud quotas" onRetry={cloud.reload}>
          {(usage) => <Quotas usage={usage} />}
        </LoadState>
      </section>
    </div>
  );
}

function LocalUsage({ stats }: { stats: Stats }) {
  const [range, setRange] = useState<Range>('24h');
  // The chart is drawn once per data change, not on every clock tick.
  const series = useMemo(() => buildSeries(stats.hourly, range, Date.now()), [stats.hourly, range]);
  const tools = useMemo(() => toolRows(stats.tools), [stats.tools]);
  const top = tools[0]?.total ?? 0;
  return (
    <>
      <section className="card" aria-labelledby="us-time">
        <div className="card-head">
          <h2 id="us-time">Calls over time</h2>
          <div className="field inline">
            <label htmlFor="us-range">Period</label>
            <select id="us-range" value={range} onChange={(e) => setRange(e.target.value as Range)}>
              {(Object.keys(RANGES) as Range[]).map((r) => (
                <option key={r} value={r}>
                  {RANGES[r].label}
                </option>
              ))}
            </select>
          </div>
        </div>
        {series.total === 0 ? (
          <p className="empty">
            No calls in this period. Counting since {stats.since ? formatDateTime(stats.since) : 'the first call'}.
          </p>
        ) : (
          <>
            <p className="muted">{plural(series.total, 'call')} in this period.</p>
            <UsageChart series={series} range={range} />
          </>
        )}
      </section>
      <section className="card" aria-labelledby="us-tools">
        <h2 id="us-tools">By tool and result</h2>
        <DataTable
          className="by-tool"
          rows={tools}
          rowKey={(row) => row.tool}
          empty={<p className="empty">No tool has been called yet.</p>}
          columns={[
            { header: 'Tool', rowHeader: true, cell: (row) => row.tool },
            { header: 'Calls', className: 'num', cell: (row) => row.total },
            {
              header: 'Results',
              cell: (row) =>
                Object.entries(row.counts)
                  .filter(([, n]) => n > 0)
                  .map(([r, n]) => `${r} ${n}`)
                  .join(' · '),
            },
            {
              header: 'Share',
              hiddenHeader: true,
              cell: (row) => (
                <svg className="share" viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true">
                  <rect width={top ? (row.total / top) * 100 : 0} height="8" rx="2" className="fill-ok" />
                </svg>
              ),
            },
          ]}
        />
        {stats.since ? <p className="muted">Counting since {formatDateTime(stats.since)}.</p> : null}
      </section>
      <UsageEvents usage={stats.usage} />
    </>
  );
}
