/**
 * Start-up of the `gatehouse` command beside `node -e 0`, in one run, rounds
 * interleaved (each round runs every variant once, in turn), so a busy machine
 * slows all of them alike. Also the same commands run from the TypeScript
 * through tsx (how bin/gatehouse.cjs ran before the bundle) for comparison.
 *
 * Targets (docs/performance.md): `serve` ready within 2x `node -e 0` + 300 ms; a CLI
 * command within 3x `node -e 0`; the idle service under 80 MB RSS (idle: once
 * V8's memory reducer has given the start's peak back, settled-rss.ts); the
 * same with the Cedar policy engine in (it loads at the first decision,
 * never at start); the service's RSS once it has loaded is shown beside.
 * `serve` ready within 2x a bare MCP SDK server's start
 * (test/bench/fixtures/bare-sdk-server.mjs), measured in the same rounds.
 *
 *   npx tsx test/bench/startup-bench.ts     (BENCH_ROUNDS=9 by default)
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ensureCliBundle } from '../bridge/helpers/bundle.ts';
import { serveChild } from './serve-child.ts';
import { printTable, summarize } from './stats.ts';
import { rssMb, settledRssMb } from './settled-rss.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin', 'gatehouse.cjs');
// In this process, as bin/gatehouse.cjs ran it before (tsx's own CLI would add a second process).
const TSX = ['--import', 'tsx', join(ROOT, 'main', 'cli.ts')];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const IDLE_MS = 3000;

const env: NodeJS.ProcessEnv = { ...process.env };
delete env.GATEHOUSE_DATA_DIR;

/** Wall time of one command to its exit, in ms. */
function timed(argv: string[]): number {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, argv, { env, stdio: ['ignore', 'ignore', 'pipe'], cwd: ROOT });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/**
 * Spawn `serve`, time it to its printed addresses, then read its RSS: 3 s after its first answer, and (`settle`) once
 * V8's memory reducer has given the start's peak back (settled-rss.ts), before and after the policy engine loaded.
 */
async function serveOnce(
  prefix: string[],
  dataDir: string,
  idle: boolean,
  settle = false,
): Promise<{
  readyMs: number;
  answerMs: number;
  rssMb: number | null;
  idleRssMb: number | null;
  engineRssMb: number | null;
}> {
  const t = process.hrtime.bigint();
  const { child, readyMs, mcpUrl, stop } = await serveChild(prefix, dataDir, { env, cwd: ROOT });
  const res = await fetch(mcpUrl, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
  await res.arrayBuffer();
  const answerMs = Number(process.hrtime.bigint() - t) / 1e6;
  const pid = child.pid!;
  let rss: number | null = null;
  let idleRss: number | null = null;
  let engineRss: number | null = null;
  if (idle) {
    await new Promise((r) => setTimeout(r, IDLE_MS));
    rss = rssMb(pid);
    if (settle) idleRss = (await settledRssMb(pid))?.mb ?? null;
    // The policy engine loads in the service at its first question (here: `policy show`); RSS once it has settled.
    timed([BIN, 'policy', 'show', '--data-dir', dataDir, '--vault', 'file']);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    engineRss = settle ? ((await settledRssMb(pid))?.mb ?? null) : rssMb(pid);
  }
  await stop();
  return { readyMs, answerMs, rssMb: rss, idleRssMb: idleRss, engineRssMb: engineRss };
}

/** The baseline of the start-up target: a bare MCP SDK server (one tool, Streamable HTTP) to its printed URL. */
const BARE = join(ROOT, 'test', 'bench', 'fixtures', 'bare-sdk-server.mjs');
async function bareOnce(settle = false): Promise<{ ms: number; idleRssMb: number | null }> {
  const t = process.hrtime.bigint();
  const child = spawn(process.execPath, [BARE], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  const ms = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      if (out.includes('\n')) resolve(Number(process.hrtime.bigint() - t) / 1e6);
    });
    child.once('exit', (code) => reject(new Error(`the bare server exited ${code} before it listened`)));
  });
  let idleRssMb: number | null = null;
  if (settle) {
    // As the service is measured: after one answer, once the memory reducer has had its turn.
    const { mcp_url } = JSON.parse(out) as { mcp_url: string };
    const res = await fetch(mcp_url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    await res.arrayBuffer();
    idleRssMb = (await settledRssMb(child.pid!))?.mb ?? null;
  }
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  return { ms, idleRssMb };
}

