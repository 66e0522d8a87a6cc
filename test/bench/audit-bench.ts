/**
 * Audit log benchmark: append throughput (to disk, via flush) and query
 * latency on a 1,000,000-entry log, side by side with a naive full scan.
 * Run: npx tsx test/bench/audit-bench.ts   (about a minute; cleans up its temp dir)
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { AuditEntry, AuditQueryInput, AuditResult } from '../../main/contract/audit.ts';
import type { Logger } from '../../main/lib/logger.ts';
import { AuditLog } from '../../main/store/audit/log.ts';

const TOTAL = Number(process.env.AUDIT_BENCH_ENTRIES ?? 1_000_000);
const SPAN_MS = 30 * 86_400_000; // the million entries spread over 30 days
const T0 = Date.parse('2026-10-01T00:00:00.000Z');
const RARE_TOOL = 'site.translate.rare';
const RARE_EVERY = 50_000; // 20 entries in a million

const quiet: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (m) => console.error(m),
  error: (m) => console.error(m),
};
const RESULTS: AuditResult[] = ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'error', 'denied', 'staged'];

function makeEntry(i: number, atMs: number): AuditEntry {
  return {
    id: `01J${i.toString(36).padStart(10, '0')}`,
    at: new Date(atMs).toISOString(),
    request_id: `req-${i}`,
    tool: i % RARE_EVERY === 7 ? RARE_TOOL : `plugin${i % 7}.tool${i % 40}`,
    write: i % 9 === 0,
    result: RESULTS[i % RESULTS.length] as AuditResult,
    error_code: i % 10 === 7 ? 'upstream_error' : null,
    source_plugin: `plugin${i % 7}`,
    feature_key: `feature.${i % 12}`,
    site: 'https://shop.example.test',
    token_id: `tok_${i % 10}`,
    token_preview: `gth_…${(i % 10).toString().repeat(4)}`,
    user_id: `user_${i % 5}`,
    target: `/pages/${i % 5000}`,
    duration_ms: i % 250,
    client: i % 2 ? 'claude-desktop' : 'cursor',
  };
}

const at = (i: number) => T0 + Math.floor((i * SPAN_MS) / TOTAL);

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = performance.now();
  const value = await fn();
  return { ms: performance.now() - t, value };
}

/** Median of `runs` timings (the first run, with cold caches of ours, is reported on its own). */
async function measure(fn: () => Promise<unknown>, runs = 5): Promise<{ first: number; median: number }> {
  const times: number[] = [];
  for (let r = 0; r < runs; r++) times.push((await timed(fn)).ms);
  const sorted = [...times].sort((a, b) => a - b);
  return { first: times[0] as number, median: sorted[Math.floor(sorted.length / 2)] as number };
}

const rows: Array<[string, string, string]> = [];
const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(0));

async function appendThroughput(dir: string, n: number, perTick: number): Promise<number> {
  const log = await AuditLog.open({ dir, log: quiet });
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    log.append(makeEntry(i, T0 + i));
    // perTick < n: a tool call every so often, each tick its own write
    if ((i + 1) % perTick === 0) await new Promise((r) => setImmediate(r));
  }
  await log.flush();
  const ms = performance.now() - t;
  await log.close();
  return n / (ms / 1000);
}

