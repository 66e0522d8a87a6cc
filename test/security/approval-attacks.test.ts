import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { ADMIN_PREFIX, REST_PREFIX } from '../../main/contract/health.ts';
import { ROLE_CAPABILITIES } from '../../main/contract/users.ts';
import type { StagedResponse } from '../../main/contract/staged.ts';
import type { TokenCreateInput } from '../../main/contract/tokens.ts';
import { ADMIN_KEY_ACCOUNT } from '../../main/store/vault-account.ts';
import { connectClient, startTestService } from '../helpers/service.ts';

// Who may approve: client tokens are not admin credentials (docs/decisions.md). Each
// attacker path, tried against the real service over HTTP and MCP, must be
// refused, and must leave the staged write, the settings, the tokens and the
// vault as they were. Only a person (console session, tray, CLI with the
// admin key) approves; an agent only through the MCP tools of `agent` mode.

let svc: Awaited<ReturnType<typeof startTestService>>;
let cookie: string;
const clients: Client[] = [];

beforeAll(async () => {
  svc = await startTestService();
  const res = await fetch(svc.loginUrl(), { redirect: 'manual' });
  cookie = res.headers.get('set-cookie')!.split(';')[0]!;
});
afterEach(async () => {
  await svc.dispatch('settings.update', { approval_mode: 'admin', disabled_tools: [], cors: [], rate_limit: 120 });
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await svc?.cleanup();
});

