import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PREFIX, CSRF_HEADER } from '../../main/contract/index.ts';
import { taskOf } from '../../main/mcp/staged-tasks.ts';
import { rawPost, startTestService } from '../helpers/service.ts';

/**
 * The approval link and the task of a write whose token was revoked or
 * narrowed (docs/tasks.md): a revoked token's write is discarded, its task
 * answers failed with `token_revoked` and its link is gone; a narrowed
 * token's write is shown `blocked` with no approve (a confirm is refused and
 * leaves it pending); and the page's Approve is bound to the preview it
 * showed (`preview_hash`): another hash is refused as stale.
 */
let svc: Awaited<ReturnType<typeof startTestService>>;
let cookie: string;

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'agent', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {
    extensions: { 'io.modelcontextprotocol/tasks': {} },
    elicitation: { url: {} },
  },
};

async function rpc(
  token: string,
  method: string,
  params: Record<string, unknown>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await rawPost(
    svc.mcpUrl,
    { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } },
    {
      Authorization: `Bearer ${token}`,
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      'Mcp-Name': String(params.name ?? params.taskId ?? ''),
    },
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Stages a write as a 2026 client that declared tasks and URL elicitation: its task (= staged) id and link id. */
async function stage(token: string, title: string): Promise<{ id: string; link: string }> {
  const { body } = await rpc(token, 'tools/call', {
    name: 'pages_update',
    arguments: { id: svc.core.siteStore.read().pages[0]!.id, title },
  });
  const task = body.result as { taskId: string; inputRequests: Record<string, { params: { url: string } }> };
  return { id: task.taskId, link: Object.values(task.inputRequests)[0]!.params.url.split('#approve/')[1]! };
}

const api = (path: string, method = 'GET', body?: unknown) =>
  fetch(`${svc.baseUrl}${ADMIN_PREFIX}/approval/${path}`, {
    method,
    headers: {
      Cookie: cookie,
      ...(method === 'POST' ? { [CSRF_HEADER]: '1', 'Content-Type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
const title = () => svc.core.siteStore.read().pages[0]!.title;

beforeAll(async () => {
  svc = await startTestService();
  const login = await fetch(svc.loginUrl(), { redirect: 'manual' });
  cookie = /gatehouse_session=[^;]+/.exec(login.headers.get('set-cookie')!)![0];
  expect((await svc.dispatch('users.add', { login: 'writer', role: 'editor' })).ok).toBe(true);
}, 60_000);
afterAll(async () => svc?.cleanup());

describe('tasks and approval links of revoked and narrowed tokens', () => {
  it('revoking the token: its task answers failed with token_revoked, its link is gone, nothing applied', async () => {
    const t = await svc.createToken({ label: 'to revoke', user: 'admin' });
    const { id, link } = await stage(t.token, 'Never by a revoked token');
    expect((await rpc(t.token, 'tasks/get', { taskId: id })).body.result).toMatchObject({ status: 'input_required' });
    const before = title();
    await svc.revokeToken(t.record.id);

    // The revoked token cannot ask any more; the answer it would get is the task of its record.
    expect((await rpc(t.token, 'tasks/get', { taskId: id })).status).toBe(401);
    const record = svc.core.staging.get(id);
    expect(record).toMatchObject({ status: 'discarded', error_code: 'token_revoked' });
    expect(taskOf(record, { tasks: true, urlElicitation: true }, () => null)).toMatchObject({
      status: 'failed',
      error: { data: { code: 'token_revoked', staged_id: id } },
    });

    const view = await api(link);
    expect(view.status).toBe(410);
    expect(await view.json()).toMatchObject({ ok: false, code: 'approval_link_gone' });
    const confirm = await api(`${link}/confirm`, 'POST', { preview_hash: record.preview_hash });
    expect(confirm.status).toBe(410);
    expect(title()).toBe(before);
  });

  it('narrowing the token (its user demoted): the link shows the write blocked, a confirm is refused, the write stays for a discard', async () => {
    const t = await svc.createToken({ label: 'narrowed', user: 'writer' });
    const { id, link } = await stage(t.token, 'Not after a demotion');
    const before = title();
    expect((await svc.dispatch('users.setRole', { login: 'writer', role: 'subscriber' })).ok).toBe(true);

    const view = (await (await api(link)).json()) as {
      ok: boolean;
      data: { blocked: string | null; preview_hash: string | null; status: string };
    };
    expect(view).toMatchObject({
      ok: true,
      data: { status: 'pending', blocked: 'token_narrowed', preview_hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    const confirm = await api(`${link}/confirm`, 'POST', { preview_hash: view.data.preview_hash });
    expect(confirm.ok).toBe(false);
    expect(await confirm.json()).toMatchObject({ ok: false, code: 'token_narrowed' });
    expect(svc.core.staging.get(id).status).toBe('pending');
    expect(title()).toBe(before);

    // Undone, it is approvable again: the view no longer says blocked.
    expect((await svc.dispatch('users.setRole', { login: 'writer', role: 'editor' })).ok).toBe(true);
    expect(((await (await api(link)).json()) as { data: { blocked: string | null } }).data.blocked).toBeNull();
    expect(await (await api(`${link}/discard`, 'POST')).json()).toMatchObject({
      ok: true,
      data: { status: 'discarded' },
    });
  });

  it("the link's Approve is bound to the preview it showed: another hash is refused as stale and the write stays; the shown one applies", async () => {
    const t = await svc.createToken({ label: 'bound', user: 'admin' });
    const { id, link } = await stage(t.token, 'Bound through the link');
    const shown = ((await (await api(link)).json()) as { data: { preview_hash: string } }).data.preview_hash;
    expect(shown).toBe(svc.core.staging.get(id).preview_hash);

    const stale = await api(`${link}/confirm`, 'POST', { preview_hash: 'f'.repeat(64) });
    expect(stale.ok).toBe(false);
    expect(await stale.json()).toMatchObject({ ok: false, code: 'stale_approval' });
    expect(svc.core.staging.get(id).status).toBe('pending');
    expect((await api(`${link}/confirm`, 'POST', { preview_hash: 'not a hash' })).status).toBe(400);

    const ok = await api(`${link}/confirm`, 'POST', { preview_hash: shown });
    expect(await ok.json()).toMatchObject({ ok: true, data: { status: 'confirmed' } });
    expect(title()).toBe('Bound through the link');
  });
});
