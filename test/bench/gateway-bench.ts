/**
 * MCP answer speed: tools/call through the whole gateway (Host/Origin, auth,
 * per-token rate limit, body and JSON-RPC checks, registry, validation,
 * feature gate, audit, usage event) against a bare MCP SDK v2 server that
 * answers JSON and serves the same tool with the same handler, with the same
 * SDK client, in both protocol eras:
 * - 2025 era: the bare server is the SDK's stateless Streamable HTTP
 *   transport with JSON responses (a fresh server per request).
 * - 2026-07-28: the bare server is createMcpHandler (JSON unless a call streams).
 * Calls alternate gateway / bare one by one, so machine noise falls on both;
 * each round yields a p50 ratio, and the spread of that ratio across rounds
 * is reported beside its median. Target: gateway p50 <= 1.15x bare. Then
 * eight clients at once against each side in turns: calls per second, and the
 * wall-time ratio (the issue measured 0.60x for 2025, 1.01x for 2026-07-28).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startService } from '../../main/service.ts';
import { silentLogger } from '../../main/lib/logger.ts';
import { percentile, printTable, summarize } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const PER_ROUND = Number(process.env.BENCH_CALLS ?? 300);
const WARMUP = 300;

type Era = 'legacy' | 'modern';

function bareFactory(identity: () => Record<string, unknown>) {
  return () => {
    const s = new McpServer({ name: 'bare', version: '1.0.0' });
    s.registerTool('site_identity', { description: 'same tool, no gateway' }, async () => {
      const structured = identity();
      return { content: [{ type: 'text', text: JSON.stringify(structured, null, 2) }], structuredContent: structured };
    });
    return s;
  };
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The bare baseline of each era, answering JSON. */
async function bareServer(era: Era, identity: () => Record<string, unknown>) {
  const factory = bareFactory(identity);
  if (era === 'modern') {
    const handler = toNodeHandler(createMcpHandler(factory));
    return listen((req, res) => void handler(req, res));
  }
  return listen((req, res) => {
    void (async () => {
      const server = factory();
      const transport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })();
  });
}

async function connect(url: string, era: Era, token?: string) {
  const c = new Client(
    { name: 'bench', version: '1.0.0' },
    { versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: '2026-07-28' } } },
  );
  await c.connect(
    new StreamableHTTPClientTransport(
      new URL(url),
      token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {},
    ),
  );
  return c;
}

async function timed(c: Client): Promise<number> {
  const t = performance.now();
  const r = await c.callTool({ name: 'site_identity', arguments: {} });
  const ms = performance.now() - t;
  if (r.isError || !r.structuredContent) throw new Error(`call failed: ${JSON.stringify(r).slice(0, 200)}`);
  return ms;
}

async function compare(era: Era, gw: Client, bare: Client) {
  for (let i = 0; i < WARMUP; i++) {
    await timed(gw);
    await timed(bare);
  }
  const ratios: number[] = [];
  const all = { gw: [] as number[], bare: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    const g: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < PER_ROUND; i++) {
      // alternate which goes first, so neither always follows the other
      if (i % 2) {
        g.push(await timed(gw));
        b.push(await timed(bare));
      } else {
        b.push(await timed(bare));
        g.push(await timed(gw));
      }
    }
    ratios.push(summarize(g).p50 / summarize(b).p50);
    all.gw.push(...g);
    all.bare.push(...b);
  }
  const sorted = [...ratios].sort((x, y) => x - y);
  return {
    era,
    gw: summarize(all.gw),
    bare: summarize(all.bare),
    ratio: { median: percentile(sorted, 50), min: sorted[0]!, max: sorted[sorted.length - 1]!, all: ratios },
  };
}

const CLIENTS = 8;
const CONCURRENT_CALLS = Number(process.env.BENCH_CONCURRENT_CALLS ?? 100);

/** `clients` each calling `calls` times, all at once: the wall time until the last answer (ms). */
async function burst(clients: Client[], calls: number): Promise<number> {
  const t = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      for (let i = 0; i < calls; i++) await timed(c);
    }),
  );
  return performance.now() - t;
}

