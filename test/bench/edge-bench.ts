/**
 * The HTTP edge (main/lib/http), side by side in one run:
 *
 * 1. Stalled uploads (before the body budget, 100 authenticated connections stalled just
 *    short of 4 MiB took RSS from 116 to 524 MiB). The real service in a child
 *    process, once with the edge's defaults (16 MiB body budget, 256
 *    connections, 64 per address: this run's 100 all come from 127.0.0.1,
 *    so 36 are refused at once) and once unbounded (what the service did before); 100
 *    connections each send 4 MiB - 1 KiB of a declared 4 MiB body and stall.
 *    Figure: the child's RSS growth. Target: bounded growth <= 25% of unbounded.
 * 2. parseJson (depth and surrogate pre-scan, then JSON.parse) against bare
 *    JSON.parse, on a typical tools/call body and a 4 MiB page (targets
 *    <= 1.5x; the whole request path is gateway-bench's). A 4 MiB body
 *    with an escape every 4 characters is the scan's worst case: reported,
 *    linear, no target.
 *
 * Run: npx tsx test/bench/edge-bench.ts
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseJson } from '../../main/lib/http/json.ts';
import { printTable, summarize } from './stats.ts';
import { rssMb } from './settled-rss.ts';

const STALLED = 100;
const BODY = 4 * 1024 * 1024;

/** The service under test, in its own process so its RSS is its own. */
async function child(unbounded: boolean): Promise<void> {
  const { startService } = await import('../../main/service.ts');
  const { silentLogger } = await import('../../main/lib/logger.ts');
  const dataDir = await mkdtemp(join(tmpdir(), 'edge-bench-'));
  const svc = await startService({
    dataDir,
    port: 0,
    vault: 'file',
    enable: true,
    log: silentLogger,
    writeRuntimeFile: false,
    ...(unbounded
      ? { limits: { bodyBudgetBytes: Infinity, maxConnections: Infinity, maxConnectionsPerAddress: 0 } }
      : {}),
  });
  const { token } = await svc.createToken({ label: 'bench' });
  process.stdout.write(`${JSON.stringify({ port: Number(new URL(svc.baseUrl).port), token })}\n`);
  // "gc" on stdin: collect garbage, so RSS shows what is held, not what is waiting to be freed
  process.stdin.on('data', (d: Buffer) => {
    if (d.toString().includes('gc')) globalThis.gc?.();
  });
  process.stdin.on(
    'end',
    () =>
      void svc
        .stop()
        .then(() => rm(dataDir, { recursive: true, force: true }))
        .then(() => process.exit(0)),
  );
  process.stdin.resume();
}

const settle = () => new Promise((r) => setTimeout(r, 1500));

async function stalledUploads(
  mode: 'bounded' | 'unbounded',
): Promise<{ before: number; after: number; refused: number }> {
  const proc: ChildProcess = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--child', mode],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const info = await new Promise<{ port: number; token: string }>((resolve) =>
    proc.stdout!.once('data', (d: Buffer) => resolve(JSON.parse(d.toString()))),
  );
  proc.stdin!.write('gc\n');
  await settle();
  const before = rssMb(proc.pid!);
  const head = `POST /wp-json/gatehouse-mcp/v1/mcp HTTP/1.1\r\nHost: 127.0.0.1:${info.port}\r\nAuthorization: Bearer ${info.token}\r\nContent-Type: application/json\r\nContent-Length: ${BODY}\r\n\r\n`;
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  const sockets: Socket[] = [];
  let refused = 0;
  await Promise.all(
    Array.from({ length: STALLED }, async () => {
      const s = connect(info.port, '127.0.0.1');
      sockets.push(s);
      s.on('error', () => undefined);
      s.on('data', (d: Buffer) => {
        if (/^HTTP\/1\.1 5\d\d/.test(d.toString('latin1'))) refused++;
      });
      await new Promise<void>((r) => s.once('connect', () => r()));
      s.write(head);
      for (let sent = 0; sent < BODY - 1024 && !s.destroyed; sent += chunk.length) {
        if (!s.write(chunk.subarray(0, Math.min(chunk.length, BODY - 1024 - sent))))
          await new Promise((r) => (s.once('drain', r), s.once('close', r)));
      }
    }),
  );
  proc.stdin!.write('gc\n');
  await settle();
  const after = rssMb(proc.pid!);
  for (const s of sockets) s.destroy();
  proc.stdin!.end();
  await new Promise((r) => proc.once('exit', r));
  return { before, after, refused };
}

function parseCost(label: string, text: string, rounds: number): Array<string | number> {
  const buf = Buffer.from(text);
  const bare: number[] = [];
  const ours: number[] = [];
  for (let i = 0; i < Math.min(rounds, 50); i++) {
    parseJson(buf);
    JSON.parse(buf.toString('utf8'));
  }
  // interleaved, so both see the same machine load
  for (let i = 0; i < rounds; i++) {
    let t = performance.now();
    JSON.parse(buf.toString('utf8'));
    bare.push(performance.now() - t);
    t = performance.now();
    parseJson(buf);
    ours.push(performance.now() - t);
  }
  const [b, o] = [summarize(bare).p50, summarize(ours).p50];
  return [label, b * 1000, o * 1000, o / b];
}

async function main(): Promise<void> {
  const bounded = await stalledUploads('bounded');
  const unbounded = await stalledUploads('unbounded');
  const growth = (r: typeof bounded) => r.after - r.before;
  printTable(
    `${STALLED} authenticated uploads stalled at 4 MiB - 1 KiB (service RSS, MB)`,
    ['service', 'before', 'after', 'growth', 'refused 5xx'],
    [
      ['edge defaults', bounded.before, bounded.after, growth(bounded), bounded.refused],
      ['unbounded (before)', unbounded.before, unbounded.after, growth(unbounded), unbounded.refused],
    ],
  );
  const ratio = growth(bounded) / growth(unbounded);
  console.log(`growth ratio bounded/unbounded: ${ratio.toFixed(3)} (target <= 0.25)`);

  const call = JSON.stringify({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: {
      name: 'pages_update',
      arguments: { id: 12, title: 'Über uns 😀', content: 'x'.repeat(2000), tags: ['a', 'b'] },
    },
  });
  const page = (line: string) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: 8,
      method: 'tools/call',
      params: {
        name: 'pages_create',
        arguments: { title: 'Big', content: line.repeat(Math.ceil(BODY / line.length)).slice(0, BODY - 300) },
      },
    });
  const rows = [
    parseCost('tools/call, 2 KB', call, 20_000),
    parseCost('4 MiB page (markdown)', page('## Über uns\nWe build *things* for "people" — since 1999.\n\n'), 40),
    parseCost('4 MiB, an escape every 4 chars', page('ab\\"'), 40),
  ];
  printTable('parseJson vs JSON.parse (p50, µs)', ['body', 'JSON.parse', 'parseJson', 'ratio'], rows);
  const [small, pageRatio] = [rows[0]![3] as number, rows[1]![3] as number];
  console.log(
    `parse ratios: tools/call ${small.toFixed(3)} (target <= 1.5), 4 MiB page ${pageRatio.toFixed(3)} (target <= 1.5)`,
  );
  process.exit(ratio <= 0.25 && small <= 1.5 && pageRatio <= 1.5 ? 0 : 1);
}

if (process.argv[2] === '--child') await child(process.argv[3] === 'unbounded');
else await main();
