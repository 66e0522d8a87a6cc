import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { connectClient, startTestService, TestClock } from '../helpers/service.ts';
import type { StagedResponse } from '../../main/contract/staged.ts';

let svc: Awaited<ReturnType<typeof startTestService>>;
let client: Client;
const clock = new TestClock();

beforeAll(async () => {
  svc = await startTestService({ clock });
  client = await connectClient(svc.mcpUrl, (await svc.createToken({ label: 'writer' })).token);
});
afterAll(async () => {
  await client?.close();
  await svc?.cleanup();
});

const page = (id: number) => svc.core.siteStore.read().pages.find((p: { id: number }) => p.id === id)!;
const firstPageId = () => svc.core.siteStore.read().pages[0]!.id as number;

async function stageTitle(id: number, title: string): Promise<StagedResponse> {
  const res = await client.callTool({ name: 'pages_update', arguments: { id, title } });
  expect(res.isError).toBeFalsy();
  const staged = res.structuredContent as StagedResponse;
  expect(staged.status).toBe('pending_approval');
  return staged;
}

async function auditFor(stagedId: string) {
  await svc.core.audit.flush();
  const page = await svc.core.audit.query({ limit: 100 });
  return page.entries
    .filter((e) => e.staged_id === stagedId)
    .map((e) => e.result)
    .sort();
}

