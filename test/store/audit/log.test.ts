import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../../main/contract/audit.ts';
import { GatehouseError } from '../../../main/core/errors.ts';
import { AuditHarness, entry, ids } from './fixtures.ts';
import { strictJsonProblems } from '../../helpers/strict-json.ts';

let h: AuditHarness;
beforeEach(async () => {
  h = await new AuditHarness().init();
});
afterEach(async () => {
  await h.cleanup();
});

describe('AuditLog append, flush, close', () => {
  it('round-trips every field, nulls, an absent and a present staged_id, and non-ASCII text', async () => {
    const log = await h.open();
    const full: AuditEntry = {
      id: '01JDX0',
      at: '2026-11-22T07:37:46.123Z',
      request_id: 'req-1',
      tool: 'site.pages.update',
      write: true,
      result: 'staged',
      error_code: 'stale_preview',
      source_plugin: 'site',
      feature_key: 'site.pages.write',
      site: 'https://example.test',
      token_id: 'tok_1',
      token_preview: 'gth_…wxyz',
      user_id: 'u_editor',
      target: 'Über "uns", Seite\n2 — 日本語 😀',
      duration_ms: 12.5,
      client: 'cursor',
      staged_id: 'stg_9',
    };
    const nulls: AuditEntry = {
      ...full,
      id: '01JDX1',
      request_id: null,
      error_code: null,
      source_plugin: null,
      feature_key: null,
      site: null,
      token_id: null,
      token_preview: null,
      user_id: null,
      target: null,
      client: null,
      staged_id: null,
      duration_ms: 0,
      write: false,
      result: 'denied',
    };
    const { staged_id: _omit, ...absent } = { ...full, id: '01JDX2' };
    log.append(full);
    log.append(nulls);
    log.append(absent);
    await log.close();

    const again = await h.open();
    const page = await again.query({ limit: 10 });
    expect(page.entries).toEqual([absent, nulls, full]);
    expect('staged_id' in (page.entries[0] as object)).toBe(false);
    expect(page.next_cursor).toBeNull();
  });

  it('is synchronous for the caller: the entry is visible to a query right after append, without an explicit flush', async () => {
    const log = await h.open();
    log.append(entry(1));
    const page = await log.query({});
    expect(ids(page.entries)).toEqual(['e000001']);
  });

  it('flush puts every appended entry on disk as one JSON line each', async () => {
    const log = await h.open();
    for (let i = 0; i < 500; i++) log.append(entry(i));
    await log.flush();
    const files = (await readdir(h.dir)).filter((n) => n.endsWith('.jsonl'));
    expect(files).toHaveLength(1);
    const lines = (await readFile(join(h.dir, files[0] as string), 'utf8')).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => (JSON.parse(l) as AuditEntry).id)).toEqual(
      Array.from({ length: 500 }, (_, i) => entry(i).id),
    );
  });

  it('keeps the folder private (0700) and the files 0600', async () => {
    const log = await h.open();
    log.append(entry(1));
    await log.flush();
    expect((await stat(h.dir)).mode & 0o777).toBe(0o700);
    const [name] = (await readdir(h.dir)).filter((n) => n.endsWith('.jsonl'));
    expect((await stat(join(h.dir, name as string))).mode & 0o777).toBe(0o600);
    expect(name).toMatch(/^audit-20261101T000000000Z-000001\.jsonl$/);
  });

  it('close persists everything; appends after close are logged and dropped, never thrown', async () => {
    const log = await h.open();
    for (let i = 0; i < 100; i++) log.append(entry(i));
    await log.close();
    expect(() => log.append(entry(100))).not.toThrow();
    expect(
      h.logger.records.some((r) => r.level === 'error' && r.msg.includes('closed') && r.fields?.id === 'e000100'),
    ).toBe(true);
    await log.close(); // twice is harmless

    const again = await h.open();
    const page = await again.query({ limit: 1000 });
    expect(page.entries).toHaveLength(100);
    expect(page.entries[0]?.id).toBe('e000099');
  });

  it('continues the newest file after a restart instead of starting a new one', async () => {
    const a = await h.open();
    a.append(entry(1));
    await a.close();
    const b = await h.open();
    b.append(entry(2));
    await b.close();
    const files = (await readdir(h.dir)).filter((n) => n.endsWith('.jsonl'));
    expect(files).toHaveLength(1);
    const c = await h.open();
    expect(ids((await c.query({})).entries)).toEqual(['e000002', 'e000001']);
  });

  it('rejects an invalid entry with a logged error naming the fields, and keeps the valid ones', async () => {
    const log = await h.open();
    log.append(entry(1));
    log.append({ ...entry(2), duration_ms: -1, result: 'maybe' } as unknown as AuditEntry);
    log.append(null as unknown as AuditEntry);
    log.append(entry(3));
    const page = await log.query({});
    expect(ids(page.entries)).toEqual(['e000003', 'e000001']);
    const rejected = h.logger.records.filter((r) => r.level === 'error' && r.msg.includes('invalid'));
    expect(rejected).toHaveLength(2);
    expect(rejected[0]?.fields).toMatchObject({ id: 'e000002', fields: ['result', 'duration_ms'] });
  });

  it('tells listeners about each accepted entry, survives a throwing listener, and unsubscribes', async () => {
    const log = await h.open();
    const seen: string[] = [];
    log.onAppend(() => {
      throw new Error('listener bug');
    });
    const off = log.onAppend((e) => seen.push(e.id));
    log.append(entry(1));
    log.append({ ...entry(2), tool: 42 } as unknown as AuditEntry);
    off();
    log.append(entry(3));
    expect(seen).toEqual(['e000001']);
    expect(h.logger.records.some((r) => r.level === 'warn' && r.msg.includes('listener'))).toBe(true);
    expect(ids((await log.query({})).entries)).toEqual(['e000003', 'e000001']);
  });

  it('answers a bad query or cursor with invalid_value', async () => {
    const log = await h.open();
    log.append(entry(1));
    await expect(log.query({ limit: 0 })).rejects.toMatchObject({ code: 'invalid_value' });
    await expect(log.query({ from: 'yesterday-ish' })).rejects.toMatchObject({ code: 'invalid_value' });
    await expect(log.query({ cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(GatehouseError);
    await expect(log.query({ result: 'sideways' as never })).rejects.toMatchObject({ code: 'invalid_value' });
  });
});

describe('AuditLog durability and well-formed text', () => {
  it('sync() resolves only once the entry is in the file, and concurrent syncs share the work', async () => {
    const log = await h.open();
    log.append(entry(1));
    const done = await Promise.all([log.sync(), log.sync(), log.sync()]);
    expect(done).toHaveLength(3);
    const [name] = (await readdir(h.dir)).filter((n) => n.endsWith('.jsonl'));
    const text = await readFile(join(h.dir, name as string), 'utf8');
    expect(text).toContain('"id":"e000001"');
    // nothing new: resolves at once
    await log.sync();
  });

  it('lone surrogates in client strings become U+FFFD, so jq (or a strict decoder) reads the file', async () => {
    const log = await h.open();
    log.append(entry(1, { tool: 'x\ud800y', target: '\udc00', client: 'ok 😀 \ud83d' }));
    await log.sync();
    const [name] = (await readdir(h.dir)).filter((n) => n.endsWith('.jsonl'));
    const file = join(h.dir, name as string);
    expect(await strictJsonProblems([file])).toEqual([]);
    const [e] = (await log.query({})).entries;
    expect([e?.tool, e?.target, e?.client]).toEqual(['x\ufffdy', '\ufffd', 'ok 😀 \ufffd']);
  });
});
