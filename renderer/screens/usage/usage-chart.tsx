import type { Range, Series } from './series.ts';
import { RANGES, niceMax } from './series.ts';

const W = 720;
const H = 220;
const PAD = { left: 40, right: 8, top: 10, bottom: 28 };

function bucketLabel(start: number, range: Range): string {
  const d = new Date(start);
  if (range === '24h') return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  if (range === '7d') return d.toLocaleString(undefined, { weekday: 'short', hour: '2-digit' });
  return d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
}

/**
 * Stacked bars of calls per bucket and result, drawn by hand in SVG (no chart
 * library; colours come from the stylesheet, so dark mode and the CSP both
 * hold). A table with the same figures follows for screen readers.
 */
export function UsageChart({ series, range }: { series: Series; range: Range }) {
  const top = niceMax(series.max);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / series.buckets.length;
  const barW = Math.max(2, slot * 0.7);
  const y = (n: number) => PAD.top + plotH - (n / top) * plotH;
  const labelEvery = Math.ceil(series.buckets.length / 8);
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="us-chart-title" className="chart-svg">
        <title id="us-chart-title">{`Calls per ${RANGES[range].bucketHours === 1 ? 'hour' : RANGES[range].bucketHours === 24 ? 'day' : `${RANGES[range].bucketHours} hours`}, ${RANGES[range].label.toLowerCase()}, by result`}</title>
        {[0, top / 2, top].map((tick) => (
          <g key={tick} className="axis">
            <line x1={PAD.left} x2={W - PAD.right} y1={y(tick)} y2={y(tick)} className="grid-line" />
            <text x={PAD.left - 6} y={y(tick) + 4} textAnchor="end">
              {Number.isInteger(tick) ? tick : tick.toFixed(1)}
            </text>
          </g>
        ))}
        {series.buckets.map((b, i) => {
          const x = PAD.left + i * slot + (slot - barW) / 2;
          let acc = 0;
          return (
            <g key={b.start}>
              <title>{`${bucketLabel(b.start, range)}: ${b.total} call${b.total === 1 ? '' : 's'}${series.results.filter((r) => b.counts[r]).map((r) => `, ${r} ${b.counts[r]}`).join('')}`}</title>
              {series.results.map((r) => {
                const n = b.counts[r] ?? 0;
                if (!n) return null;
                const y0 = y(acc);
                acc += n;
                return <rect key={r} x={x} width={barW} y={y(acc)} height={Math.max(0, y0 - y(acc))} className={`fill-${r}`} />;
              })}
              {i % labelEvery === 0 ? (
                <text x={x + barW / 2} y={H - 8} textAnchor="middle" className="axis">
                  {bucketLabel(b.start, range)}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul className="legend" aria-label="Results">
          {series.results.map((r) => (
            <li key={r}>
              <svg width="12" height="12" aria-hidden="true">
                <rect width="12" height="12" rx="2" className={`fill-${r}`} />
              </svg>{' '}
              {r}
            </li>
          ))}
        </ul>
      </figcaption>
      <table className="visually-hidden">
        <caption>Calls per period and result</caption>
        <thead>
          <tr>
            <th scope="col">Period starting</th>
            <th scope="col">Total</th>
            {series.results.map((r) => (
              <th key={r} scope="col">
                {r}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {series.buckets
            .filter((b) => b.total > 0)
            .map((b) => (
              <tr key={b.start}>
                <th scope="row">{bucketLabel(b.start, range)}</th>
                <td>{b.total}</td>
                {series.results.map((r) => (
                  <td key={r}>{b.counts[r] ?? 0}</td>
                ))}
              </tr>
            ))}
        </tbody>
      </table>
    </figure>
  );
}
