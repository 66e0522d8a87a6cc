import { appendFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry, AuditResult } from '../../../main/contract/audit.ts';
import type { AuditLog, AuditLogOptions } from '../../../main/store/audit/log.ts';
import { AuditHarness, allPages, entry, ids, T0 } from './fixtures.ts';

let h: AuditHarness;
beforeEach(async () => {
  h = await new AuditHarness().init();
});
afterEach(async () => {
  await h.cleanup();
});

const TOOLS = ['site.pages.list', 'site.pages.update', 'upstream.github.search', 'site.seo.audit'];
const RESULTS: AuditResult[] = ['ok', 'error', 'denied', 'staged', 'rate_limited'];
const USERS = ['u_admin', 'u_editor', null];
const TOKENS = ['tok_a', 'tok_b', 'tok_c', null];
const PLUGINS = ['site', 'upstream', null];

/** A varied entry: each field cycles with a different period so filters combine in every way. */
function varied(i: number): AuditEntry {
  return entry(i, {
    tool: TOOLS[i % 4] as string,
    result: RESULTS[i % 5] as AuditResult,
    user_id: USERS[i % 3] as string | null,
    token_id: TOKENS[i % 4] as string | null,
    source_plugin: PLUGINS[i % 3] as string | null,
  });
}

/** 600 entries over several small files, opened again so closed files are read through their sidecars. */
async function rotatedLog(extra: Partial<AuditLogOptions> = {}): Promise<{ log: AuditLog; all: AuditEntry[] }> {
  const first = await h.open({ maxFileBytes: 20_000 });
  const all: AuditEntry[] = [];
  for (let i = 0; i < 600; i++) {
    all.push(varied(i));
    first.append(varied(i));
    if (i % 97 === 0) await first.flush(); // several batches, not one
  }
  await first.close();
  const files = (await readdir(h.dir)).filter((n) => n.endsWith('.jsonl'));
  expect(files.length).toBeGreaterThan(5);
  return { log: await h.open({ maxFileBytes: 20_000, ...extra }), all };
}

const newestFirst = (es: AuditEntry[]) => [...es].reverse();

