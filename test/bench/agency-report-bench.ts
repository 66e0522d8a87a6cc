/**
 * The agency report's figure, on PGlite and (when DATABASE_URL is set, e.g.
 * `bash scripts/with-postgres.sh npm run bench -- agency-report`) on
 * PostgreSQL: an agency with 200 sites and 1,000,000 usage events (seeded
 * with SQL, not a million HTTP calls), then `POST agency/reports` timed until
 * the task says done, for a monthly and a daily roll-up over 30 days, and one
 * page of `agency/usage` for comparison. Another account's 100,000 events sit
 * in the same tables, as they would in a shared gateway.
 */
import { request } from 'node:http';
import { freshDatabaseUrl, startHarness, type Harness } from '../cloud/helpers/cloud-harness.ts';
import { closePooledPglites } from '../cloud/helpers/pglite-pool.ts';
import { printTable } from './stats.ts';

const SITES = 200;
const EVENTS = 1_000_000;
const DAYS = 30;

function call(
  url: string,
  key: string,
  method = 'GET',
  body?: unknown,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answers of several endpoints
): Promise<{ status: number; body: any; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res
          .on('data', (c: Buffer) => chunks.push(c))
          .on('end', () => {
            const text = Buffer.concat(chunks).toString();
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              // CSV
            }
            resolve({ status: res.statusCode ?? 0, body: parsed, bytes: Buffer.byteLength(text) });
          });
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** 200 sites of one account on one license, and `events` events spread over the last 30 days, in SQL. */
async function seed(
  h: Harness,
  prefix: string,
  sites: number,
  events: number,
): Promise<{ accountId: string; key: string }> {
  const lic = await h.op<{ id: string; account_id: string }>('licenses.create', { plan: 'agency', sites });
  const db = h.svc.ctx.db;
  await db.query(
    `INSERT INTO sites (id, key_id, secret_enc, url, name, environment, status, license_id, account_id, version, last_sync_at, created_at)
     SELECT $1 || g, $1 || 'key' || g, NULL, 'https://site' || g || '.example', 'Site ' || g, 'production', 'active', $2, $3, '1.0.' || (g % 7), now(), now()
       FROM generate_series(1, $4) g`,
    [prefix, lic.id, lic.account_id, sites],
  );
  const BATCH = 100_000;
  for (let done = 0; done < events; done += BATCH) {
    await db.query(
      `INSERT INTO usage_events (site_id, event_id, event, product, feature, model, units, tokens_input, tokens_output, units_metric, occurred_at, received_at)
       SELECT $1 || (1 + (g / 5) % $3), $1 || 'ev' || g,
              (ARRAY['mcp.tool.called', 'ai.generation.completed', 'translation.page.done', 'indexing.page.queued', 'report.generated'])[1 + g % 5],
              (ARRAY['mcp', 'pro', 'verto', 'aeo', 'aeo'])[1 + g % 5],
              (ARRAY['mcp.core', 'ai.generate', 'verto.translate', 'seo.analyze', 'aeo.reports'])[1 + g % 5],
              '', CASE WHEN g % 5 = 1 THEN 1 ELSE 1 + g % 50 END,
              CASE WHEN g % 5 = 1 THEN 100 + g % 400 ELSE 0 END, CASE WHEN g % 5 = 1 THEN 50 + g % 200 ELSE 0 END,
              (ARRAY['mcp_actions', NULL, 'translation_characters', 'indexing_requests', 'reports'])[1 + g % 5],
              now() - ((g * 7919) % ($5 * 86400)) * interval '1 second', now()
         FROM generate_series($2::bigint + 1, $2::bigint + $4) g`,
      [prefix, done, sites, Math.min(BATCH, events - done), DAYS],
    );
  }
  await db.query('ANALYZE usage_events');
  await db.query('ANALYZE sites');
  const key = await h.op<{ account_key: string }>('accounts.keys.create', { account: lic.account_id });
  return { accountId: lic.account_id, key: key.account_key };
}

