/**
 * How Gatehouse grows with a person's upstream tools: the same figures at 0,
 * 1,000 and 5,000 upstream tools (five stdio upstreams of the SDK's own
 * McpServer, test/fixtures/upstream/many-tools.mjs, each consented), in one run:
 *
 *   serve ready   the built `gatehouse serve` to its printed addresses
 *   tools ready   the same start until tools/list answers every upstream tool
 *   RSS 2 s after the service 2 s after its last tools/list (the start's peak is still held)
 *   idle RSS      the same service once V8's memory reducer has given that peak back (settled-rss.ts;
 *                 `given back` counts the starts where it did within 45 s)
 *   tools/list    raw bytes over HTTP (no client-side parsing), p50 of 30
 *   tokens list   with no service running: wall time and peak RSS
 *   upstreams.json  its size, and whether a start rewrote it
 *
 * Goals at 5,000 tools: ready <= 500 ms (tools are not on the path to ready),
 * idle RSS <= 150 MB, tools/list <= 30 ms, `tokens list` as with 0 tools,
 * upstreams.json written only when it changed.
 *
 *   npx tsx test/bench/growth-bench.ts     (GROWTH_COUNTS=0,1000,5000 BENCH_ROUNDS=3)
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureCliBundle } from '../bridge/helpers/bundle.ts';
import { serveChild } from './serve-child.ts';
import { printTable, summarize } from './stats.ts';
import { rssMb, settledRssMb } from './settled-rss.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin', 'gatehouse.cjs');
const MANY = join(ROOT, 'test/fixtures/upstream/many-tools.mjs');
const COUNTS = (process.env.GROWTH_COUNTS ?? '0,1000,5000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const UPSTREAMS = 5;
const LISTS = 30;

const env: NodeJS.ProcessEnv = { ...process.env };
delete env.GATEHOUSE_DATA_DIR;

function cli(dataDir: string, args: string[]): string {
  // the data dir by env: after `upstreams add ... --` every argument is the upstream's own command line
  const r = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...env, GATEHOUSE_DATA_DIR: dataDir },
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`gatehouse ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** Wall time and peak RSS (MB) of one command run with no service, through /usr/bin/time. */
function measured(dataDir: string, args: string[]): { ms: number; rssMb: number } {
  const t = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, BIN, ...args, '--data-dir', dataDir], {
    env,
    cwd: ROOT,
    encoding: 'utf8',
  });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`gatehouse ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const kb = Number(r.stderr.trim().split('\n').pop());
  return { ms, rssMb: kb / 1024 };
}

interface Served {
  mcpUrl: string;
  readyMs: number;
  stop(): Promise<void>;
  rssMb(): number;
  idleRssMb(): ReturnType<typeof settledRssMb>;
}

async function serve(dataDir: string): Promise<Served> {
  const s = await serveChild([BIN], dataDir, { env, cwd: ROOT });
  return {
    mcpUrl: s.mcpUrl,
    readyMs: s.readyMs,
    rssMb: () => rssMb(s.child.pid!),
    idleRssMb: () => settledRssMb(s.child.pid!),
    stop: s.stop,
  };
}

async function listRaw(mcpUrl: string, token: string): Promise<{ ms: number; count: number }> {
  const t = performance.now();
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  const body = await res.text();
  const ms = performance.now() - t;
  const json = JSON.parse(body.startsWith('{') ? body : (/^data: (.*)$/m.exec(body)?.[1] ?? '{}')) as {
    result?: { tools: unknown[] };
  };
  if (!json.result) throw new Error(`tools/list: ${res.status} ${body.slice(0, 300)}`);
  return { ms, count: json.result.tools.length };
}

/** A data dir with `count` upstream tools over five consented upstreams, and a client token. */
async function prepare(count: number): Promise<{ dataDir: string; token: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), `gh-growth-${count}-`));
  const s = await serve(dataDir);
  try {
    cli(dataDir, ['settings', 'set', 'enabled', 'true']);
    cli(dataDir, ['settings', 'set', 'rate_limit', '0']);
    if (count > 0)
      for (let i = 0; i < UPSTREAMS; i++) {
        cli(dataDir, [
          'upstreams',
          'add',
          `m${i}`,
          '--stdio',
          '--env',
          `TOOL_COUNT=${count / UPSTREAMS}`,
          '--',
          process.execPath,
          MANY,
        ]);
        cli(dataDir, ['upstreams', 'review', `m${i}`, '--approve-all']);
      }
    const token = (JSON.parse(cli(dataDir, ['tokens', 'create', '--label', 'growth', '--json'])) as { token: string })
      .token;
    return { dataDir, token };
  } finally {
    await s.stop();
  }
}

const rows: Array<Array<string | number>> = [];
await ensureCliBundle();
for (const count of COUNTS) {
  const { dataDir, token } = await prepare(count);
  const file = join(dataDir, 'upstreams.json');
  const ready: number[] = [];
  const toolsReady: number[] = [];
  const rss: number[] = [];
  const idleRss: number[] = [];
  let reduced = 0;
  const lists: number[] = [];
  const tokensMs: number[] = [];
  const tokensRss: number[] = [];
  let rewritten = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const before = count > 0 ? (await stat(file)).mtimeMs : 0;
    const t = performance.now();
    const s = await serve(dataDir);
    ready.push(s.readyMs);
    for (;;) {
      if ((await listRaw(s.mcpUrl, token)).count >= count) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    toolsReady.push(performance.now() - t);
    for (let i = 0; i < LISTS + 5; i++) {
      const l = await listRaw(s.mcpUrl, token);
      if (i >= 5) lists.push(l.ms);
    }
    await new Promise((res) => setTimeout(res, 2000));
    const after2s = s.rssMb();
    if (!Number.isNaN(after2s)) rss.push(after2s);
    const idle = await s.idleRssMb();
    if (idle) idleRss.push(idle.mb);
    if (idle?.fell) reduced++;
    await s.stop();
    if (count > 0 && (await stat(file)).mtimeMs !== before) rewritten++;
    const m = measured(dataDir, ['tokens', 'list']);
    tokensMs.push(m.ms);
    tokensRss.push(m.rssMb);
  }
  const size = count > 0 ? (await stat(file)).size / 1024 / 1024 : 0;
  rows.push([
    count,
    summarize(ready).p50,
    summarize(toolsReady).p50,
    summarize(rss).p50,
    idleRss.length ? summarize(idleRss).p50 : 'n/a',
    `${reduced}/${ROUNDS}`,
    summarize(lists).p50,
    summarize(tokensMs).p50,
    summarize(tokensRss).p50,
    size,
    `${rewritten}/${ROUNDS}`,
  ]);
  await rm(dataDir, { recursive: true, force: true });
}
printTable(
  `growth with upstream tools (${ROUNDS} starts each; p50)`,
  [
    'tools',
    'ready ms',
    'tools ready ms',
    'RSS 2 s after MB',
    'idle RSS MB',
    'given back',
    'tools/list ms',
    'tokens list ms',
    'tokens list MB',
    'upstreams.json MB',
    'rewritten',
  ],
  rows,
);