describe('AuditLog query', () => {
  it('returns entries newest first across rotated files, the page limited and the rest behind a cursor', async () => {
    const { log, all } = await rotatedLog();
    const page = await log.query({ limit: 25 });
    expect(ids(page.entries)).toEqual(ids(newestFirst(all).slice(0, 25)));
    expect(page.next_cursor).toEqual(expect.any(String));
    const pages = await allPages(log, { limit: 50 });
    expect(pages.flat()).toEqual(newestFirst(all));
    expect(pages).toHaveLength(12);
    expect(pages.at(-1)).toHaveLength(50); // the lookahead makes the last full page end the walk
  });

  it.each([
    ['tool', { tool: 'upstream.github.search' }, (e: AuditEntry) => e.tool === 'upstream.github.search'],
    ['result', { result: 'denied' as const }, (e: AuditEntry) => e.result === 'denied'],
    ['user', { user_id: 'u_editor' }, (e: AuditEntry) => e.user_id === 'u_editor'],
    ['token', { token_id: 'tok_c' }, (e: AuditEntry) => e.token_id === 'tok_c'],
    ['plugin', { plugin: 'upstream' }, (e: AuditEntry) => e.source_plugin === 'upstream'],
    [
      'tool + result + user + token + plugin',
      { tool: 'site.pages.update', result: 'ok' as const, user_id: 'u_editor', token_id: 'tok_b', plugin: 'upstream' },
      (e: AuditEntry) =>
        e.tool === 'site.pages.update' &&
        e.result === 'ok' &&
        e.user_id === 'u_editor' &&
        e.token_id === 'tok_b' &&
        e.source_plugin === 'upstream',
    ],
    [
      'tool + result',
      { tool: 'site.seo.audit', result: 'error' as const },
      (e: AuditEntry) => e.tool === 'site.seo.audit' && e.result === 'error',
    ],
  ])('filters by %s, AND-ed, over every page', async (_name, q, pred) => {
    const { log, all } = await rotatedLog();
    const want = newestFirst(all).filter(pred);
    expect(want.length).toBeGreaterThan(0);
    expect((await allPages(log, { ...q, limit: 7 })).flat()).toEqual(want);
  });

  it('matches values exactly: a prefix, a longer value or a value in another field does not match', async () => {
    const log = await h.open();
    log.append(entry(1, { tool: 'site.pages' }));
    log.append(entry(2, { tool: 'site.pages.list.all' }));
    log.append(entry(3, { tool: 'x', target: ',"tool":"site.pages.list"' }));
    log.append(entry(4, { tool: 'site.pages.list' }));
    log.append(entry(5, { user_id: null, target: 'u_admin' }));
    expect(ids((await log.query({ tool: 'site.pages.list' })).entries)).toEqual(['e000005', 'e000004']);
    expect(ids((await log.query({ user_id: 'u_admin' })).entries)).toEqual([
      'e000004',
      'e000003',
      'e000002',
      'e000001',
    ]);
    expect((await log.query({ tool: 'nope' })).entries).toEqual([]);
  });

  it('finds tools, users and tokens with quotes, backslashes and non-ASCII in their names', async () => {
    const log = await h.open();
    const odd = ['we"ird\\tool', 'outil.été', 'ツール'];
    odd.forEach((tool, i) => log.append(entry(i, { tool, user_id: `user ${tool}` })));
    for (const [i, tool] of odd.entries()) {
      expect(ids((await log.query({ tool })).entries)).toEqual([entry(i).id]);
      expect(ids((await log.query({ user_id: `user ${tool}` })).entries)).toEqual([entry(i).id]);
    }
  });

  it('selects a time range: from inclusive, to exclusive, any ISO spelling, across files', async () => {
    const { log, all } = await rotatedLog();
    const from = new Date(Date.parse(all[123]?.at as string)).toISOString();
    const to = new Date(Date.parse(all[456]?.at as string)).toISOString().replace('Z', '+00:00');
    const got = (await allPages(log, { from, to, limit: 40 })).flat();
    expect(ids(got)).toEqual(ids(newestFirst(all.slice(123, 456))));
    const onlyFrom = (await allPages(log, { from, limit: 1000 })).flat();
    expect(onlyFrom).toHaveLength(600 - 123);
    const combined = (await allPages(log, { from, to, tool: 'site.seo.audit', limit: 10 })).flat();
    expect(combined).toEqual(newestFirst(all.slice(123, 456)).filter((e) => e.tool === 'site.seo.audit'));
    expect((await log.query({ from: '2030-01-01T00:00:00Z' })).entries).toEqual([]);
  });

  it('handles a time range when times are not in append order (calls that finish out of order)', async () => {
    const log = await h.open({ maxFileBytes: 3_000 });
    const order = [5, 1, 9, 3, 7, 2, 8, 0, 6, 4, 15, 11, 19, 13, 17, 12, 18, 10, 16, 14];
    for (const i of order) log.append(entry(i));
    const got = (await allPages(log, { from: entry(3).at, to: entry(13).at, limit: 3 })).flat();
    expect(ids(got)).toEqual(ids(newestFirst(order.filter((i) => i >= 3 && i < 13).map((i) => entry(i)))));
  });

  it('finds time ranges inside large files (the seek by time), with repeated timestamps and a garbage line', async () => {
    const log = await h.open({ maxFileBytes: 600_000 });
    const all: AuditEntry[] = [];
    for (let i = 0; i < 6000; i++) {
      // four entries share each second; a long target now and then makes lines uneven
      const e = entry(i, {
        at: new Date(T0 + Math.floor(i / 4) * 1000).toISOString(),
        target: i % 500 === 0 ? 'z'.repeat(9000) : `/p/${i}`,
      });
      all.push(e);
      log.append(e);
    }
    await log.close();
    const [first] = (await readdir(h.dir)).filter((n) => n.endsWith('.jsonl')).sort();
    await appendFile(join(h.dir, first as string), 'garbage without a time\n');
    const again = await h.open({ maxFileBytes: 600_000 });
    const sec = (n: number) => new Date(T0 + n * 1000).toISOString();
    for (const [a, b] of [
      [0, 1],
      [10, 11],
      [100, 350],
      [777, 778],
      [1000, 1499],
      [1200, 1500],
      [1499, 2000],
      [0, 1500],
    ] as const) {
      const want = newestFirst(all.filter((e) => e.at >= sec(a) && e.at < sec(b)));
      expect(ids((await allPages(again, { from: sec(a), to: sec(b), limit: 200 })).flat())).toEqual(ids(want));
    }
    expect(ids((await again.query({ to: sec(3), limit: 1000 })).entries)).toEqual(ids(newestFirst(all.slice(0, 12))));
  });

  it('answers from files of many ~1 MiB blocks the same as a full scan, before and after a restart', async () => {
    const rare = new Set([3, 4_000, 4_001, 9_999, 14_998]);
    const all: AuditEntry[] = [];
    const log = await h.open({ maxFileBytes: 3 * 1024 * 1024 });
    for (let i = 0; i < 15_000; i++) {
      const e = entry(i, {
        tool: rare.has(i) ? 'rare.tool' : `tool.${i % 30}`,
        user_id: i === 7_777 ? 'u_once' : 'u_admin',
      });
      all.push(e);
      log.append(e);
    }
    await log.flush();
    const check = async (l: AuditLog) => {
      expect((await allPages(l, { tool: 'rare.tool', limit: 2 })).flat()).toEqual(
        newestFirst(all.filter((e) => e.tool === 'rare.tool')),
      );
      expect(ids((await l.query({ user_id: 'u_once' })).entries)).toEqual(['e007777']);
      const want = newestFirst(all.slice(5_000, 11_000));
      expect(ids((await allPages(l, { from: all[5_000]?.at, to: all[11_000]?.at, limit: 1000 })).flat())).toEqual(
        ids(want),
      );
      const t = newestFirst(all.slice(5_000, 11_000)).filter((e) => e.tool === 'tool.7');
      expect(
        (await allPages(l, { tool: 'tool.7', from: all[5_000]?.at, to: all[11_000]?.at, limit: 50 })).flat(),
      ).toEqual(t);
    };
    await check(log);
    await log.close();
    const sidecars = (await readdir(h.dir)).filter((n) => n.endsWith('.summary.json')).sort();
    const first = JSON.parse(await readFile(join(h.dir, sidecars[0] as string), 'utf8')) as {
      blocks: Array<{ values: { tool: string[] } }>;
    };
    expect(first.blocks.length).toBeGreaterThanOrEqual(3);
    const withRare = first.blocks.filter((b) => b.values.tool.includes('rare.tool')).length;
    expect(withRare).toBeGreaterThan(0);
    expect(withRare).toBeLessThan(first.blocks.length); // the others are skipped unread
    await check(await h.open({ maxFileBytes: 3 * 1024 * 1024 }));
  });

  it('pages cover every entry exactly once while entries are appended between pages', async () => {
    const { log, all } = await rotatedLog();
    const seen: string[] = [];
    let cursor: string | undefined;
    let extra = 600;
    for (;;) {
      const page = await log.query({ limit: 33, ...(cursor ? { cursor } : {}) });
      seen.push(...ids(page.entries));
      // New entries (and a new file now and then) arrive between every two pages.
      for (let k = 0; k < 40; k++) log.append(varied(extra++));
      await log.flush();
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    expect(seen).toEqual(ids(newestFirst(all)));
    expect(new Set(seen).size).toBe(600);
  });

  it('filtered pages stay exact with appends between pages', async () => {
    const { log, all } = await rotatedLog();
    const want = ids(newestFirst(all).filter((e) => e.result === 'staged'));
    const seen: string[] = [];
    let cursor: string | undefined;
    let extra = 600;
    do {
      const page = await log.query({ result: 'staged', limit: 9, ...(cursor ? { cursor } : {}) });
      seen.push(...ids(page.entries));
      for (let k = 0; k < 25; k++) log.append(varied(extra++));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(want);
  });

  it('cuts off a torn last line left by a crash (never acknowledged), so every line parses, and appends go on in that file', async () => {
    const log = await h.open();
    for (let i = 0; i < 10; i++) log.append(entry(i));
    await log.close();
    const [name] = (await readdir(h.dir)).filter((n) => n.endsWith('.jsonl'));
    const file = join(h.dir, name as string);
    const torn = JSON.stringify(entry(10));
    await appendFile(file, torn.slice(0, torn.length - 20));

    const after = await h.open();
    expect(h.logger.records.some((r) => r.level === 'warn' && r.msg.includes('incomplete line'))).toBe(true);
    expect(ids((await after.query({ limit: 100 })).entries)).toEqual(
      ids(newestFirst(Array.from({ length: 10 }, (_, i) => entry(i)))),
    );
    after.append(entry(11));
    const page = await after.query({ limit: 100 });
    expect(page.entries).toHaveLength(11);
    expect(page.entries[0]?.id).toBe('e000011');
    await after.close();
    const files = (await readdir(h.dir)).filter((n) => n.endsWith('.jsonl'));
    expect(files).toEqual([name]);
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual([
      ...ids(Array.from({ length: 10 }, (_, i) => entry(i))),
      'e000011',
    ]);
  });

  it('skips garbage and foreign lines in the middle of a file', async () => {
    const log = await h.open();
    log.append(entry(1));
    await log.close();
    const [name] = (await readdir(h.dir)).filter((n) => n.endsWith('.jsonl'));
    await appendFile(join(h.dir, name as string), `not json\n[1,2]\n{"id":"x"}\n${JSON.stringify(entry(2))}\n`);
    const again = await h.open();
    expect(ids((await again.query({})).entries)).toEqual(['e000002', 'e000001']);
  });

  it('a cursor into a file swept since answers with what is left (nothing), not an error', async () => {
    const { log, all } = await rotatedLog({ retentionDays: () => 1 });
    const page = await log.query({ limit: 590 });
    h.clock.ms = Date.parse(all[599]?.at as string) + 86_400_000 + 1;
    expect(await log.sweep()).toBeGreaterThan(5);
    const next = await log.query({ cursor: page.next_cursor as string });
    expect(next.entries).toEqual([]);
    expect(next.next_cursor).toBeNull();
  });
});

describe('file and block summaries', () => {
  it('rule out a block where each filtered value occurs but never together, and only then', async () => {
    const { addToSummary, emptySummary, statsMayMatch, summaryFieldsOf } =
      await import('../../../main/store/audit/summary.ts');
    const { compileFilter } = await import('../../../main/store/audit/filter.ts');
    const s = emptySummary();
    // a token's calls are all ok; the confirmed entries are people's, with no token
    for (let i = 0; i < 50; i++) {
      addToSummary(s, summaryFieldsOf({ ...entry(i, { token_id: 'tok_a', result: 'ok' }) }), 100);
      addToSummary(s, summaryFieldsOf({ ...entry(i, { token_id: null, result: 'confirmed' }) }), 100);
    }
    const block = s.blocks[0]!;
    expect(statsMayMatch(block, compileFilter({ token_id: 'tok_a', result: 'confirmed' }))).toBe(false);
    expect(statsMayMatch(s, compileFilter({ token_id: 'tok_a', result: 'confirmed' }))).toBe(false);
    expect(statsMayMatch(block, compileFilter({ token_id: 'tok_a', result: 'ok' }))).toBe(true);
    expect(statsMayMatch(block, compileFilter({ result: 'confirmed' }))).toBe(true);
    // past the bound of distinct combinations the summary no longer knows, and rules nothing out by them
    for (let i = 0; i < 300; i++) addToSummary(s, summaryFieldsOf({ ...entry(i, { tool: `t${i}` }) }), 10);
    expect(s.blocks[0]!.combos).toBeNull();
    addToSummary(s, summaryFieldsOf({ ...entry(1, { token_id: 'tok_a', result: 'denied' }) }), 10);
    expect(statsMayMatch(s.blocks[0]!, compileFilter({ token_id: 'tok_a', result: 'confirmed' }))).toBe(true);
  });

  it('answer a query that combines two fields the same after a restart (through sidecars) as a full scan', async () => {
    const { log, all } = await rotatedLog();
    const queries: Array<Record<string, string>> = [
      { tool: 'site.pages.list', token_id: 'tok_b' },
      { tool: 'site.pages.list', token_id: 'tok_a' },
      { result: 'denied', user_id: 'u_editor' },
      { token_id: 'tok_c', source_plugin: 'site', result: 'error' },
    ];
    for (const q of queries) {
      const { source_plugin, ...rest } = q;
      const query = { ...rest, ...(source_plugin ? { plugin: source_plugin } : {}) };
      const expected = all
        .filter((e) => Object.entries(q).every(([k, v]) => (e as Record<string, unknown>)[k] === v))
        .map((e) => e.id)
        .reverse();
      expect(ids((await allPages(log, { ...query, limit: 50 })).flat()), JSON.stringify(q)).toEqual(expected);
    }
  });
});
