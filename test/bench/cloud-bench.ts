/**
 * Issue 11's cloud gateway targets, side by side in one run, on PGlite and (when
 * DATABASE_URL is set, e.g. `bash scripts/with-postgres.sh npm run bench -- cloud`)
 * on PostgreSQL:
 *   - usage events recorded per second one by one vs in batches of 100 (target: batches >= 20x faster per event);
 *   - p50 of a signed entitlements/check vs a bare node:http JSON echo (target: <= 3x).
 * One keep-alive node:http client for everything, signing with the tests' independent helper.
 */
import { createServer, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { uuidv7 } from '../../main/lib/ids.ts';
import { signHeaders, type SiteCredentials } from '../cloud/helpers/sign.ts';
import { freshDatabaseUrl, startHarness, type Harness } from '../cloud/helpers/cloud-harness.ts';
import { printTable, summarize } from './stats.ts';
import { sendWith } from './http-send.ts';

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

const send = sendWith(agent);

async function signed(creds: SiteCredentials, url: string, method: string, body: string, extra: Record<string, string> = {}) {
  const r = await send(url, method, { ...signHeaders(creds, { method, url, body }), ...extra }, body);
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${r.text.slice(0, 200)}`);
  return r;
}

async function echoServer(): Promise<{ url: string; close(): void }> {
  const s = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
      const text = JSON.stringify({ success: true, echo: JSON.parse(Buffer.concat(chunks).toString() || '{}') });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/echo`, close: () => s.close() };
}

async function timed(n: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  return out;
}

async function bench(label: string, h: Harness, echoUrl: string) {
  const reg = JSON.parse((await send(`${h.gateway}/sites/register`, 'POST', {}, JSON.stringify({ url: 'https://bench.example', environment: 'production' }))).text);
  const creds = { key_id: reg.key_id, secret: reg.secret };
  const lic = await h.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
  await signed(creds, `${h.gateway}/license/activate`, 'POST', JSON.stringify({ license_key: lic.license_key }));
  const ev = () => ({ event_id: uuidv7(), event: 'mcp.tool.called', site_id: reg.site_id, product: 'mcp', feature: 'mcp.core', units: 1, timestamp: new Date().toISOString() });
  const record = (body: unknown) => signed(creds, `${h.gateway}/usage/record`, 'POST', JSON.stringify(body), { 'Idempotency-Key': randomUUID() });

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
  for (let i = 0; i < N; i++) {
    let t = performance.now();
    await signed(creds, `${h.gateway}/entitlements/check`, 'POST', checkBody);
    check.push(performance.now() - t);
    t = performance.now();
    await send(echoUrl, 'POST', {}, checkBody);
    echo.push(performance.now() - t);
  }
  const c = summarize(check);
  const e = summarize(echo);
  printTable(`usage/record on ${label}`, ['mode', 'events', 'ms per event', 'events/s'], [
    ['one by one', ONE, perEventOne, Math.round(1000 / perEventOne)],
    ['batches of 100', BATCHES * 100, perEventBatch, Math.round(1000 / perEventBatch)],
    ['ratio (target >= 20x)', '', `${(perEventOne / perEventBatch).toFixed(1)}x`, ''],
  ]);
  printTable(`signed entitlements/check vs bare node:http echo on ${label}`, ['request', 'n', 'p50 ms', 'p99 ms'], [
    ['entitlements/check (signed)', c.n, c.p50, c.p99],
    ['node:http JSON echo', e.n, e.p50, e.p99],
    ['ratio of p50 (target <= 3x)', '', `${(c.p50 / e.p50).toFixed(2)}x`, ''],
  ]);
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
if (process.env.DATABASE_URL) {
  const h = await startHarness({ ...quiet, databaseUrl: await freshDatabaseUrl() });
  results.push(['PostgreSQL', await bench('PostgreSQL (server on 127.0.0.1)', h, echo.url)]);
  await h.stop();
} else {
  console.log('\n(PostgreSQL skipped: run `bash scripts/with-postgres.sh npm run bench -- cloud` to include it)');
}
echo.close();
agent.destroy();
printTable('cloud gateway targets', ['database', 'batch speed-up (>= 20x)', 'check/echo p50 (<= 3x)'], results.map(([db, r]) => [db, `${r.batchRatio.toFixed(1)}x ${r.batchRatio >= 20 ? 'ok' : 'MISSED'}`, `${r.p50Ratio.toFixed(2)}x ${r.p50Ratio <= 3 ? 'ok' : 'MISSED'}`]));
