/**
 * The gateway's AI target, side by side in one run, on PGlite and (when
 * DATABASE_URL is set, e.g. `bash scripts/with-postgres.sh npm run bench -- cloud-ai`)
 * on PostgreSQL: the gateway's added latency on a signed `ai/generate` over
 * calling the fixture provider directly (target: at most 5 ms p50). Both
 * sides go through one keep-alive node:http client; the requests alternate,
 * so load from other processes hits both alike. The gateway's side includes
 * everything it does: signature, grants, routing, the quota hold in SQL
 * before the call, the settlement and the usage event after.
 */
import { Agent, request } from 'node:http';
import { signHeaders, type SiteCredentials } from '../cloud/helpers/sign.ts';
import { freshDatabaseUrl, startHarness, TEST_MASTER_KEY, type Harness } from '../cloud/helpers/cloud-harness.ts';
import { closePooledPglites } from '../cloud/helpers/pglite-pool.ts';
import { startOpenAiFixture, type FixtureProvider } from '../fixtures/ai-providers/fixture-provider.ts';
import { printTable, summarize } from './stats.ts';

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function send(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res
          .on('data', (c: Buffer) => chunks.push(c))
          .on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function bench(label: string, h: Harness, provider: FixtureProvider) {
  await h.op('providers.add', {
    id: 'fixture',
    kind: 'openai',
    base_url: provider.baseUrl,
    api_key_env: 'KEY_FIXTURE',
    models: ['small-1'],
  });
  const reg = JSON.parse(
    (
      await send(
        `${h.gateway}/sites/register`,
        {},
        JSON.stringify({ url: 'https://bench.example', environment: 'production' }),
      )
    ).text,
  );
  const creds: SiteCredentials = { key_id: reg.key_id, secret: reg.secret };
  const lic = await h.op<{ license_key: string }>('licenses.create', { plan: 'enterprise' });
  const act = JSON.stringify({ license_key: lic.license_key });
  await send(
    `${h.gateway}/license/activate`,
    signHeaders(creds, { method: 'POST', url: `${h.gateway}/license/activate`, body: act }),
    act,
  );

  const messages = [
    { role: 'system', content: 'You translate into French.' },
    { role: 'user', content: 'Good morning, how are you today?' },
  ];
  const gatewayBody = JSON.stringify({
    product: 'verto',
    feature: 'verto.translate',
    model: 'small-1',
    max_tokens: 64,
    messages,
  });
  const directBody = JSON.stringify({ model: 'small-1', messages, max_tokens: 64, stream: false });
  const directUrl = `${provider.baseUrl}/chat/completions`;
  const viaGateway = async () => {
    const url = `${h.gateway}/ai/generate`;
    const r = await send(url, signHeaders(creds, { method: 'POST', url, body: gatewayBody }), gatewayBody);
    if (r.status !== 200) throw new Error(`ai/generate: ${r.status} ${r.text.slice(0, 300)}`);
  };
  const direct = async () => {
    const r = await send(directUrl, { authorization: `Bearer ${provider.key}` }, directBody);
    if (r.status !== 200) throw new Error(`provider: ${r.status}`);
  };

  for (let i = 0; i < 60; i++) {
    await viaGateway();
    await direct();
  }
  const N = 400;
  const g: number[] = [];
  const d: number[] = [];
  for (let i = 0; i < N; i++) {
    let t = performance.now();
    await viaGateway();
    g.push(performance.now() - t);
    t = performance.now();
    await direct();
    d.push(performance.now() - t);
  }
  const gs = summarize(g);
  const ds = summarize(d);
  const added = gs.p50 - ds.p50;
  printTable(
    `ai/generate through the gateway vs the fixture provider directly, on ${label}`,
    ['request', 'n', 'p50 ms', 'p99 ms'],
    [
      ['ai/generate (signed, via gateway)', gs.n, gs.p50, gs.p99],
      ['chat/completions (provider directly)', ds.n, ds.p50, ds.p99],
      ['added p50 (target <= 5 ms)', '', added, ''],
    ],
  );
  return added;
}

const results: Array<[string, number]> = [];
const provider = await startOpenAiFixture();
const env = { GATEHOUSE_CLOUD_MASTER_KEY: TEST_MASTER_KEY, KEY_FIXTURE: provider.key };
const quiet = { rateLimits: { perAddress: 0, perSite: 0, register: 0 }, env };
{
  const h = await startHarness({ ...quiet, databaseUrl: undefined });
  results.push(['PGlite', await bench('PGlite (embedded, in memory)', h, provider)]);
  await h.stop();
}
if (process.env.DATABASE_URL) {
  const h = await startHarness({ ...quiet, databaseUrl: await freshDatabaseUrl() });
  results.push(['PostgreSQL', await bench('PostgreSQL (server on 127.0.0.1)', h, provider)]);
  await h.stop();
} else {
  console.log('\n(PostgreSQL skipped: run `bash scripts/with-postgres.sh npm run bench -- cloud-ai` to include it)');
}
await provider.close();
agent.destroy();
printTable(
  'ai/generate added latency',
  ['database', 'added p50 (<= 5 ms)'],
  results.map(([db, ms]) => [db, `${ms.toFixed(2)} ms ${ms <= 5 ? 'ok' : 'MISSED'}`]),
);
// The harnesses' databases stay pooled for the next harness; closed, so the process ends.
await closePooledPglites();
