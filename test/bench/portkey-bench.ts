/**
 * The cloud gateway's targets beside Portkey's open-source gateway (@portkey-ai/gateway,
 * routing only), one run, side by side, each gateway its own process on the
 * same OpenAI-compatible fixture provider:
 *
 * 1. memory: resident set (VmRSS) of `gatehouse-cloud serve` on PGlite and
 *    of Portkey, 3 s after start and idle (once V8's memory reducer has given
 *    the start's peak back, settled-rss.ts), at the peak of a concurrent load,
 *    and again after it (target: gateway <= 100 MB idle, issue 34);
 * 2. added latency over calling the provider directly: a signed `ai/generate`
 *    (signature, grants, routing, hold, settle, usage event) vs Portkey's
 *    `chat/completions` (target: <= 1.5x Portkey's added p50 on PGlite), and
 *    on PostgreSQL with durable settings (fsync and synchronous_commit on, a
 *    cluster of its own, test/bench/durable-postgres.ts; target <= 1.5x
 *    Portkey's as well) when the server binaries are there.
 *
 * The three kinds of request alternate through one keep-alive client, so
 * load from other processes hits them alike. Measures whatever the ledger
 * code is: nothing here is tuned for it. `npm run bench -- portkey`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { sendWith } from './http-send.ts';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHeaders, type SiteCredentials } from '../cloud/helpers/sign.ts';
import { TEST_MASTER_KEY } from '../cloud/helpers/cloud-harness.ts';
import { startOpenAiFixture, type FixtureProvider } from '../fixtures/ai-providers/fixture-provider.ts';
import { printTable, summarize } from './stats.ts';
import { startDurablePostgres } from './durable-postgres.ts';
import { rssMb, settledRssMb } from './settled-rss.ts';

const ROOT = join(import.meta.dirname, '../..');
const CLOUD_BIN = join(ROOT, 'bin/gatehouse-cloud.mjs');
const PORTKEY = join(ROOT, 'node_modules/@portkey-ai/gateway/build/start-server.js');
const agent = new Agent({ keepAlive: true, maxSockets: 32 });
const children: ChildProcess[] = [];

const http = sendWith(agent);
const send = (url: string, headers: Record<string, string>, body?: string, method = 'POST') =>
  http(url, method, headers, body);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

function started(child: ChildProcess): ChildProcess {
  children.push(child);
  child.stderr?.on('data', () => {});
  return child;
}

async function startPortkey(): Promise<{ pid: number; url: string }> {
  const port = await freePort();
  const child = started(
    spawn(process.execPath, [PORTKEY, `--port=${port}`, '--headless'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, NODE_ENV: 'production' },
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if ((await send(url, {}, undefined, 'GET').catch(() => ({ status: 0 }))).status === 200)
      return { pid: child.pid!, url };
    await sleep(100);
  }
  throw new Error('portkey did not start');
}

interface Gateway {
  pid: number;
  gateway: string;
  creds: SiteCredentials;
  env: NodeJS.ProcessEnv;
  dataDir: string;
  databaseUrl?: string;
}

async function startGateway(provider: FixtureProvider, databaseUrl?: string, existingDir?: string): Promise<Gateway> {
  const dataDir = existingDir ?? (await mkdtemp(join(tmpdir(), 'gh-bench-rss-')));
  const env = {
    ...process.env,
    GATEHOUSE_CLOUD_MASTER_KEY: TEST_MASTER_KEY,
    KEY_FIXTURE: provider.key,
    GATEHOUSE_CLOUD_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl ?? '',
  };
  const args = [
    CLOUD_BIN,
    'serve',
    '--port',
    '0',
    '--json',
    '--log-level',
    'warn',
    '--rate-limit-address',
    '0',
    '--rate-limit-site',
    '0',
    '--rate-limit-register',
    '0',
  ];
  const child = started(spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c));
  let gateway = '';
  for (let i = 0; i < 1200 && !gateway; i++) {
    await sleep(100);
    try {
      gateway = JSON.parse(out).gateway_url;
    } catch {
      if (child.exitCode !== null) throw new Error(`gatehouse-cloud serve exited ${child.exitCode}`);
    }
  }
  return { pid: child.pid!, gateway, creds: { key_id: '', secret: '' }, env, dataDir, databaseUrl };
}

/** The operator's set-up through the real CLI, then a site with an enterprise license. */
async function setUp(g: Gateway, provider: FixtureProvider): Promise<void> {
  const op = (...a: string[]) => {
    const r = spawnSync(process.execPath, [CLOUD_BIN, ...a, '--json'], { env: g.env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${a.join(' ')}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  op(
    'providers',
    'add',
    'fixture',
    '--kind',
    'openai',
    '--base-url',
    provider.baseUrl,
    '--api-key-env',
    'KEY_FIXTURE',
    '--models',
    'small-1',
  );
  const lic = op('licenses', 'create', '--plan', 'enterprise');
  const reg = JSON.parse(
    (
      await send(
        `${g.gateway}/sites/register`,
        {},
        JSON.stringify({ url: 'https://bench.example', environment: 'production' }),
      )
    ).text,
  );
  g.creds = { key_id: reg.key_id, secret: reg.secret };
  const act = JSON.stringify({ license_key: lic.license_key });
  const r = await send(
    `${g.gateway}/license/activate`,
    signHeaders(g.creds, { method: 'POST', url: `${g.gateway}/license/activate`, body: act }),
    act,
  );
  if (r.status !== 200) throw new Error(`activate: ${r.status} ${r.text}`);
}

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
const openAiBody = JSON.stringify({ model: 'small-1', messages, max_tokens: 64, stream: false });

function callers(provider: FixtureProvider, portkey: { url: string }, g: Gateway) {
  const ok = (what: string) => (r: { status: number; text: string }) => {
    if (r.status !== 200) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 300)}`);
  };
  const url = `${g.gateway}/ai/generate`;
  return {
    direct: () =>
      send(`${provider.baseUrl}/chat/completions`, { authorization: `Bearer ${provider.key}` }, openAiBody).then(
        ok('provider'),
      ),
    portkey: () =>
      send(
        `${portkey.url}/v1/chat/completions`,
        {
          authorization: `Bearer ${provider.key}`,
          'x-portkey-provider': 'openai',
          'x-portkey-custom-host': provider.baseUrl,
        },
        openAiBody,
      ).then(ok('portkey')),
    gateway: () =>
      send(url, signHeaders(g.creds, { method: 'POST', url, body: gatewayBody }), gatewayBody).then(ok('ai/generate')),
  };
}

async function latency(label: string, c: ReturnType<typeof callers>, withPortkey: boolean) {
  const kinds = withPortkey ? (['direct', 'portkey', 'gateway'] as const) : (['direct', 'gateway'] as const);
  for (let i = 0; i < 60; i++) for (const k of kinds) await c[k]();
  const samples: Record<string, number[]> = { direct: [], portkey: [], gateway: [] };
  for (let i = 0; i < 400; i++) {
    for (const k of kinds) {
      const t = performance.now();
      await c[k]();
      samples[k]!.push(performance.now() - t);
    }
  }
  const s = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, summarize(v)]));
  const addedGateway = s.gateway!.p50 - s.direct!.p50;
  const addedPortkey = withPortkey ? s.portkey!.p50 - s.direct!.p50 : NaN;
  printTable(
    `added latency over the provider, ${label}`,
    ['request', 'n', 'p50 ms', 'p99 ms', 'added p50 ms'],
    [
      ['provider directly (chat/completions)', s.direct!.n, s.direct!.p50, s.direct!.p99, ''],
      ...(withPortkey
        ? [
            ['Portkey gateway (routing only)', s.portkey!.n, s.portkey!.p50, s.portkey!.p99, addedPortkey] as Array<
              string | number
            >,
          ]
        : []),
      ['gatehouse ai/generate (signed, metered)', s.gateway!.n, s.gateway!.p50, s.gateway!.p99, addedGateway],
    ],
  );
  return { addedGateway, addedPortkey };
}

/** `total` requests, `concurrency` at a time, RSS sampled every 100 ms: the peak. */
async function load(pid: number, call: () => Promise<void>, total = 3000, concurrency = 16): Promise<number> {
  let peak = rssMb(pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) await call();
    }),
  );
  clearInterval(sampler);
  return Math.max(peak, rssMb(pid));
}

async function stopChild(pid: number) {
  const child = children.find((c) => c.pid === pid)!;
  if (child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

const provider = await startOpenAiFixture();
try {
  const portkey = await startPortkey();
  // The first start creates the embedded database (initdb); an operator's gateway is idle after a restart.
  const first = await startGateway(provider);
  await sleep(3000);
  const firstStart = rssMb(first.pid);
  await setUp(first, provider);
  await stopChild(first.pid);
  const g = await startGateway(provider, undefined, first.dataDir);
  g.creds = first.creds;
  await sleep(3000);
  const idle = { gateway: rssMb(g.pid), portkey: rssMb(portkey.pid) };
  // Idle as a person's machine sees it: once V8's memory reducer has given the start's peak back (settled-rss.ts).
  const settled = async () => {
    const [gateway, portkeyMb] = await Promise.all([settledRssMb(g.pid), settledRssMb(portkey.pid)]);
    return { gateway: gateway?.mb ?? NaN, portkey: portkeyMb?.mb ?? NaN };
  };
  const idleSettled = await settled();
  const c = callers(provider, portkey, g);
  const pglite = await latency('gateway on PGlite (embedded, files in its data dir)', c, true);
  const peak = { gateway: await load(g.pid, c.gateway), portkey: await load(portkey.pid, c.portkey) };
  await sleep(5000);
  const after = { gateway: rssMb(g.pid), portkey: rssMb(portkey.pid) };
  const afterSettled = await settled();
  printTable(
    'resident memory (VmRSS, MiB)',
    [
      'process',
      '3 s after start',
      'idle after start',
      'peak under load (16 at once, 3000 requests)',
      '5 s after load',
      'idle after load',
    ],
    [
      [
        'gatehouse-cloud serve (PGlite)',
        idle.gateway,
        idleSettled.gateway,
        peak.gateway,
        after.gateway,
        afterSettled.gateway,
      ],
      ['Portkey gateway', idle.portkey, idleSettled.portkey, peak.portkey, after.portkey, afterSettled.portkey],
    ],
  );
  console.log(
    `(the gateway's very first start, which creates the embedded database: ${firstStart.toFixed(0)} MiB 3 s after it started)`,
  );
  await stopChild(g.pid);
  await rm(g.dataDir, { recursive: true, force: true });

  const rows: Array<Array<string | number>> = [
    [
      'gateway RSS idle on PGlite (<= 100 MB)',
      `${idleSettled.gateway.toFixed(0)} MiB (Portkey ${idleSettled.portkey.toFixed(0)} MiB)`,
      idleSettled.gateway <= 100 ? 'ok' : 'MISSED',
    ],
    [
      'ai/generate added p50 vs Portkey on PGlite (<= 1.5x)',
      `${pglite.addedGateway.toFixed(2)} ms vs ${pglite.addedPortkey.toFixed(2)} ms = ${(pglite.addedGateway / pglite.addedPortkey).toFixed(2)}x`,
      pglite.addedGateway <= 1.5 * pglite.addedPortkey ? 'ok' : 'MISSED',
    ],
  ];
  const pg = await startDurablePostgres().catch(
    (e: Error) => (console.log(`\n(durable PostgreSQL skipped: ${e.message.split('\n')[0]})`), null),
  );
  if (pg) {
    try {
      const gp = await startGateway(provider, pg.url);
      await setUp(gp, provider);
      const durable = await latency(
        'gateway on PostgreSQL (durable: fsync, synchronous_commit on)',
        callers(provider, portkey, gp),
        true,
      );
      rows.push([
        'ai/generate added p50 vs Portkey on durable PostgreSQL (<= 1.5x)',
        `${durable.addedGateway.toFixed(2)} ms vs ${durable.addedPortkey.toFixed(2)} ms = ${(durable.addedGateway / durable.addedPortkey).toFixed(2)}x`,
        durable.addedGateway <= 1.5 * durable.addedPortkey ? 'ok' : 'MISSED',
      ]);
      await stopChild(gp.pid);
      await rm(gp.dataDir, { recursive: true, force: true });
    } finally {
      pg.stop();
    }
  }
  printTable('gateway targets beside Portkey', ['target', 'measured', ''], rows);
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  await provider.close();
  agent.destroy();
}
