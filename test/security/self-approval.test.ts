import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { ADMIN_PREFIX, REST_PREFIX } from '../../main/contract/health.ts';
import type { StagedResponse } from '../../main/contract/staged.ts';
import { connectClient, startTestService } from '../helpers/service.ts';

// Issue 20, "no agent can ever approve itself": an agent holding an
// administrator's token, in the default `admin` approval mode, tries every
// path of this area to approve its own staged write — the MCP tools, the
// admin API and the REST desk routes with its bearer (also with the preview
// hash it was shown, as a cookie, in the query) — and each one is refused,
// the write stays pending and nothing is applied. (The task, approval link
// and policy paths are tested by their own areas.)

let svc: Awaited<ReturnType<typeof startTestService>>;
let client: Client;
let tok: string;

beforeAll(async () => {
  svc = await startTestService();
  tok = (await svc.createToken({ label: 'would-be self-approver', user: 'admin' })).token;
  client = await connectClient(svc.mcpUrl, tok);
});
afterAll(async () => {
  await client?.close();
  await svc?.cleanup();
});

const title = () => svc.core.siteStore.read().pages.find((p: { id: number }) => p.id === 1)?.title;

describe('an agent trying to approve its own write', () => {
  it('is refused on every path; the write stays pending and nothing is applied', async () => {
    const res = await client.callTool({ name: 'pages_update', arguments: { id: 1, title: 'Self-approved' } });
    const { staged_id: id } = res.structuredContent as StagedResponse;
    const before = title();
    const previewHash = svc.core.staging.get(id).preview_hash!;

    // MCP: the confirm and discard tools do not exist for it in admin mode; the status tool only reads.
    for (const name of ['staged_writes_confirm', 'staged_writes_discard']) {
      await expect(client.callTool({ name, arguments: { staged_id: id } })).rejects.toMatchObject({ code: -32602 });
    }
    const status = await client.callTool({ name: 'staged_writes_status', arguments: { staged_id: id, confirm: true } });
    expect(JSON.stringify(status.structuredContent)).toContain('"pending"');

    // The admin API and the REST desk routes, with its bearer, however it is presented.
    const desk = (path: string) => `${svc.baseUrl}${ADMIN_PREFIX}/${path}`;
    const attempts: Array<[url: string, headers: Record<string, string>, body: unknown, expected: number[]]> = [
      [desk(`staged/${id}/confirm`), { Authorization: `Bearer ${tok}` }, { preview_hash: previewHash }, [403]],
      [desk(`staged/${id}/confirm`), { Authorization: `Bearer ${tok}`, 'X-Gatehouse-CSRF': '1' }, {}, [403]],
      [desk(`staged/${id}/discard`), { Authorization: `Bearer ${tok}` }, {}, [403]],
      [desk(`staged/${id}/confirm`), { Cookie: `gatehouse_session=${tok}` }, {}, [401]],
      [`${desk(`staged/${id}/confirm`)}?access_token=${tok}`, {}, {}, [401]],
      [`${svc.baseUrl}${REST_PREFIX}/admin/staged/${encodeURIComponent(id)}/confirm`, { Authorization: `bearer ${tok}` }, { id }, [403]],
    ];
    for (const [url, headers, body, expected] of attempts) {
      const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
      expect(expected, `${url} ${JSON.stringify(headers).slice(0, 60)}`).toContain(r.status);
    }
    // The in-process path an MCP tool would take, with the agent as decider: refused by staging itself.
    const ctx = { user: svc.core.users.byLogin('admin')!, capabilities: new Set<never>(), token: svc.core.options.read().tokens.find((t: { label: string }) => t.label === 'would-be self-approver')!, request_id: 'r', client: 'x' };
    await expect(svc.core.staging.confirm(id, { kind: 'agent', ctx })).rejects.toMatchObject({ code: 'forbidden' });

    expect(svc.core.staging.get(id).status).toBe('pending');
    expect(title()).toBe(before);
    const decided = (await svc.core.audit.query({ limit: 100 })).entries.filter((e: { staged_id?: string | null; result: string }) => e.staged_id === id && e.result !== 'staged');
    expect(decided).toEqual([]);
    // A person still decides it.
    const done = await svc.dispatch('staged.confirm', { id, preview_hash: previewHash });
    expect(done.ok && done.data.status).toBe('confirmed');
  });
});
