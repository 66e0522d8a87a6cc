import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import type { AuditEntry, AuditPage } from '../../main/contract/audit.ts';
import type { StagedResponse } from '../../main/contract/staged.ts';
import { connectClient, startTestService } from '../helpers/service.ts';

/** Every call that names a target records it in its audit entry, whatever the outcome, in both eras. */
let svc: Awaited<ReturnType<typeof startTestService>>;
let token: string;

beforeAll(async () => {
  svc = await startTestService();
  await svc.dispatch('users.add', { login: 'reader', role: 'subscriber' });
  token = (await svc.createToken({ label: 'targets' })).token;
});
afterAll(async () => svc?.cleanup());

async function entries(tool: string): Promise<AuditEntry[]> {
  await svc.core.auditor.durable();
  const r = await svc.dispatch('audit.query', { tool, limit: 100 });
  if (!r.ok) throw new Error(r.message);
  return (r.data as AuditPage).entries;
}

for (const era of ['legacy', 'modern'] as const) {
  describe(era === 'legacy' ? '2025-11-25' : '2026-07-28', () => {
    let client: Client;
    beforeAll(async () => (client = await connectClient(svc.mcpUrl, token, era)));
    afterAll(async () => client?.close());

    it('a read of a page, by id and by slug, names the page', async () => {
      await client.callTool({ name: 'pages_get', arguments: { id: 2 } });
      await client.callTool({ name: 'pages_get', arguments: { slug: 'no-such-page' } });
      const targets = (await entries('pages_get')).map((e) => [e.result, e.target]);
      expect(targets).toContainEqual(['ok', 'page:2']);
      expect(targets).toContainEqual(['error', 'page:/no-such-page/']);
    });

    it('a write refused on a named page names it', async () => {
      const res = await client.callTool({ name: 'pages_update', arguments: { id: 9999, title: 'Nowhere' } });
      expect(res.isError).toBe(true);
      expect((await entries('pages_update')).filter((e) => e.result === 'error').map((e) => e.target)).toContain(
        'page:9999',
      );
    });

    it('a confirmed pages_create names the page it made', async () => {
      const res = await client.callTool({ name: 'pages_create', arguments: { title: `Made in ${era}` } });
      const staged = res.structuredContent as StagedResponse;
      const confirmed = await svc.dispatch('staged.confirm', { id: staged.staged_id });
      expect(confirmed.ok).toBe(true);
      const made = (confirmed as { data: { result: { page: { id: number } } } }).data.result.page.id;
      const entry = (await entries('pages_create')).find(
        (e) => e.result === 'confirmed' && e.staged_id === staged.staged_id,
      );
      expect(entry?.target).toBe(`page:${made}`);
    });
  });
}

it('a refusal for want of a capability names the page too', async () => {
  const reader = (await svc.createToken({ label: 'reader', user: 'reader' })).token;
  const c = await connectClient(svc.mcpUrl, reader);
  try {
    await c.callTool({ name: 'seo_analyze_page', arguments: { id: 3 } });
  } finally {
    await c.close();
  }
  expect((await entries('seo_analyze_page')).map((e) => e.target)).toContain('page:3');
});
