import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { ADMIN_PREFIX, REST_PREFIX } from '../../main/contract/health.ts';
import type { StagedResponse } from '../../main/contract/staged.ts';
import { connectClient, rawPost, startTestService } from '../helpers/service.ts';

// No agent can ever approve itself: an agent holding an
// administrator's token, in the default `admin` approval mode, tries every
// path of this area to approve its own staged write — the MCP tools, the
// admin API and the REST desk routes with its bearer (also with the preview
// hash it was shown, as a cookie, in the query), then the task methods of a
// 2026-07-28 client (tasks/update with crafted answers, tasks/cancel), the
// approval link's API with its bearer, and every way to change what decides
// (the policy routes, settings, REST, any MCP tool) — and each one is
// refused: nothing is decided, nothing applied, the policy and approval mode
// unchanged. Their areas test them in depth too (test/mcp/staged-tasks,
// test/rest/approval-link*, test/policy/policy-calls).

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
      [
        `${svc.baseUrl}${REST_PREFIX}/admin/staged/${encodeURIComponent(id)}/confirm`,
        { Authorization: `bearer ${tok}` },
        { id },
        [403],
      ],
    ];
    for (const [url, headers, body, expected] of attempts) {
      const r = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      expect(expected, `${url} ${JSON.stringify(headers).slice(0, 60)}`).toContain(r.status);
    }
    // The in-process path an MCP tool would take, with the agent as decider: refused by staging itself.
    const ctx = {
      user: svc.core.users.byLogin('admin')!,
      capabilities: new Set<never>(),
      token: svc.core.options.read().tokens.find((t: { label: string }) => t.label === 'would-be self-approver')!,
      request_id: 'r',
      client: 'x',
    };
    await expect(svc.core.staging.confirm(id, { kind: 'agent', ctx })).rejects.toMatchObject({ code: 'forbidden' });

    expect(svc.core.staging.get(id).status).toBe('pending');
    expect(title()).toBe(before);
    const decided = (await svc.core.audit.query({ limit: 100 })).entries.filter(
      (e: { staged_id?: string | null; result: string }) => e.staged_id === id && e.result !== 'staged',
    );
    expect(decided).toEqual([]);
    // A person still decides it.
    const done = await svc.dispatch('staged.confirm', { id, preview_hash: previewHash });
    expect(done.ok && done.data.status).toBe('confirmed');
  });
});

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'self-approver', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {
    extensions: { 'io.modelcontextprotocol/tasks': {} },
    elicitation: { url: {} },
  },
};
async function rpc(
  method: string,
  params: Record<string, unknown>,
): Promise<{ result?: Record<string, unknown>; error?: { code: number } }> {
  const res = await rawPost(
    svc.mcpUrl,
    { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } },
    {
      Authorization: `Bearer ${tok}`,
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      'Mcp-Name': String(params.name ?? params.taskId ?? ''),
    },
  );
  return (await res.json()) as { result?: Record<string, unknown>; error?: { code: number } };
}

describe('an agent trying the task, link and policy paths', () => {
  it('is refused on every one: nothing decided or applied, the policy and approval mode unchanged', async () => {
    const policyBefore = await svc.dispatch('policy.get', {});
    const modeBefore = svc.core.settings.get().approval_mode;
    const task = (
      await rpc('tools/call', { name: 'pages_update', arguments: { id: 1, title: 'Self-approved by task' } })
    ).result as { taskId: string; status: string; inputRequests: Record<string, { params: { url: string } }> };
    expect(task.status).toBe('input_required');
    const id = task.taskId;
    const [key, request] = Object.entries(task.inputRequests)[0]!;
    const link = request.params.url.split('#approve/')[1]!;
    const previewHash = svc.core.staging.get(id).preview_hash!;
    const before = title();

    // Tasks: every answer to the input request is acknowledged and decides nothing; there is no tasks/result.
    for (const inputResponses of [
      { [key]: { action: 'accept' } },
      { [key]: { action: 'accept', content: { approve: true, preview_hash: previewHash } } },
      { approve: { action: 'accept' } },
    ]) {
      expect((await rpc('tasks/update', { taskId: id, inputResponses })).error).toBeUndefined();
    }
    expect((await rpc('tasks/result', { taskId: id })).error).toMatchObject({ code: -32601 });
    expect((await rpc('tasks/get', { taskId: id })).result).toMatchObject({ status: 'input_required' });

    // The approval link's API and the policy / settings routes, with the bearer.
    const admin = (path: string) => `${svc.baseUrl}${ADMIN_PREFIX}/${path}`;
    const bearer = { Authorization: `Bearer ${tok}`, 'X-Gatehouse-CSRF': '1' };
    const attempts: Array<[url: string, method: string, body: unknown, expected: number[]]> = [
      [admin(`approval/${link}`), 'GET', undefined, [403]],
      [admin(`approval/${link}/confirm`), 'POST', { preview_hash: previewHash }, [403]],
      [admin(`approval/${link}/discard`), 'POST', {}, [403]],
      [admin('policy'), 'GET', undefined, [403]],
      [admin('policy'), 'PUT', { text: 'permit (principal, action, resource);' }, [403]],
      [admin('policy/check'), 'POST', { text: 'permit (principal, action, resource);' }, [403]],
      [admin('policy/explain'), 'POST', { token: 'x', tool: 'pages_update' }, [403]],
      [admin('settings'), 'PATCH', { approval_mode: 'agent' }, [403]],
      [
        `${svc.baseUrl}${REST_PREFIX}/admin/policy`,
        'PUT',
        { text: 'permit (principal, action, resource);' },
        [403, 404],
      ],
    ];
    for (const [url, method, body, expected] of attempts) {
      const r = await fetch(url, {
        method,
        headers: { 'Content-Type': 'application/json', ...bearer },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      expect(expected, `${method} ${url}`).toContain(r.status);
    }
    // No MCP tool reads or changes the policy or the approval mode; made-up ones are unknown tools.
    const tools = ((await rpc('tools/list', {})).result as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(tools.filter((n) => /polic|setting|approv|confirm|discard/.test(n))).toEqual([]);
    for (const name of ['policy_set', 'policy_get', 'settings_update', 'staged_writes_confirm', 'approval_confirm']) {
      const r = await rpc('tools/call', {
        name,
        arguments: { text: 'permit (principal, action, resource);', staged_id: id },
      });
      expect(r.error ?? (r.result as { isError?: boolean }).isError, name).toBeTruthy();
    }

    expect(svc.core.staging.get(id).status).toBe('pending');
    expect(title()).toBe(before);
    const decided = (await svc.core.audit.query({ limit: 200 })).entries.filter(
      (e: { staged_id?: string | null; result: string }) => e.staged_id === id && e.result !== 'staged',
    );
    expect(decided).toEqual([]);
    expect(await svc.dispatch('policy.get', {})).toEqual(policyBefore);
    expect(svc.core.options.read().policy ?? null).toBeNull();
    expect(svc.core.settings.get().approval_mode).toBe(modeBefore);

    // tasks/cancel withdraws its own request: discarded, never approved.
    await rpc('tasks/cancel', { taskId: id });
    expect(svc.core.staging.get(id).status).toBe('discarded');
    expect(title()).toBe(before);
  });
});
