import { DataTable } from '../../components/data-table.tsx';
import type { Range, Series } from './series.ts';
import { RANGES, niceMax } from './series.ts';

const W = 720;
const H = 220;
const PAD = { left: 40, right: 8, top: 10, bottom: 28 };

export function bucketLabel(start: number, range: Range): string {
  const d = new Date(start);
  if (range === '24h') return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  if (range === '7d') return d.toLocaleString(undefined, { weekday: 'short', hour: '2-digit' });
  return d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
}

/** What a chart is of, in words: its title, how a bucket and a key are named, the unit. */
export interface ChartWords {
  title: string;
  bucket: (start: number) => string;
  key: (key: string) => string;
  unit: (n: number) => string;
  /** the legend's and the table's name for the keys ("Results", "Products") */
  keys: string;
  /** the stylesheet class that colours a key */
  fill: (key: string) => string;
}

/** Local calls per bucket and result (the Usage screen's first chart). */
export function UsageChart({ series, range }: { series: Series; range: Range }) {
  const hours = RANGES[range].bucketHours;
  const per = hours === 1 ? 'hour' : hours === 24 ? 'day' : `${hours} hours`;
  return (
    <BarChart
      id="us-chart"
      series={series}
      words={{
        title: `Calls per ${per}, ${RANGES[range].label.toLowerCase()}, by result`,
        bucket: (start) => bucketLabel(start, range),
        key: (r) => r,
        unit: (n) => `${n} call${n === 1 ? '' : 's'}`,
        keys: 'Results',
        fill: (r) => `fill-${r}`,
      }}
    />
  );
}

/**
 * Stacked bars per bucket and key, drawn by hand in SVG (no chart library;
 * colours come from the stylesheet, so dark mode and the CSP both hold). A
 * table with the same figures follows for screen readers.
 */
export function BarChart({ id, series, words }: { id: string; series: Series; words: ChartWords }) {
  const top = niceMax(series.max);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / series.buckets.length;
  const barW = Math.max(2, slot * 0.7);
  const y = (n: number) => PAD.top + plotH - (n / top) * plotH;
  const labelEvery = Math.ceil(series.buckets.length / 8);
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${id}-title`} className="chart-svg">
        <title id={`${id}-title`}>{words.title}</title>
        {[0, top / 2, top].map((tick) => (
          <g key={tick} className="axis">
            <line x1={PAD.left} x2={W - PAD.right} y1={y(tick)} y2={y(tick)} className="grid-line" />
            <text x={PAD.left - 6} y={y(tick) + 4} textAnchor="end">
              {axisNumber(tick)}
            </text>
          </g>
        ))}
        {series.buckets.map((b, i) => {
          const x = PAD.left + i * slot + (slot - barW) / 2;
          let acc = 0;
          return (
            <g key={b.start}>
              <title>{`${words.bucket(b.start)}: ${words.unit(b.total)}${series.results
                .filter((r) => b.counts[r])
                .map((r) => `, ${words.key(r)} ${b.counts[r]}`)
                .join('')}`}</title>
              {series.results.map((r) => {
                const n = b.counts[r] ?? 0;
                if (!n) return null;
                const y0 = y(acc);
                acc += n;
                return (
                  <rect
                    key={r}
                    x={x}
                    width={barW}
                    y={y(acc)}
                    height={Math.max(0, y0 - y(acc))}
                    className={words.fill(r)}
                  />
                );
              })}
              {i % labelEvery === 0 ? (
                <text x={x + barW / 2} y={H - 8} textAnchor="middle" className="axis">
                  {words.bucket(b.start)}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul className="legend" aria-label={words.keys}>
          {series.results.map((r) => (
            <li key={r}>
              <svg width="12" height="12" aria-hidden="true">
                <rect width="12" height="12" rx="2" className={words.fill(r)} />
              </svg>{' '}
              {words.key(r)}
            </li>
          ))}
        </ul>
      </figcaption>
      <DataTable
        className="visually-hidden"
        caption={words.title}
        rows={series.buckets.filter((b) => b.total > 0)}
        rowKey={(b) => String(b.start)}
        columns={[
          { header: 'Period starting', rowHeader: true, cell: (b) => words.bucket(b.start) },
          { header: 'Total', cell: (b) => b.total },
          ...series.results.map((r) => ({
            header: words.key(r),
            cell: (b: (typeof series.buckets)[number]) => b.counts[r] ?? 0,
          })),
        ]}
      />
    </figure>
  );
}

/** Axis ticks: 2.5, 500, 20k, 1.5M (AI tokens run into millions). */
function axisNumber(n: number): string {
  if (n >= 1_000_000) return `${+(n / 1_000_000).toFixed(1)}M`;
  if (n >= 10_000) return `${+(n / 1000).toFixed(1)}k`;
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}