async function report(h: Harness, key: string, period: 'month' | 'day') {
  const from = new Date(Date.now() - DAYS * 86_400_000).toISOString();
  const to = new Date(Date.now() + 60_000).toISOString();
  const t = performance.now();
  const created = await call(`${h.gateway}/agency/reports`, key, 'POST', { period, from, to });
  if (created.status !== 202) throw new Error(`report: ${created.status} ${JSON.stringify(created.body)}`);
  for (;;) {
    const r = await call(`${h.gateway}/agency/reports/${created.body.task.id}`, key);
    if (r.body.task.status === 'done' || r.body.task.status === 'failed') {
      const ms = performance.now() - t;
      if (r.body.task.status === 'failed') throw new Error(`report failed: ${r.body.task.error}`);
      const csv = await call(`${h.gateway}/agency/reports/${created.body.task.id}/csv`, key);
      const task = r.body.task;
      return {
        ms,
        taskMs: Date.parse(task.finished_at) - Date.parse(task.started_at),
        rows: task.rows,
        jsonBytes: r.bytes,
        csvBytes: csv.bytes,
        events: Object.values(r.body.report.totals as Record<string, number>).length,
      };
    }
    await new Promise((res) => setTimeout(res, 100));
  }
}

async function bench(label: string, h: Harness) {
  let t = performance.now();
  const agency = await seed(h, 's', SITES, EVENTS);
  await seed(h, 'x', 10, EVENTS / 10);
  const seedMs = performance.now() - t;
  const month = await report(h, agency.key, 'month');
  const day = await report(h, agency.key, 'day');
  t = performance.now();
  const page = await call(
    `${h.gateway}/agency/usage?period=month&from=${encodeURIComponent(new Date(Date.now() - DAYS * 86_400_000).toISOString())}&limit=1000`,
    agency.key,
  );
  const pageMs = performance.now() - t;
  if (page.status !== 200) throw new Error(`agency/usage ${page.status}`);
  printTable(
    `agency report, ${SITES} sites and ${EVENTS.toLocaleString('en')} events, on ${label} (seeding took ${(seedMs / 1000).toFixed(1)} s)`,
    ['what', 'wall ms', 'task ms', 'rows', 'JSON bytes', 'CSV bytes'],
    [
      [
        'report, period=month (queued to done)',
        Math.round(month.ms),
        month.taskMs,
        month.rows,
        month.jsonBytes,
        month.csvBytes,
      ],
      ['report, period=day (queued to done)', Math.round(day.ms), day.taskMs, day.rows, day.jsonBytes, day.csvBytes],
      ['agency/usage, one page of 1000 (month)', Math.round(pageMs), '', page.body.items.length, page.bytes, ''],
    ],
  );
  return { month: month.ms, day: day.ms };
}

const results: Array<[string, { month: number; day: number }]> = [];
const quiet = { rateLimits: { perAddress: 0, perSite: 0, register: 0 } };
{
  const h = await startHarness({ ...quiet, databaseUrl: undefined });
  results.push(['PGlite', await bench('PGlite (embedded, in memory)', h)]);
  await h.stop();
}
if (process.env.DATABASE_URL) {
  const h = await startHarness({ ...quiet, databaseUrl: await freshDatabaseUrl() });
  results.push(['PostgreSQL', await bench('PostgreSQL (server on 127.0.0.1)', h)]);
  await h.stop();
} else {
  console.log(
    '\n(PostgreSQL skipped: run `bash scripts/with-postgres.sh npm run bench -- agency-report` to include it)',
  );
}
printTable(
  'agency report generation (200 sites, 1,000,000 events)',
  ['database', 'month report s', 'day report s'],
  results.map(([db, r]) => [db, (r.month / 1000).toFixed(2), (r.day / 1000).toFixed(2)]),
);
// The harnesses' databases stay pooled for the next harness; closed, so the process ends.
await closePooledPglites();
