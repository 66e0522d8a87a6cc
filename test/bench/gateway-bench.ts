/**
 * tools/call through the whole gateway (Host/Origin, auth, rate limit,
 * registry, validation, feature gate, audit) against a bare SDK server
 * serving the same tool with the same handler entry, in the same run, with the
 * same SDK client. Prints p50/p99 and calls/s with their ratios.
 * Target: gateway p50 <= 1.15x bare.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startService } from '../../main/service.ts';
import { silentLogger } from '../../main/lib/logger.ts';
import { printTable, summarize } from './stats.ts';

const WARMUP = 200;
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const CONCURRENCY = 8;

async function bareServer(identity: () => Record<string, unknown>) {
  const factory = () => {
    const s = new McpServer({ name: 'bare', version: '1.0.0' });
    s.registerTool('site_identity', { description: 'same tool, no gateway', inputSchema: z.object({}) }, async () => {
      const structured = identity();
      return { content: [{ type: 'text', text: JSON.stringify(structured, null, 2) }], structuredContent: structured };
    });
    return s;
  };
  const handler = toNodeHandler(createMcpHandler(factory));
  const server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

async function client(url: string, token?: string) {
  const c = new Client({ name: 'bench', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {}));
  return c;
}

async function measure(c: Client) {
  const call = () => c.callTool({ name: 'site_identity', arguments: {} });
  for (let i = 0; i < WARMUP; i++) await call();
  const lat: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    await call();
    lat.push(performance.now() - t);
  }
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next++ < CALLS) await call();
  }));
  const rps = CALLS / ((performance.now() - started) / 1000);
  return { ...summarize(lat), rps };
}

export async function runGatewayBench() {
  const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-bench-'));
  const svc = await startService({ dataDir, port: 0, vault: 'file', enable: true, log: silentLogger, writeRuntimeFile: false });
  await svc.dispatch('settings.update', { rate_limit: 0 });
  const { token } = await svc.createToken({ label: 'bench' });
  const bare = await bareServer(svc.gateway.siteIdentity);
  try {
    const gwClient = await client(svc.mcpUrl, token);
    const bareClient = await client(bare.url);
    // interleave two rounds to spread machine noise over both
    const g1 = await measure(gwClient);
    const b1 = await measure(bareClient);
    const g2 = await measure(gwClient);
    const b2 = await measure(bareClient);
    const best = (a: typeof g1, b: typeof g1) => (a.p50 <= b.p50 ? a : b);
    const g = best(g1, g2);
    const b = best(b1, b2);
    printTable(`tools/call site_identity, ${CALLS} sequential calls, then ${CALLS} with ${CONCURRENCY} concurrent callers`, ['server', 'p50 ms', 'p99 ms', 'calls/s (8 conc.)'], [
      ['bare SDK server', b.p50, b.p99, Math.round(b.rps)],
      ['Gatehouse gateway', g.p50, g.p99, Math.round(g.rps)],
      ['ratio gateway/bare', g.p50 / b.p50, g.p99 / b.p99, g.rps / b.rps],
    ]);
    console.log(`target: p50 ratio <= 1.15 -> ${g.p50 / b.p50 <= 1.15 ? 'met' : 'NOT met'}`);
    await svc.gateway.audit.flush();
    await gwClient.close();
    await bareClient.close();
  } finally {
    await bare.close();
    await svc.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runGatewayBench();
