/**
 * gatehouse-bridge side by side, in one run, against the same server
 * (@modelcontextprotocol/server-everything over Streamable HTTP, in its own
 * process), with the same SDK client:
 *
 *   direct      the SDK client over HTTP (StreamableHTTPClientTransport)
 *   bridge      the SDK client over stdio -> gatehouse-bridge -> HTTP
 *   mcp-remote  the SDK client over stdio -> mcp-remote -> HTTP
 *
 * Figures: cold start (spawn to initialize answered), tools/call p50/p99,
 * calls/s with 8 concurrent callers, a 512 KB echo round trip, and the peak
 * RSS (VmHWM) of the bridging process. Targets for the bridge: p50 <= 1.15x
 * direct, cold start < 120 ms, peak RSS < 60 MB, calls/s >= 0.9x direct, and
 * ahead of mcp-remote on every figure.
 *
 * Run: npx tsx test/bench/bridge-bench.ts   (BENCH_CALLS, BENCH_STARTS to scale)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { clientEntry } from '../../main/contract/client-config.ts';
import { ensureBundle } from '../bridge/helpers/bundle.ts';
import { freePort } from '../bridge/helpers/everything.ts';
import { printTable, summarize } from './stats.ts';

const root = join(import.meta.dirname, '..', '..');
const CALLS = Number(process.env.BENCH_CALLS ?? 1000);
const STARTS = Number(process.env.BENCH_STARTS ?? 15);
const BIG_ROUNDS = 30;
const CONCURRENCY = 8;
const BIG = 'x'.repeat(512 * 1024);

type Kind = 'direct' | 'bridge' | 'mcp-remote';
interface Figures {
  coldStart: number;
  p50: number;
  p99: number;
  rps: number;
  big: number;
  rssMb: number | undefined;
}

async function startEverything(port: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'streamableHttp'],
    {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('listening on port')) resolve();
    });
    child.once('exit', () => reject(new Error(`server-everything exited: ${err}`)));
  });
  return child;
}

const mcpRemoteConfig = mkdtempSync(join(tmpdir(), 'bench-mcp-remote-'));

function transportFor(kind: Kind, url: string) {
  if (kind === 'direct') return new StreamableHTTPClientTransport(new URL(url));
  const args =
    kind === 'bridge'
      ? // Started exactly as `gatehouse-bridge config` writes it into a client's config.
        (clientEntry(
          'cursor',
          { command: process.execPath, args: [join(root, 'bin', 'gatehouse-bridge.mjs')], platform: process.platform },
          { kind: 'none' },
          ['--url', url, '--log-level', 'warn'],
        ).entry.args as string[])
      : // A static Authorization header keeps mcp-remote from starting an OAuth flow; its state stays in a temp folder.
        [
          join(root, 'node_modules/mcp-remote/dist/proxy.js'),
          url,
          '--transport',
          'http-only',
          '--allow-http',
          '--silent',
          '--header',
          'Authorization: Bearer bench',
        ];
  return new StdioClientTransport({
    command: process.execPath,
    args,
    env: { ...(process.env as Record<string, string>), MCP_REMOTE_CONFIG_DIR: mcpRemoteConfig },
    stderr: 'ignore',
  });
}

async function connect(kind: Kind, url: string): Promise<{ client: Client; pid: number | undefined; ms: number }> {
  const transport = transportFor(kind, url);
  const client = new Client({ name: 'bench', version: '1.0.0' }, { capabilities: {} });
  const t = performance.now();
  await client.connect(transport);
  const ms = performance.now() - t;
  return { client, pid: transport instanceof StdioClientTransport ? (transport.pid ?? undefined) : undefined, ms };
}

function peakRssMb(pid: number | undefined): number | undefined {
  if (pid === undefined || !existsSync(`/proc/${pid}/status`)) return undefined;
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : undefined;
}

async function measure(kind: Kind, url: string): Promise<Figures> {
  const starts: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const c = await connect(kind, url);
    starts.push(c.ms);
    await c.client.close();
  }

  const { client, pid } = await connect(kind, url);
  const echo = (message: string) => client.callTool({ name: 'echo', arguments: { message } });
  for (let i = 0; i < 100; i++) await echo('warm up');

  const lat: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    await echo('hello');
    lat.push(performance.now() - t);
  }

  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < CALLS * 2) await echo('hello');
    }),
  );
  const rps = (CALLS * 2) / ((performance.now() - started) / 1000);

  const big: number[] = [];
  for (let i = 0; i < BIG_ROUNDS; i++) {
    const t = performance.now();
    const r = await echo(BIG);
    big.push(performance.now() - t);
    const text = (r.content as Array<{ text: string }>)[0]!.text;
    if (text.length !== BIG.length + 'Echo: '.length)
      throw new Error(`${kind}: 512 KB echo came back with ${text.length} characters`);
  }

  const rssMb = peakRssMb(pid);
  await client.close();
  const { p50, p99 } = summarize(lat);
  return { coldStart: summarize(starts).p50, p50, p99, rps, big: summarize(big).p50, rssMb };
}

async function main() {
  // Rebuilt when older than the sources: the bin prefers the bundle, so a stale one would be measured instead.
  await ensureBundle();
  const port = await freePort();
  const server = await startEverything(port);
  const url = `http://127.0.0.1:${port}/mcp`;
  const results = {} as Record<Kind, Figures>;
  try {
    for (const kind of ['direct', 'bridge', 'mcp-remote'] as const) {
      process.stderr.write(`measuring ${kind}...\n`);
      results[kind] = await measure(kind, url);
    }
  } finally {
    server.kill();
    rmSync(mcpRemoteConfig, { recursive: true, force: true });
  }

  const d = results.direct;
  const b = results.bridge;
  const m = results['mcp-remote'];
  const ms = (n: number) => `${n.toFixed(2)} ms`;
  const mb = (n: number | undefined) => (n === undefined ? 'n/a' : `${n.toFixed(1)} MB`);
  const x = (a: number | undefined, base: number | undefined) =>
    a === undefined || base === undefined ? 'n/a' : `${(a / base).toFixed(2)}x`;
  printTable(
    `gatehouse-bridge vs direct HTTP vs mcp-remote (server-everything, ${CALLS} sequential calls, ${CALLS * 2} with ${CONCURRENCY} callers, node ${process.version})`,
    ['figure', 'direct', 'bridge', 'mcp-remote', 'bridge/direct', 'mcp-remote/direct', 'bridge/mcp-remote', 'target'],
    [
      [
        'cold start (spawn -> initialize answered), p50',
        ms(d.coldStart),
        ms(b.coldStart),
        ms(m.coldStart),
        x(b.coldStart, d.coldStart),
        x(m.coldStart, d.coldStart),
        x(b.coldStart, m.coldStart),
        'bridge < 120 ms',
      ],
      [
        'tools/call p50',
        ms(d.p50),
        ms(b.p50),
        ms(m.p50),
        x(b.p50, d.p50),
        x(m.p50, d.p50),
        x(b.p50, m.p50),
        '<= 1.15x direct',
      ],
      [
        'tools/call p99',
        ms(d.p99),
        ms(b.p99),
        ms(m.p99),
        x(b.p99, d.p99),
        x(m.p99, d.p99),
        x(b.p99, m.p99),
        'below mcp-remote',
      ],
      [
        `calls/s, ${CONCURRENCY} concurrent`,
        d.rps.toFixed(0),
        b.rps.toFixed(0),
        m.rps.toFixed(0),
        x(b.rps, d.rps),
        x(m.rps, d.rps),
        x(b.rps, m.rps),
        '>= 0.9x direct',
      ],
      [
        '512 KB echo round trip, p50',
        ms(d.big),
        ms(b.big),
        ms(m.big),
        x(b.big, d.big),
        x(m.big, d.big),
        x(b.big, m.big),
        'below mcp-remote',
      ],
      [
        'peak RSS of the bridging process',
        'n/a',
        mb(b.rssMb),
        mb(m.rssMb),
        'n/a',
        'n/a',
        x(b.rssMb, m.rssMb),
        'bridge < 60 MB',
      ],
    ],
  );
  const verdicts: Array<[string, boolean]> = [
    ['cold start < 120 ms', b.coldStart < 120],
    ['p50 <= 1.15x direct', b.p50 <= 1.15 * d.p50],
    ['peak RSS < 60 MB', (b.rssMb ?? Infinity) < 60],
    ['calls/s >= 0.9x direct', b.rps >= 0.9 * d.rps],
    [
      'ahead of mcp-remote on every figure',
      b.coldStart < m.coldStart &&
        b.p50 < m.p50 &&
        b.p99 < m.p99 &&
        b.rps > m.rps &&
        b.big < m.big &&
        (b.rssMb ?? Infinity) < (m.rssMb ?? 0),
    ],
  ];
  console.log(`\n${verdicts.map(([what, ok]) => `${ok ? 'met ' : 'MISSED'}  ${what}`).join('\n')}`);
}

await main();