/** What a query would cost without summaries, cursors or pre-checks: parse every line. */
async function naiveScan(dir: string, keep: (e: AuditEntry) => boolean): Promise<number> {
  let n = 0;
  for (const name of (await readdir(dir)).filter((f) => f.endsWith('.jsonl')).sort()) {
    const rl = createInterface({ input: createReadStream(join(dir, name)), crlfDelay: Infinity });
    for await (const line of rl) if (line && keep(JSON.parse(line) as AuditEntry)) n++;
  }
  return n;
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-audit-bench-'));
  const cleanup = () => rm(root, { recursive: true, force: true });
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  try {
    // 1. Appends, all the way to the disk.
    const burst = await appendThroughput(join(root, 'burst'), 200_000, 200_000);
    rows.push([
      'append 200k in one burst + flush',
      `${Math.round(burst).toLocaleString('en')} entries/s`,
      `${(burst / 10_000).toFixed(1)}x target`,
    ]);
    const ticks = await appendThroughput(join(root, 'ticks'), 100_000, 10);
    rows.push([
      'append 100k, 10 per tick (a write per tick) + flush',
      `${Math.round(ticks).toLocaleString('en')} entries/s`,
      `${(ticks / 10_000).toFixed(1)}x target`,
    ]);

    // 2. A million entries over 30 days.
    const dir = join(root, 'million');
    const fill = await timed(async () => {
      const log = await AuditLog.open({ dir, log: quiet });
      for (let i = 0; i < TOTAL; i++) {
        log.append(makeEntry(i, at(i)));
        if ((i + 1) % 20_000 === 0) await log.flush();
      }
      await log.close();
    });
    const files = (await readdir(dir)).filter((f) => f.endsWith('.jsonl'));
    let bytes = 0;
    for (const f of files) bytes += (await stat(join(dir, f))).size;
    rows.push([
      `write ${TOTAL.toLocaleString('en')} entries (${files.length} files, ${(bytes / 2 ** 20).toFixed(0)} MiB)`,
      `${(fill.ms / 1000).toFixed(1)} s`,
      `${Math.round(TOTAL / (fill.ms / 1000)).toLocaleString('en')} entries/s`,
    ]);

    const opened = await timed(() => AuditLog.open({ dir, log: quiet }));
    const log = opened.value;
    rows.push(['open (summaries from sidecars)', `${fmt(opened.ms)} ms`, '']);

    const page = (q: AuditQueryInput) => () => log.query(q);
    const q1 = await measure(page({ limit: 50 }));
    rows.push(['first page, unfiltered (50)', `${fmt(q1.median)} ms`, `first run ${fmt(q1.first)} ms`]);

    const rare = await log.query({ tool: RARE_TOOL, limit: 50 });
    const q2 = await measure(page({ tool: RARE_TOOL, limit: 50 }));
    rows.push([
      `first page, rare tool (${rare.entries.length} of ${TOTAL.toLocaleString('en')})`,
      `${fmt(q2.median)} ms`,
      `first run ${fmt(q2.first)} ms`,
    ]);

    const q3 = await measure(page({ result: 'denied', user_id: 'user_3', limit: 50 }));
    rows.push([
      'first page, result=denied AND user (2% of entries)',
      `${fmt(q3.median)} ms`,
      `first run ${fmt(q3.first)} ms`,
    ]);

    // Each value is everywhere, never together (tok_0's calls are all ok): the summaries' combinations rule out every block.
    const apart = await log.query({ token_id: 'tok_0', result: 'error', limit: 50 });
    const q3b = await measure(page({ token_id: 'tok_0', result: 'error', limit: 50 }));
    rows.push([
      `first page, a token AND a result never together (${apart.entries.length} found)`,
      `${fmt(q3b.median)} ms`,
      `first run ${fmt(q3b.first)} ms`,
    ]);

    // A day 25 days back: 29 of 30 days of entries lie outside it.
    const from = new Date(T0 + 5 * 86_400_000).toISOString();
    const to = new Date(T0 + 6 * 86_400_000).toISOString();
    const q4 = await measure(page({ from, to, limit: 50 }));
    rows.push(['first page of a one-day range 25 days back', `${fmt(q4.median)} ms`, `first run ${fmt(q4.first)} ms`]);
    let cursor: string | undefined;
    for (let p = 0; p < 20; p++)
      cursor = (await log.query({ from, to, limit: 50, ...(cursor ? { cursor } : {}) })).next_cursor ?? undefined;
    const q5 = await measure(page({ from, to, limit: 50, cursor }));
    rows.push(['21st page inside that range (cursor)', `${fmt(q5.median)} ms`, `first run ${fmt(q5.first)} ms`]);

    const walk = await measure(async () => {
      let c: string | undefined;
      for (let p = 0; p < 10; p++)
        c = (await log.query({ limit: 50, ...(c ? { cursor: c } : {}) })).next_cursor ?? undefined;
    });
    rows.push([
      'cursor walk, 10 pages of 50, unfiltered',
      `${fmt(walk.median)} ms`,
      `${fmt(walk.median / 10)} ms/page`,
    ]);

    const rangeExport = await timed(() =>
      log.export({ from, to }, 'csv', new Writable({ write: (_c, _e, cb) => cb() })),
    );
    rows.push([
      `export CSV of that day (${rangeExport.value.toLocaleString('en')} entries)`,
      `${fmt(rangeExport.ms)} ms`,
      '',
    ]);

    const naive = await timed(() => naiveScan(dir, (e) => e.tool === RARE_TOOL));
    rows.push([
      'naive: parse every line for the rare tool',
      `${fmt(naive.ms)} ms`,
      `${Math.round(naive.ms / q2.median)}x slower than the query`,
    ]);

    await log.close();
  } finally {
    await cleanup();
  }

  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max(...rows.map((r) => r[1].length));
  console.log(`\naudit log benchmark (Node ${process.version}, ${TOTAL.toLocaleString('en')} entries)\n`);
  for (const [a, b, c] of rows) console.log(`${a.padEnd(w0)}  ${b.padStart(w1)}  ${c}`);
}

await main();
