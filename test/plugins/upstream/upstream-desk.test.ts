import { readFile } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamDetail, UpstreamToolView } from '../../../main/contract/upstreams.ts';
import type { StagedPayload } from '../../../main/contract/staged.ts';
import type { AuditEntry } from '../../../main/contract/audit.ts';
import { startFixtureWorld, until, type FixtureWorld, type UpstreamWorld } from './upstream-world.ts';

/**
 * The desk's side of upstreams through the real admin API: the console's
 * two-step add (nothing offered until the person consents to the listed set,
 * bound to the hashes they saw) and settling a write whose outcome is
 * unknown (a real upstream timeout after the call was sent), with bad input
 * and a client token tried on the new routes.
 */
let f: FixtureWorld;
let u: UpstreamWorld;
let client: Client;
let journal: string;
let stdio: FixtureWorld['stdio'];

const names = async () => (await client.listTools()).tools.map((t) => t.name);
const byToken = (method: string, path: string, body?: unknown) =>
  fetch(`${u.w.svc.adminUrl}/${path}`, {
    method,
    headers: { Authorization: `Bearer ${u.token}`, 'Content-Type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

/** A write staged on `id__append` and confirmed: the upstream gets it and holds its answer past the timeout. */
async function unknownWrite(line: string): Promise<string> {
  const staged = await client.callTool({ name: 'quick__append', arguments: { line, hold_ms: 3000 } });
  const id = (staged.structuredContent as { staged_id: string }).staged_id;
  const r = await u.w.admin('POST', `staged/${id}/confirm`);
  expect(r.body).toMatchObject({ ok: false, code: 'outcome_unknown' });
  return id;
}

beforeAll(async () => {
  f = await startFixtureWorld({ prefix: 'gh-updesk-', id: 'quick', extra: { timeout_ms: 300 } });
  ({ u, client, journal, stdio } = f);
}, 120_000);
afterAll(() => f?.stop());

describe('adding in two steps (the console)', () => {
  it('lists the tools without offering any; consent binds to the hashes shown; then they are offered', async () => {
    const d = await u.ok<UpstreamDetail>('POST', 'upstreams', stdio('two', { approve_listed: false, read: ['pid'] }));
    expect(d.tool_list.length).toBeGreaterThan(3);
    for (const t of d.tool_list)
      expect(t).toMatchObject({ state: 'quarantined', hash: null, pending: { reason: 'new' } });
    // the class it would get: readOnlyHint for lookup, a person's mark for pid, a write for append
    const cls = Object.fromEntries(d.tool_list.map((t) => [t.tool, t.class]));
    expect(cls).toMatchObject({ lookup: 'read', pid: 'read', append: 'write' });
    expect((await names()).filter((n) => n.startsWith('two__'))).toEqual([]);

    const consent = d.tool_list.map((t) => ({ tool: t.tool, hash: t.pending!.hash }));
    const wrong = consent.map((c) => (c.tool === 'append' ? { ...c, hash: `sha256:${'0'.repeat(64)}` } : c));
    const refused = await u.w.admin('POST', 'upstreams/two/review', { consent: wrong });
    expect(refused).toMatchObject({
      status: 409,
      body: { ok: false, code: 'conflict', message: expect.stringContaining("'append'") },
    });
    expect((await u.ok<UpstreamToolView[]>('GET', 'upstreams/two/tools')).every((t) => t.state === 'quarantined')).toBe(
      true,
    );

    const done = await u.ok<UpstreamToolView[]>('POST', 'upstreams/two/review', { consent, write: ['lookup'] });
    expect(done.every((t) => t.state === 'approved')).toBe(true);
    expect(done.find((t) => t.tool === 'lookup')!.class).toBe('write');
    await until(async () => (await names()).includes('two__pid'), 10_000, 'the consented tools');
    // a second consent to the same hashes: nothing waits with them any more
    expect((await u.w.admin('POST', 'upstreams/two/review', { consent: consent.slice(0, 1) })).body).toMatchObject({
      ok: false,
      code: 'conflict',
    });
    await u.ok('DELETE', 'upstreams/two');
  });

  it('refuses bad input with a clear error and spawns nothing', async () => {
    const bad: Array<[unknown, RegExp]> = [
      [stdio('__proto__'), /id/],
      [stdio('constructor-'), /id/],
      [
        { ...stdio('ctl'), transport: { kind: 'stdio', command: `${process.execPath}\u001b[2J`, args: [] } },
        /control characters/,
      ],
      [{ ...stdio('nul'), transport: { kind: 'stdio', command: process.execPath, args: ['a\u0000b'] } }, /NUL/],
      [
        {
          ...stdio('big'),
          transport: {
            kind: 'stdio',
            command: process.execPath,
            args: [],
            env: [{ name: 'X', value: 'v'.repeat(17 * 1024) }],
          },
        },
        /transport/,
      ],
      [
        {
          ...stdio('many'),
          transport: { kind: 'stdio', command: process.execPath, args: Array.from({ length: 201 }, () => 'a') },
        },
        /args/,
      ],
      [
        {
          ...stdio('hdr'),
          transport: {
            kind: 'http',
            url: 'http://127.0.0.1:9/mcp',
            headers: [{ name: 'X-Key', value: 'a\r\nInjected: 1' }],
          },
        },
        /line breaks/,
      ],
      [
        { ...stdio('extra'), ...(JSON.parse('{"__proto__": {"polluted": true}}') as object), approve_listed: 'yes' },
        /approve_listed|__proto__|nrecognized/,
      ],
      [{ id: 'x'.repeat(100_000), transport: { kind: 'stdio', command: 'x' } }, /id/],
    ];
    for (const [body, message] of bad) {
      const r = await u.w.admin('POST', 'upstreams', body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(r.body).toMatchObject({ ok: false, code: 'invalid_value', message: expect.stringMatching(message) });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await u.ok<Array<{ id: string }>>('GET', 'upstreams')).map((x) => x.id)).toEqual(['quick']);
    const review = await u.w.admin('POST', 'upstreams/quick/review', {
      consent: [{ tool: '__proto__', hash: 'sha256:x' }],
    });
    expect(review.body).toMatchObject({ ok: false, code: 'invalid_value' });
  });
});

describe('settling a write whose outcome is unknown', () => {
  it('not applied: recorded, audited with the person, seen by the agent; nothing sent again', async () => {
    const id = await unknownWrite('first');
    await until(async () => (await readFile(journal, 'utf8')) === 'first\n', 5000, 'the upstream to get the write');
    const before = await client.callTool({ name: 'staged_writes_status', arguments: { staged_id: id } });
    expect(before.structuredContent).toMatchObject({ status: 'failed', error_code: 'outcome_unknown' });
    expect(before.structuredContent).not.toHaveProperty('settled');
    const warned = async () =>
      (await u.ok<{ warnings: Array<{ code: string; message: string }> }>('GET', 'health')).warnings.filter(
        (x) => x.code === 'outcome_unknown',
      );
    expect(await warned()).toEqual([
      {
        code: 'outcome_unknown',
        message: expect.stringMatching(/^1 write was sent, but whether it took effect is unknown/),
      },
    ]);

    const s = await u.ok<StagedPayload>('POST', `staged/${id}/settle`, { outcome: 'not_applied' });
    expect(s).toMatchObject({
      status: 'failed',
      error_code: 'not_applied',
      settlement: {
        outcome: 'not_applied',
        was: 'outcome_unknown',
        by: { kind: 'person', surface: 'cli', via: 'admin_key' },
      },
    });
    const after = await client.callTool({ name: 'staged_writes_status', arguments: { staged_id: id } });
    expect(after.structuredContent).toMatchObject({
      status: 'failed',
      error_code: 'not_applied',
      settled: { outcome: 'not_applied', was: 'outcome_unknown' },
    });
    expect(await warned()).toEqual([]);

    const audit = await u.ok<{ entries: AuditEntry[] }>('GET', 'audit?tool=quick__append');
    const mine = audit.entries.filter((e) => e.staged_id === id);
    expect(mine[0]).toMatchObject({
      result: 'error',
      error_code: 'not_applied',
      principal: { kind: 'person', surface: 'cli' },
    });
    expect(mine.map((e) => e.error_code)).toContain('outcome_unknown');

    expect((await u.w.admin('POST', `staged/${id}/settle`, { outcome: 'applied' })).body).toMatchObject({
      ok: false,
      code: 'staged_already_decided',
    });
    expect((await u.w.admin('POST', `staged/${id}/confirm`)).body).toMatchObject({
      ok: false,
      code: 'staged_already_decided',
    });
    // A later call answered by the same process: an append sent to it before would be in the journal by now.
    await client.callTool({ name: 'quick__lookup', arguments: { word: 'x' } });
    expect(await readFile(journal, 'utf8')).toBe('first\n');
  }, 30_000);

  it('applied: the write becomes confirmed with no result, and a second confirm answers that', async () => {
    const id = await unknownWrite('second');
    const s = await u.ok<StagedPayload>('POST', `staged/${id}/settle`, { outcome: 'applied' });
    expect(s).toMatchObject({
      status: 'confirmed',
      error_code: null,
      settlement: { outcome: 'applied', was: 'outcome_unknown' },
    });
    expect(s.result).toBeUndefined();
    const status = await client.callTool({ name: 'staged_writes_status', arguments: { staged_id: id } });
    expect(status.structuredContent).toMatchObject({ status: 'confirmed', settled: { outcome: 'applied' } });
    expect(await u.ok<StagedPayload>('POST', `staged/${id}/confirm`)).toMatchObject({
      status: 'confirmed',
      settlement: { outcome: 'applied' },
    });
    expect((await readFile(journal, 'utf8')).split('\n').filter((l) => l === 'second')).toHaveLength(1);
  }, 30_000);

  it('refuses what cannot be settled and bad input; a client token is refused', async () => {
    const staged = await client.callTool({ name: 'quick__append', arguments: { line: 'pending' } });
    const pending = (staged.structuredContent as { staged_id: string }).staged_id;
    expect((await u.w.admin('POST', `staged/${pending}/settle`, { outcome: 'applied' })).body).toMatchObject({
      ok: false,
      code: 'conflict',
      message: expect.stringContaining('confirm or discard'),
    });
    const cases: Array<[string, unknown, string]> = [
      ['__proto__', { outcome: 'applied' }, 'staged_not_found'],
      ['constructor', { outcome: 'not_applied' }, 'staged_not_found'],
      [encodeURIComponent('stg_\u0000\u001b[31m'), { outcome: 'applied' }, 'staged_not_found'],
      ['x'.repeat(300), { outcome: 'applied' }, 'invalid_value'],
      [pending, { outcome: 'maybe' }, 'invalid_value'],
      [pending, { outcome: 'applied', extra: 1 }, 'invalid_value'],
      [pending, {}, 'invalid_value'],
    ];
    for (const [id, body, code] of cases) {
      const r = await u.w.admin('POST', `staged/${id}/settle`, body);
      expect(r.body, `${id.slice(0, 20)} ${JSON.stringify(body)}`).toMatchObject({ ok: false, code });
      expect([...(r.body.message ?? '')].filter((ch) => ch === '\u0000' || ch === '\u001b')).toEqual([]);
    }
    const id = await unknownWrite('third');
    const res = await byToken('POST', `staged/${id}/settle`, { outcome: 'applied' });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ ok: false, code: 'forbidden' });
    expect(await u.ok<StagedPayload>('GET', `staged/${id}`)).toMatchObject({
      status: 'failed',
      error_code: 'outcome_unknown',
    });
    expect((await u.ok<StagedPayload>('GET', `staged/${id}`)).settlement).toBeUndefined();
    await u.ok('POST', `staged/${pending}/discard`);
  }, 30_000);
});

describe('removing an upstream', () => {
  // A pending write survived the removal and applied to another program re-added under the same id with an
  // identical definition: removing discards it, decided by the person who removed.
  it('discards its pending writes; the same id added again is another program and the old write never applies', async () => {
    await u.ok('POST', 'upstreams', stdio('gone'));
    await until(async () => ((await names()).includes('gone__append') ? true : null), 10_000, 'gone__append');
    const staged = await client.callTool({ name: 'gone__append', arguments: { line: 'never-applied' } });
    const id = (staged.structuredContent as { staged_id: string }).staged_id;
    await u.ok('DELETE', 'upstreams/gone');
    const item = await u.ok<StagedPayload>('GET', `staged/${id}`);
    expect(item).toMatchObject({ status: 'discarded', error_code: 'upstream_removed' });
    const audit = await u.ok<{ entries: AuditEntry[] }>('GET', 'audit?result=discarded');
    expect(audit.entries.find((e) => e.staged_id === id)).toMatchObject({
      error_code: 'upstream_removed',
      principal: expect.objectContaining({ kind: 'person' }),
    });
    await u.ok('POST', 'upstreams', stdio('gone'));
    const confirm = await u.w.admin('POST', `staged/${id}/confirm`);
    expect(confirm.body).toMatchObject({ ok: false });
    expect((await readFile(journal, 'utf8').catch(() => '')).split('\n')).not.toContain('never-applied');
    await u.ok('DELETE', 'upstreams/gone');
  });
});
