/**
 * The cloud gateway's targets (docs/performance.md), side by side in one run, on PGlite, on a
 * PostgreSQL cluster this benchmark starts with durable settings, and
 * (when DATABASE_URL is set, e.g. `bash scripts/with-postgres.sh npm run bench -- cloud-bench`)
 * on that server too:
 *   - usage events recorded per second one by one vs in batches of 100 (target: batches >= 20x faster per event);
 *   - p50 of a signed entitlements/check vs a bare node:http JSON echo (target: <= 3x).
 * One keep-alive node:http client for everything, signing with the tests' independent helper.
 */
import { randomUUID } from 'node:crypto';
import { uuidv7 } from '../../main/lib/ids.ts';
import { freshDatabaseUrl, startHarness, type Harness } from '../cloud/helpers/cloud-harness.ts';
import { closePooledPglites } from '../cloud/helpers/pglite-pool.ts';
import { closeClient, echoServer, licensedSite, send, signed, timed } from './cloud-bench-client.ts';
import { startDurablePostgres } from './durable-postgres.ts';
import { printTable, summarize } from './stats.ts';

async function bench(label: string, h: Harness, echoUrl: string) {
  const { site_id, creds } = await licensedSite(h);
  const ev = () => ({
    event_id: uuidv7(),
    event: 'mcp.tool.called',
    site_id,
    product: 'mcp',
    feature: 'mcp.core',
    units: 1,
    timestamp: new Date().toISOString(),
  });
  const record = (body: unknown) =>
    signed(creds, `${h.gateway}/usage/record`, 'POST', JSON.stringify(body), { 'Idempotency-Key': randomUUID() });

  // warm-up: JIT, connections, the database's plans and caches
  for (let i = 0; i < 30; i++) await record(ev());
  for (let i = 0; i < 3; i++) await record({ events: Array.from({ length: 100 }, ev) });

  const ONE = 300;
  const BATCHES = 20;
  const oneTimes = await timed(ONE, () => record(ev()));
  const batchTimes = await timed(BATCHES, () => record({ events: Array.from({ length: 100 }, ev) }));
  const perEventOne = oneTimes.reduce((a, b) => a + b, 0) / ONE;
  const perEventBatch = batchTimes.reduce((a, b) => a + b, 0) / (BATCHES * 100);

  const checkBody = JSON.stringify({ feature: 'mcp.core' });
  for (let i = 0; i < 50; i++) {
    await signed(creds, `${h.gateway}/entitlements/check`, 'POST', checkBody);
    await send(echoUrl, 'POST', {}, checkBody);
  }
  const N = 500;
  // interleaved, so load from other processes hits both sides alike
  const check: number[] = [];
  const echo: number[] = [];
  // CPU time of this process (client, gateway, echo and PGlite all run in it) per request: on a loaded,
  // shared machine wall times swing with other processes, CPU time much less (PostgreSQL's own is not in it).
  let checkCpu = 0;
  let echoCpu = 0;
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  for (let i = 0; i < N; i++) {
    let c0 = cpu();
    let t = performance.now();
    await signed(creds, `${h.gateway}/entitlements/check`, 'POST', checkBody);
    check.push(performance.now() - t);
    checkCpu += cpu() - c0;
    c0 = cpu();
    t = performance.now();
    await send(echoUrl, 'POST', {}, checkBody);
    echo.push(performance.now() - t);
    echoCpu += cpu() - c0;
  }
  const c = summarize(check);
  const e = summarize(echo);
  printTable(
    `usage/record on ${label}`,
    ['mode', 'events', 'ms per event', 'events/s'],
    [
      ['one by one', ONE, perEventOne, Math.round(1000 / perEventOne)],
      ['batches of 100', BATCHES * 100, perEventBatch, Math.round(1000 / perEventBatch)],
      ['ratio (target >= 20x)', '', `${(perEventOne / perEventBatch).toFixed(1)}x`, ''],
    ],
  );
  printTable(
    `signed entitlements/check vs bare node:http echo on ${label}`,
    ['request', 'n', 'p50 ms', 'p99 ms', 'CPU ms/request (this process)'],
    [
      ['entitlements/check (signed)', c.n, c.p50, c.p99, checkCpu / N],
      ['node:http JSON echo', e.n, e.p50, e.p99, echoCpu / N],
      ['ratio (target: p50 <= 3x)', '', `${(c.p50 / e.p50).toFixed(2)}x`, '', `${(checkCpu / echoCpu).toFixed(2)}x`],
    ],
  );
  return { batchRatio: perEventOne / perEventBatch, p50Ratio: c.p50 / e.p50 };
}

const echo = await echoServer();
const results: Array<[string, { batchRatio: number; p50Ratio: number }]> = [];
const quiet = { rateLimits: { perAddress: 0, perSite: 0, register: 0 } };
{
  const h = await startHarness({ ...quiet, databaseUrl: undefined });
  results.push(['PGlite', await bench('PGlite (embedded, in memory)', h, echo.url)]);
  await h.stop();
}
{
  // Durable settings (fsync and synchronous_commit on), as production runs: every commit waits for the disk.
  const cluster = await startDurablePostgres();
  if (cluster) {
    try {
      const h = await startHarness({ ...quiet, databaseUrl: cluster.url });
      results.push([
        'PostgreSQL, durable',
        await bench('PostgreSQL (server on 127.0.0.1, fsync on, synchronous_commit on)', h, echo.url),
      ]);
      await h.stop();
    } finally {
      cluster.stop();
    }
  } else console.log('\n(durable PostgreSQL skipped: no server binaries under /usr/lib/postgresql)');
}
if (process.env.DATABASE_URL) {
  const h = await startHarness({ ...quiet, databaseUrl: await freshDatabaseUrl() });
  results.push([
    'PostgreSQL, DATABASE_URL',
    await bench('PostgreSQL (DATABASE_URL; with-postgres.sh runs fsync off)', h, echo.url),
  ]);
  await h.stop();
}
echo.close();
closeClient();
printTable(
  'cloud gateway targets',
  ['database', 'batch speed-up (>= 20x)', 'check/echo p50 (<= 3x)'],
  results.map(([db, r]) => [
    db,
    `${r.batchRatio.toFixed(1)}x ${r.batchRatio >= 20 ? 'ok' : 'MISSED'}`,
    `${r.p50Ratio.toFixed(2)}x ${r.p50Ratio <= 3 ? 'ok' : 'MISSED'}`,
  ]),
);
// The harnesses' databases stay pooled for the next harness; closed, so the process ends.
await closePooledPglites();