/** Writes waiting for a person: `n` page updates staged through the service on `dataDir` (at `mcpUrl`). */
async function stageWrites(dataDir: string, mcpUrl: string, n: number): Promise<void> {
  const made = spawnSync(
    process.execPath,
    [
      BIN,
      'tokens',
      'create',
      '--label',
      'bench',
      '--user',
      'admin',
      '--json',
      '--data-dir',
      dataDir,
      '--vault',
      'file',
    ],
    { env, cwd: ROOT, encoding: 'utf8' },
  );
  const { token } = JSON.parse(made.stdout) as { token: string };
  const client = new Client({ name: 'startup-bench', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  const pages = (await client.callTool({ name: 'pages_list', arguments: {} })).structuredContent as {
    pages: Array<{ id: number }>;
  };
  for (let i = 0; i < n; i++) {
    const r = await client.callTool({
      name: 'pages_update',
      arguments: { id: pages.pages[i % pages.pages.length]!.id, title: `Bench title ${i}` },
    });
    if ((r.structuredContent as { status?: string } | undefined)?.status !== 'pending_approval')
      throw new Error(`staging a write: ${JSON.stringify(r).slice(0, 300)}`);
  }
  await client.close();
}

const PENDING = 50;
await ensureCliBundle();
const work = await mkdtemp(join(tmpdir(), 'gatehouse-startup-bench-'));
const direct = join(work, 'direct');
const served = join(work, 'served');
const serveDirs = [join(work, 'serve-bundle'), join(work, 'serve-tsx')];
try {
  // First runs create and seed the data dirs; they are not measured.
  timed([BIN, 'settings', 'get', 'enabled', '--data-dir', direct, '--vault', 'file']);
  timed([BIN, 'settings', 'set', 'enabled', 'true', '--data-dir', direct, '--vault', 'file']);
  timed([BIN, 'settings', 'set', 'enabled', 'true', '--data-dir', served, '--vault', 'file']);
  for (const d of serveDirs) await serveOnce([BIN], d, false);
  // Writes waiting in both: one staged through a service since stopped, one through the service that runs.
  const once = await serveChild([BIN], direct, { env, cwd: ROOT });
  await stageWrites(direct, once.mcpUrl, PENDING);
  await once.stop();
  const running = await serveChild([BIN], served, { env, cwd: ROOT });
  await stageWrites(served, running.mcpUrl, PENDING);

  const s: Record<string, number[]> = {};
  const add = (k: string, v: number) => (s[k] ??= []).push(v);
  const rss: number[] = [];
  const rssIdle: number[] = [];
  const rssBare: number[] = [];
  const rssTsx: number[] = [];
  const rssEngine: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    add('node -e 0', timed(['-e', '0']));
    add('gatehouse --version', timed([BIN, '--version']));
    add(
      'gatehouse settings get (no service: opens the files)',
      timed([BIN, 'settings', 'get', 'enabled', '--data-dir', direct, '--vault', 'file']),
    );
    add('gatehouse tokens list (no service)', timed([BIN, 'tokens', 'list', '--data-dir', direct, '--vault', 'file']));
    add(
      `gatehouse staged list, ${PENDING} pending (no service)`,
      timed([BIN, 'staged', 'list', '--data-dir', direct, '--vault', 'file']),
    );
    add(
      `gatehouse staged list, ${PENDING} pending (through the running service)`,
      timed([BIN, 'staged', 'list', '--data-dir', served, '--vault', 'file']),
    );
    add(
      'gatehouse tokens list (through the running service)',
      timed([BIN, 'tokens', 'list', '--data-dir', served, '--vault', 'file']),
    );
    add(
      'gatehouse policy show (through the running service)',
      timed([BIN, 'policy', 'show', '--data-dir', served, '--vault', 'file']),
    );
    add(
      'tsx: gatehouse tokens list (through the running service)',
      timed([...TSX, 'tokens', 'list', '--data-dir', served, '--vault', 'file']),
    );
    const idle = round < 3;
    const bare = await bareOnce(idle);
    add('bare MCP SDK server, listening (no target)', bare.ms);
    if (bare.idleRssMb !== null) rssBare.push(bare.idleRssMb);
    const b = await serveOnce([BIN], serveDirs[0]!, idle, true);
    add('gatehouse serve, ready', b.readyMs);
    add('gatehouse serve, first MCP answer (no target)', b.answerMs);
    if (b.rssMb !== null) rss.push(b.rssMb);
    if (b.idleRssMb !== null) rssIdle.push(b.idleRssMb);
    if (b.engineRssMb !== null) rssEngine.push(b.engineRssMb);
    const x = await serveOnce(TSX, serveDirs[1]!, idle);
    add('tsx: gatehouse serve, ready', x.readyMs);
    add('tsx: gatehouse serve, first MCP answer', x.answerMs);
    if (x.rssMb !== null) rssTsx.push(x.rssMb);
  }
  await running.stop();

  const base = summarize(s['node -e 0']!).p50;
  const cliTarget = 3 * base;
  const serveTarget = 2 * base + 300;
  const target = (k: string) =>
    k.startsWith('tsx') || k === 'node -e 0' || k.includes('no target')
      ? ''
      : k.includes('serve')
        ? `<= ${serveTarget.toFixed(0)} ms`
        : `<= ${cliTarget.toFixed(0)} ms (3x)`;
  const rows = Object.entries(s).map(([k, v]) => {
    const p50 = summarize(v).p50;
    const t = target(k);
    const met = t === '' ? '' : p50 <= (k.includes('serve') ? serveTarget : cliTarget) ? 'met' : 'NOT met';
    return [k, p50, (p50 / base).toFixed(2), t, met];
  });
  printTable(
    `start-up, p50 of ${ROUNDS} interleaved rounds (ms)`,
    ['what', 'p50 ms', 'x node -e 0', 'target', ''],
    rows,
  );
  // serve, ready within 2x a bare SDK server's start, in the same run (a loaded machine slows both alike).
  const bare = summarize(s['bare MCP SDK server, listening (no target)']!).p50;
  const ready = summarize(s['gatehouse serve, ready']!).p50;
  printTable(
    'gatehouse serve against a bare MCP SDK server, same run (p50 ms)',
    ['what', 'p50 ms', 'x bare', 'target', ''],
    [['gatehouse serve, ready', ready, (ready / bare).toFixed(2), '<= 2x', ready <= 2 * bare ? 'met' : 'NOT met']],
  );
  const med = (a: number[]) => summarize(a).p50;
  printTable(
    `RSS of serve (MB, median of ${rss.length}): ${IDLE_MS / 1000} s after its first answer, and idle (once V8's memory reducer gave the start's peak back)`,
    ['what', 'RSS MB', 'target', ''],
    [
      [`gatehouse serve (bundle), after ${IDLE_MS / 1000} s`, med(rss), '', ''],
      ['gatehouse serve (bundle), idle', med(rssIdle), '< 80 MB', med(rssIdle) < 80 ? 'met' : 'NOT met'],
      ['bare MCP SDK server, idle after one answer (the peer)', med(rssBare), '', ''],
      ['gatehouse serve (bundle), idle after the policy engine loaded', med(rssEngine), '', ''],
      [`tsx: gatehouse serve, after ${IDLE_MS / 1000} s`, med(rssTsx), '', ''],
    ],
  );
} finally {
  await rm(work, { recursive: true, force: true });
}