/**
 * Eight clients at once against each side, in turns (which side goes first alternates): calls per second, and the
 * ratio of the gateway's wall time to the bare server's per round (the issue measured 0.60x for 2025, 1.01x for
 * 2026-07-28).
 */
async function compareConcurrent(era: Era, gws: Client[], bares: Client[]) {
  await burst(gws, 20);
  await burst(bares, 20);
  const ratios: number[] = [];
  const gwMs: number[] = [];
  const bareMs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    let g: number;
    let b: number;
    if (round % 2) {
      g = await burst(gws, CONCURRENT_CALLS);
      b = await burst(bares, CONCURRENT_CALLS);
    } else {
      b = await burst(bares, CONCURRENT_CALLS);
      g = await burst(gws, CONCURRENT_CALLS);
    }
    gwMs.push(g);
    bareMs.push(b);
    ratios.push(g / b);
  }
  const total = CLIENTS * CONCURRENT_CALLS;
  const median = (a: number[]) =>
    percentile(
      [...a].sort((x, y) => x - y),
      50,
    );
  return {
    era,
    gwPerSecond: total / (median(gwMs) / 1000),
    barePerSecond: total / (median(bareMs) / 1000),
    ratio: median(ratios),
    ratios,
  };
}

export async function runGatewayBench() {
  const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-bench-'));
  const svc = await startService({
    dataDir,
    port: 0,
    vault: 'file',
    enable: true,
    log: silentLogger,
    writeRuntimeFile: false,
  });
  // the limiter stays on (as for users), with room for the whole run
  await svc.dispatch('settings.update', { rate_limit: 100_000 });
  const { token } = await svc.createToken({ label: 'bench' });
  const results = [];
  const concurrent = [];
  try {
    for (const era of ['legacy', 'modern'] as const) {
      const bare = await bareServer(era, svc.core.siteIdentity);
      const gw = await connect(svc.mcpUrl, era, token);
      const b = await connect(bare.url, era);
      results.push(await compare(era, gw, b));
      const gws = await Promise.all(Array.from({ length: CLIENTS }, () => connect(svc.mcpUrl, era, token)));
      const bares = await Promise.all(Array.from({ length: CLIENTS }, () => connect(bare.url, era)));
      concurrent.push(await compareConcurrent(era, gws, bares));
      await Promise.all([...gws, ...bares].map((c) => c.close()));
      await gw.close();
      await b.close();
      await bare.close();
    }
    printTable(
      `tools/call site_identity, ${ROUNDS} rounds x ${PER_ROUND} calls, gateway and bare SDK v2 (JSON answers) interleaved call by call`,
      [
        'era',
        'bare p50 ms',
        'gateway p50 ms',
        'p50 ratio (median of rounds)',
        'ratio spread (min..max)',
        'bare p99',
        'gateway p99',
      ],
      results.map((r) => [
        r.era === 'legacy' ? '2025-11-25' : '2026-07-28',
        r.bare.p50,
        r.gw.p50,
        r.ratio.median,
        `${r.ratio.min.toFixed(3)}..${r.ratio.max.toFixed(3)}`,
        r.bare.p99,
        r.gw.p99,
      ]),
    );
    for (const r of results)
      console.log(
        `${r.era}: per-round p50 ratios ${r.ratio.all.map((x) => x.toFixed(3)).join(' ')} -> target p50 ratio <= 1.15: ${r.ratio.median <= 1.15 ? 'met' : 'NOT met'}`,
      );
    printTable(
      `tools/call site_identity, ${CLIENTS} clients at once x ${CONCURRENT_CALLS} calls each, ${ROUNDS} rounds, gateway and bare in turns`,
      ['era', 'bare calls/s', 'gateway calls/s', 'wall time ratio (median of rounds)'],
      concurrent.map((r) => [
        r.era === 'legacy' ? '2025-11-25' : '2026-07-28',
        r.barePerSecond,
        r.gwPerSecond,
        r.ratio,
      ]),
    );
    for (const r of concurrent)
      console.log(
        `${r.era}, ${CLIENTS} clients: per-round wall time ratios ${r.ratios.map((x) => x.toFixed(3)).join(' ')}`,
      );
    await svc.core.audit.flush();
  } finally {
    await svc.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runGatewayBench();
