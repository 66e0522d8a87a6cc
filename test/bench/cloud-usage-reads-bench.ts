/**
 * The usage read targets (docs/performance.md), side by side in one run: usage/summary and
 * usage/history for one site at 10k, 100k and 1M events (seeded with SQL,
 * generate_series, not through the API), on a PostgreSQL cluster started
 * with durable settings and on PGlite (target: 1M within 2x of 10k, under
 * 50 ms p50 on PostgreSQL). On PGlite, also another site's usage/record
 * alone and while the first site's summary and history run without pause
 * (target: reads never stall writes for long).
 */
import { randomUUID } from 'node:crypto';
import { uuidv7 } from '../../main/lib/ids.ts';
import { startHarness, type Harness } from '../cloud/helpers/cloud-harness.ts';
import { closePooledPglites } from '../cloud/helpers/pglite-pool.ts';
import { closeClient, licensedSite, resetClient, signed, timed } from './cloud-bench-client.ts';
import { rawRequest } from '../cloud/helpers/client.ts';
import { startDurablePostgres } from './durable-postgres.ts';
import { printTable, summarize } from './stats.ts';
import { signHeaders } from '../cloud/helpers/sign.ts';

const SIZES = [10_000, 100_000, 1_000_000];
const SEED_CHUNK = 100_000;

/** Events `from`..`to` of one site, spread over the last 60 days, two products, tokens on half of them. */
async function seed(h: Harness, siteId: string, from: number, to: number): Promise<void> {
  for (let lo = from; lo < to; lo += SEED_CHUNK) {
    await h.svc.ctx.db.query(
      `INSERT INTO usage_events (site_id, event_id, event, product, feature, model, units, tokens_input, tokens_output, units_metric, occurred_at, received_at)
       SELECT $1, 'seed-' || g, CASE WHEN g % 3 = 0 THEN 'translation.page.translated' ELSE 'mcp.tool.called' END,
              CASE WHEN g % 3 = 0 THEN 'verto' ELSE 'mcp' END, CASE WHEN g % 3 = 0 THEN 'verto.translate' ELSE 'mcp.core' END, '',
              CASE WHEN g % 3 = 0 THEN 100 ELSE 1 END, (g % 2) * 20, (g % 2) * 5,
              CASE WHEN g % 3 = 0 THEN 'translation_characters' ELSE 'mcp_actions' END,
              $2::timestamptz - (g % 60) * interval '1 day' - (g % 86400) * interval '1 second', $2::timestamptz
         FROM generate_series($3::bigint, $4::bigint - 1) AS g`,
      [siteId, new Date(), lo, Math.min(to, lo + SEED_CHUNK)],
    );
  }
  await h.svc.ctx.db.query('ANALYZE usage_events');
  await h.svc.ctx.db.query('ANALYZE usage_rollups');
}

async function bench(label: string, h: Harness) {
  const { site_id, creds } = await licensedSite(h);
  const get = (path: string, query: string) => signed(creds, `${h.gateway}/${path}?${query}`, 'GET', '');
  const rows: Array<Array<string | number>> = [];
  const p50s: Array<{ summary: number; history: number }> = [];
  let seeded = 0;
  for (const n of SIZES) {
    const t = performance.now();
    await seed(h, site_id, seeded, n);
    const seedMs = performance.now() - t;
    resetClient();
    seeded = n;
    for (let i = 0; i < 10; i++) {
      await get('usage/summary', 'period=month');
      await get('usage/history', 'period=day&limit=100');
    }
    const summary: number[] = [];
    const history: number[] = [];
    for (let i = 0; i < 60; i++) {
      summary.push(...(await timed(1, () => get('usage/summary', 'period=month'))));
      history.push(...(await timed(1, () => get('usage/history', 'period=day&limit=100'))));
    }
    const s = summarize(summary);
    const hi = summarize(history);
    p50s.push({ summary: s.p50, history: hi.p50 });
    rows.push([n, Math.round(seedMs), s.p50, s.p99, hi.p50, hi.p99]);
  }
  const first = p50s[0]!;
  const last = p50s.at(-1)!;
  rows.push([
    `ratio ${SIZES.at(-1)} / ${SIZES[0]} (target <= 2x)`,
    '',
    `${(last.summary / first.summary).toFixed(2)}x`,
    '',
    `${(last.history / first.history).toFixed(2)}x`,
    '',
  ]);
  printTable(
    `usage reads for one site on ${label}`,
    ['events', 'seed ms', 'summary p50 ms', 'summary p99', 'history p50 ms', 'history p99'],
    rows,
  );
  return { site_id, creds, last };
}

/** Another site's single-event usage/record, alone and while the big site's reads run back to back. */
async function writesUnderReads(h: Harness, reader: { creds: { key_id: string; secret: string } }) {
  const { site_id, creds } = await licensedSite(h);
  const record = () => {
    const body = JSON.stringify({
      event_id: uuidv7(),
      event: 'mcp.tool.called',
      site_id,
      product: 'mcp',
      feature: 'mcp.core',
      units: 1,
      timestamp: new Date().toISOString(),
    });
    return signed(creds, `${h.gateway}/usage/record`, 'POST', body, { 'Idempotency-Key': randomUUID() });
  };
  for (let i = 0; i < 20; i++) await record();
  const alone = summarize(await timed(100, record));
  let reading = true;
  const readLoop = (async () => {
    while (reading) {
      for (const q of ['usage/summary?period=month', 'usage/history?period=day&limit=100']) {
        const url = `${h.gateway}/${q}`;
        // Another connection (node's global agent), so the reads and the writes really overlap.
        await rawRequest(url, 'GET', signHeaders(reader.creds, { method: 'GET', url, body: '' }));
      }
    }
  })();
  const during = summarize(await timed(100, record));
  reading = false;
  await readLoop;
  printTable(
    "PGlite: another site's usage/record while one site's summary and history (1M events) run back to back",
    ['writes', 'n', 'p50 ms', 'p99 ms'],
    [
      ['alone', alone.n, alone.p50, alone.p99],
      ['during reads', during.n, during.p50, during.p99],
      ['ratio of p50', '', `${(during.p50 / alone.p50).toFixed(2)}x`, ''],
    ],
  );
}

const quiet = { rateLimits: { perAddress: 0, perSite: 0, register: 0 } };
const results: Array<[string, { summary: number; history: number }]> = [];
{
  const cluster = await startDurablePostgres();
  if (cluster) {
    try {
      const h = await startHarness({ ...quiet, databaseUrl: cluster.url });
      results.push(['PostgreSQL, durable', (await bench('PostgreSQL (fsync on, synchronous_commit on)', h)).last]);
      await h.stop();
    } finally {
      cluster.stop();
    }
  } else console.log('\n(PostgreSQL skipped: no server binaries under /usr/lib/postgresql)');
}
{
  const h = await startHarness({ ...quiet, databaseUrl: undefined });
  const big = await bench('PGlite (embedded, in memory)', h);
  results.push(['PGlite', big.last]);
  await writesUnderReads(h, big);
  await h.stop();
}
closeClient();
printTable(
  `usage reads at ${SIZES.at(-1)} events`,
  ['database', 'summary p50 ms (< 50)', 'history p50 ms (< 50)'],
  results.map(([db, r]) => [
    db,
    `${r.summary.toFixed(1)} ${r.summary < 50 ? 'ok' : 'MISSED'}`,
    `${r.history.toFixed(1)} ${r.history < 50 ? 'ok' : 'MISSED'}`,
  ]),
);
// The harnesses' databases stay pooled for the next harness; closed, so the process ends.
await closePooledPglites();