describe('staged writes', () => {
  it('a staged write changes nothing until confirmed; confirm twice applies once', async () => {
    const id = firstPageId();
    const before = structuredClone(page(id));
    const staged = await stageTitle(id, 'A brand new title');
    expect(staged.preview.changes.map((c) => c.field)).toContain('title');
    expect(page(id)).toEqual(before);

    const [a, b] = await Promise.all([
      svc.dispatch('staged.confirm', { id: staged.staged_id }),
      svc.dispatch('staged.confirm', { id: staged.staged_id }),
    ]);
    expect(a.ok && b.ok).toBe(true);
    const again = await svc.dispatch('staged.confirm', { id: staged.staged_id });
    expect(again.ok && again.data.status).toBe('confirmed');
    expect(page(id).title).toBe('A brand new title');
    expect(page(id).version).toBe(before.version + 1);
    expect(await auditFor(staged.staged_id)).toEqual(['confirmed', 'staged']);

    const status = await client.callTool({ name: 'staged_writes_status', arguments: { staged_id: staged.staged_id } });
    expect((status.structuredContent as { status: string }).status).toBe('confirmed');
  });

  it('a decision is acknowledged only after its audit entry is synced to disk', async () => {
    const id = firstPageId();
    const audit = svc.core.audit;
    const realSync = audit.sync.bind(audit);
    let synced = 0;
    // A slow disk: the sync takes a while. The answer must still come after it.
    audit.sync = async () => {
      await realSync();
      await new Promise((r) => setTimeout(r, 30));
      synced++;
    };
    try {
      for (const action of ['staged.confirm', 'staged.discard'] as const) {
        const staged = await stageTitle(id, `Durable ${action}`);
        const before = synced;
        const r = await svc.dispatch(action, { id: staged.staged_id });
        expect(r.ok).toBe(true);
        expect(synced, `${action} answered before its audit entry was synced`).toBeGreaterThan(before);
        // and the entry is in the file, read straight from disk
        const dir = join(svc.dataDir, 'audit');
        const text = (
          await Promise.all(
            (await readdir(dir)).filter((n) => n.endsWith('.jsonl')).map((n) => readFile(join(dir, n), 'utf8')),
          )
        ).join('');
        const lines = text.split('\n').filter((l) => l.includes(`"staged_id":"${staged.staged_id}"`));
        expect(lines.map((l) => (JSON.parse(l) as { result: string }).result)).toContain(
          action === 'staged.confirm' ? 'confirmed' : 'discarded',
        );
      }
    } finally {
      audit.sync = realSync;
    }
  });

  it('discard drops it and writes one audit entry', async () => {
    const id = firstPageId();
    const staged = await stageTitle(id, 'Never applied');
    const r = await svc.dispatch('staged.discard', { id: staged.staged_id });
    expect(r.ok && r.data.status).toBe('discarded');
    expect(page(id).title).not.toBe('Never applied');
    const late = await svc.dispatch('staged.confirm', { id: staged.staged_id });
    expect(late.ok).toBe(false);
    expect(!late.ok && late.code).toBe('staged_already_decided');
    expect(await auditFor(staged.staged_id)).toEqual(['discarded', 'staged']);
  });

  it('expires after 15 minutes (injected clock): confirm answers staged_expired and an expired entry is written', async () => {
    const id = firstPageId();
    const staged = await stageTitle(id, 'Too late');
    clock.advance(14 * 60_000);
    expect((await svc.dispatch('staged.get', { id: staged.staged_id })).ok).toBe(true);
    clock.advance(60_000 + 1);
    const r = await svc.dispatch('staged.confirm', { id: staged.staged_id });
    expect(!r.ok && r.code).toBe('staged_expired');
    expect(page(id).title).not.toBe('Too late');
    expect(await auditFor(staged.staged_id)).toEqual(['expired', 'staged']);
    const again = await svc.dispatch('staged.confirm', { id: staged.staged_id });
    expect(!again.ok && again.code).toBe('staged_expired');
  });

  it('the sweeper expires writes nobody looked at', async () => {
    const staged = await stageTitle(firstPageId(), 'Swept');
    clock.advance(15 * 60_000 + 1);
    expect(await svc.core.staging.sweep()).toBeGreaterThanOrEqual(1);
    const s = await svc.dispatch('staged.get', { id: staged.staged_id });
    expect(s.ok && s.data.status).toBe('expired');
    expect(await auditFor(staged.staged_id)).toEqual(['expired', 'staged']);
  });

  it('stale_preview when the target changed since the preview', async () => {
    const id = firstPageId();
    const first = await stageTitle(id, 'First edit');
    const second = await stageTitle(id, 'Second edit');
    expect((await svc.dispatch('staged.confirm', { id: first.staged_id })).ok).toBe(true);
    const r = await svc.dispatch('staged.confirm', { id: second.staged_id });
    expect(!r.ok && r.code).toBe('stale_preview');
    expect(page(id).title).toBe('First edit');
  });

  it('every outcome of a call leaves exactly one audit entry', async () => {
    await svc.core.audit.flush();
    const count = async () => (await svc.core.audit.query({ limit: 1000 })).entries.length;
    const start = await count();
    await client.callTool({ name: 'site_identity', arguments: {} }); // ok
    await client.callTool({ name: 'pages_get', arguments: { id: 999_999 } }); // error (not found)
    await client.callTool({ name: 'pages_get', arguments: { id: 'x' } }); // invalid params
    await client.callTool({ name: 'translate_page', arguments: { id: firstPageId(), target_language: 'fr' } }); // entitlement (free plan)
    await client.callTool({ name: 'nope', arguments: {} }).catch(() => undefined); // unknown tool
    await svc.core.audit.flush();
    const entries = (await svc.core.audit.query({ limit: 5 })).entries;
    expect(await count()).toBe(start + 5);
    expect(entries.map((e) => [e.tool, e.result, e.error_code])).toEqual([
      ['nope', 'denied', 'unknown_tool'],
      ['translate_page', 'denied', 'entitlement_required'],
      ['pages_get', 'error', 'invalid_params'],
      ['pages_get', 'error', 'not_found'],
      ['site_identity', 'ok', null],
    ]);
    for (const e of entries) expect(JSON.stringify(e)).not.toMatch(/gth_[A-Za-z0-9_-]{43}/);
    // the 2025-era client named itself only in initialize; the gateway remembers it per token
    for (const e of entries) expect(e.client).toBe('gatehouse-test');
  });

  it('entitlement_required is a tool result with the required plan', async () => {
    const res = await client.callTool({
      name: 'translate_page',
      arguments: { id: firstPageId(), target_language: 'fr' },
    });
    expect(res.isError).toBe(true);
    expect(res.structuredContent).toBeUndefined();
    expect(res._meta?.['gatehouse/error']).toMatchObject({ code: 'entitlement_required', required_plan: 'pro' });
  });

  it('a disabled tool is invisible and uncallable, live', async () => {
    await svc.dispatch('settings.update', { disabled_tools: ['pages_search'] });
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('pages_search');
      await expect(client.callTool({ name: 'pages_search', arguments: { query: 'coffee' } })).rejects.toMatchObject({
        code: -32602,
      });
    } finally {
      await svc.dispatch('settings.update', { disabled_tools: [] });
    }
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('pages_search');
  });

  it("approval_mode agent adds confirm/discard tools for the caller's own writes", async () => {
    await svc.dispatch('settings.update', { approval_mode: 'agent' });
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['staged_writes_confirm', 'staged_writes_discard']));
      const id = firstPageId();
      const staged = await stageTitle(id, 'Agent confirmed');
      const res = await client.callTool({ name: 'staged_writes_confirm', arguments: { staged_id: staged.staged_id } });
      expect(res.isError).toBeFalsy();
      expect(page(id).title).toBe('Agent confirmed');
    } finally {
      await svc.dispatch('settings.update', { approval_mode: 'admin' });
    }
  });

  it('a read-only token sees no write tools', async () => {
    const ro = await svc.createToken({ label: 'ro', scope: { read_only: true } });
    const c = await connectClient(svc.mcpUrl, ro.token);
    try {
      const names = (await c.listTools()).tools.map((t) => t.name);
      expect(names).toContain('pages_get');
      expect(
        names.filter((n) => ['pages_update', 'pages_create', 'pages_delete', 'pages_publish'].includes(n)),
      ).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