const admin = (path: string) => `${svc.baseUrl}${ADMIN_PREFIX}/${path}`;
const pro = (path: string) => `${svc.baseUrl}${REST_PREFIX}/pro/${path}`;
const bearer = (token: string, extra: Record<string, string> = {}) => ({
  Authorization: `Bearer ${token}`,
  'Content-Type': 'application/json',
  ...extra,
});
const send = (url: string, method: string, headers: Record<string, string>, body?: unknown) =>
  fetch(url, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
const page = (id: number) => svc.core.siteStore.read().pages.find((p: { id: number }) => p.id === id)!;

async function token(input: TokenCreateInput) {
  return svc.createToken(input);
}
async function mcp(tok: string): Promise<Client> {
  const c = await connectClient(svc.mcpUrl, tok);
  clients.push(c);
  return c;
}
async function stage(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const res = await client.callTool({ name, arguments: args });
  expect(res.isError, JSON.stringify(res.structuredContent)).toBeFalsy();
  return (res.structuredContent as StagedResponse).staged_id;
}
const status = (id: string) => svc.core.staging.get(id).status;

/** Every state-changing admin call an agent would want, made with `tok`: each must be refused with 403 and change nothing. */
async function expectNoAdminPower(tok: string, stagedId: string) {
  const settings = structuredClone(svc.core.settings.get());
  const tokens = svc.core.tokens.list().length;
  const attempts: Array<[string, string, unknown?]> = [
    [admin('settings'), 'PATCH', { approval_mode: 'agent' }],
    [admin('settings'), 'PATCH', { cors: ['*'], rate_limit: 0 }],
    [admin('tokens'), 'POST', { label: 'unrestricted' }],
    [admin(`staged/${stagedId}/confirm`), 'POST', {}],
    [admin('users'), 'POST', { login: 'mallory', role: 'administrator' }],
    [admin('health'), 'GET'],
    [admin('login-link'), 'POST', {}],
    [pro('license/activate'), 'POST', {}],
  ];
  for (const [url, method, body] of attempts) {
    const res = await send(url, method, bearer(tok), body);
    expect(res.status, `${method} ${url}`).toBe(403);
    const answer = (await res.json()) as { code?: string; error?: { code: string } };
    expect(answer.code ?? answer.error?.code, `${method} ${url}`).toBe('forbidden');
  }
  expect(svc.core.settings.get()).toEqual(settings);
  expect(svc.core.tokens.list()).toHaveLength(tokens);
  expect(status(stagedId)).toBe('pending');
}

describe('who may approve: attacker paths are refused', () => {
  it('a read-only token of an administrator cannot switch to agent mode, open CORS, mint tokens or confirm over the admin API', async () => {
    const writer = await token({ label: 'writer', user: 'admin' });
    const stagedId = await stage(await mcp(writer.token), 'pages_update', { id: 1, title: 'Approved by nobody' });
    const ro = await token({ label: 'ro', user: 'admin', scope: { read_only: true } });
    await expectNoAdminPower(ro.token, stagedId);
    expect(page(1).title).not.toBe('Approved by nobody');
    // what it may still do: read the local REST, for integrations
    expect((await send(pro('license'), 'GET', bearer(ro.token))).status).toBe(200);
  });

  it("a --tools-narrowed token cannot confirm its own write over the admin API, nor a wider token's over MCP", async () => {
    // (the confirm tool exists only in agent mode, so only then can a token be narrowed to it)
    await svc.dispatch('settings.update', { approval_mode: 'agent' });
    const narrow = await token({
      label: 'narrow',
      scope: { tools: ['pages_update', 'staged_writes_confirm', 'staged_writes_status'] },
    });
    const narrowClient = await mcp(narrow.token);
    const own = await stage(narrowClient, 'pages_update', { id: 2, title: 'Self-approved' });
    await expectNoAdminPower(narrow.token, own);
    // the same user's wider token staged a write the narrow one may not call
    const wide = await token({ label: 'wide' });
    const foreign = await stage(await mcp(wide.token), 'pages_delete', { id: 3 });
    const res = await narrowClient.callTool({ name: 'staged_writes_confirm', arguments: { staged_id: foreign } });
    expect(res.isError).toBe(true);
    expect((res._meta?.['gatehouse/error'] as { code: string }).code).toBe('forbidden');
    expect(status(foreign)).toBe('pending');
    expect(page(3)).toBeDefined();
    // narrowed tokens do not read the local REST either
    expect((await send(pro('license'), 'GET', bearer(narrow.token))).status).toBe(403);
  });

  it('a contributor cannot confirm a write of a tool that was disabled after it staged it', async () => {
    await svc.dispatch('users.add', { login: 'carl', role: 'contributor' });
    const carl = await token({ label: 'carl', user: 'carl' });
    const client = await mcp(carl.token);
    await svc.dispatch('settings.update', { approval_mode: 'agent' });
    const id = await stage(client, 'pages_create', { title: 'Contributor draft' });
    await svc.dispatch('settings.update', { disabled_tools: ['pages_create'] });
    const res = await client.callTool({ name: 'staged_writes_confirm', arguments: { staged_id: id } });
    expect(res.isError).toBe(true);
    expect((res._meta?.['gatehouse/error'] as { code: string }).code).toBe('forbidden');
    expect(status(id)).toBe('pending');
    expect(svc.core.siteStore.read().pages.some((p: { title: string }) => p.title === 'Contributor draft')).toBe(false);
    await expectNoAdminPower(carl.token, id);
  });

  it('a subscriber (a contributor demoted after staging) cannot decide its old write, nor spoil it for the person', async () => {
    await svc.dispatch('users.add', { login: 'sue', role: 'contributor' });
    const sue = await token({ label: 'sue', user: 'sue' });
    const client = await mcp(sue.token);
    await svc.dispatch('settings.update', { approval_mode: 'agent' });
    const id = await stage(client, 'pages_create', { title: 'Written before demotion' });
    await svc.dispatch('users.setRole', { login: 'sue', role: 'subscriber' });
    const res = await client.callTool({ name: 'staged_writes_confirm', arguments: { staged_id: id } });
    expect(res.isError).toBe(true);
    expect(status(id)).toBe('pending');
    await expectNoAdminPower(sue.token, id);
    expect((await send(pro('license'), 'GET', bearer(sue.token))).status).toBe(403);
  });

  it('an agent confirms nothing in admin mode, even when it saw the confirm tool a moment ago', async () => {
    const writer = await token({ label: 'agent', user: 'admin' });
    const client = await mcp(writer.token);
    await svc.dispatch('settings.update', { approval_mode: 'agent' });
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('staged_writes_confirm');
    const id = await stage(client, 'pages_update', { id: 1, title: 'Confirmed in admin mode' });
    await svc.dispatch('settings.update', { approval_mode: 'admin' });
    await expect(
      client.callTool({ name: 'staged_writes_confirm', arguments: { staged_id: id } }),
    ).rejects.toMatchObject({ code: -32602 });
    await expect(
      svc.core.staging.confirm(id, {
        kind: 'agent',
        ctx: {
          user: svc.core.users.byLogin('admin')!,
          capabilities: new Set(ROLE_CAPABILITIES.administrator),
          token: svc.core.options.read().tokens.find((t) => t.id === writer.record.id)!,
          request_id: 'r',
          client: 'x',
        },
      }),
    ).rejects.toMatchObject({ code: 'forbidden' });
    expect(status(id)).toBe('pending');
  });

  it("a page on another origin (another local port: cookies are not port-scoped) gets nothing with the console's session cookie", async () => {
    const writer = await token({ label: 'victim-agent' });
    const id = await stage(await mcp(writer.token), 'pages_update', { id: 1, title: 'Approved by a web page' });
    const evil = 'http://127.0.0.1:9';
    // a form POST or fetch from that page: the browser sends its Origin
    const post = await send(
      admin(`staged/${id}/confirm`),
      'POST',
      {
        Cookie: cookie,
        'X-Gatehouse-CSRF': '1',
        Origin: evil,
        'Sec-Fetch-Site': 'same-site',
        'Content-Type': 'application/json',
      },
      {},
    );
    expect(post.status).toBe(403);
    // an <img>/<script>/<a> GET from that page: no Origin header, but Fetch Metadata says same-site
    for (const path of ['tokens', 'audit/export?format=jsonl', 'settings']) {
      const get = await send(admin(path), 'GET', {
        Cookie: cookie,
        'Sec-Fetch-Site': 'same-site',
        'Sec-Fetch-Mode': 'no-cors',
      });
      expect(get.status, path).toBe(403);
    }
    expect((await send(pro('license'), 'GET', { Cookie: cookie, 'Sec-Fetch-Site': 'same-site' })).status).toBe(403);
    expect(status(id)).toBe('pending');
    // the console's own page still works
    expect((await send(admin('settings'), 'GET', { Cookie: cookie, 'Sec-Fetch-Site': 'same-origin' })).status).toBe(
      200,
    );
  });

  it("naming the service's admin-api-key as a keychain account never replaces the admin key", async () => {
    const vault = svc.core.vault;
    const key = (await vault.get(ADMIN_KEY_ACCOUNT))!;
    expect(key).toMatch(/^gha_/);
    // a token holder tries through the admin API
    const ops = await token({ label: 'ops', user: 'admin' });
    const byToken = await send(admin('tokens'), 'POST', bearer(ops.token), {
      label: 'takeover',
      keychain_account: ADMIN_KEY_ACCOUNT,
    });
    expect(byToken.status).toBe(403);
    // a person (the console) names it too: the token goes to the clients' namespace instead
    const byPerson = await send(
      admin('tokens'),
      'POST',
      { Cookie: cookie, 'X-Gatehouse-CSRF': '1', 'Content-Type': 'application/json' },
      { label: 'bridge', keychain_account: ADMIN_KEY_ACCOUNT },
    );
    expect(byPerson.status).toBe(200);
    const created = ((await byPerson.json()) as { data: { token: string } }).data;
    expect(await vault.get(ADMIN_KEY_ACCOUNT)).toBe(key);
    expect(await vault.get(`client-token/${ADMIN_KEY_ACCOUNT}`)).toBe(created.token);
    // the admin key still opens the admin API, and the new token does not
    expect((await send(admin('health'), 'GET', bearer(key))).status).toBe(200);
    expect((await send(admin('health'), 'GET', bearer(created.token))).status).toBe(403);
  });
});
