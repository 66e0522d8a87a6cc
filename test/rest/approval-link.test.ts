import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PREFIX, CSRF_HEADER } from '../../main/contract/index.ts';
import { rawPost, startTestService } from '../helpers/service.ts';

/** The approval link's API: a person's console session only; the agent's bearer token never opens it; one write per link; gone once decided. */

let svc: Awaited<ReturnType<typeof startTestService>>;
let token: string;
let cookie: string;

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'agent', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } },
};

/** Stages a write as a 2026 client that declared URL-mode elicitation; returns its staged id and link id. */
async function stage(title: string): Promise<{ id: string; link: string }> {
  const res = await rawPost(
    svc.mcpUrl,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'pages_update', arguments: { id: svc.core.siteStore.read().pages[0]!.id, title }, _meta: META },
    },
    {
      Authorization: `Bearer ${token}`,
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/call',
      'Mcp-Name': 'pages_update',
    },
  );
  const structured = (
    (await res.json()) as { result: { structuredContent: { staged_id: string; approval_url: string } } }
  ).result.structuredContent;
  return { id: structured.staged_id, link: structured.approval_url.split('#approve/')[1]! };
}

const api = (path: string, init: { method?: string; auth?: Record<string, string> } = {}) =>
  fetch(`${svc.baseUrl}${ADMIN_PREFIX}/approval/${path}`, {
    method: init.method ?? 'GET',
    headers: { ...(init.method === 'POST' ? { [CSRF_HEADER]: '1' } : {}), ...init.auth },
  });

beforeAll(async () => {
  svc = await startTestService();
  token = (await svc.createToken({ label: 'agent', user: 'admin' })).token;
  const login = await fetch(svc.loginUrl(), { redirect: 'manual' });
  cookie = /gatehouse_session=[^;]+/.exec(login.headers.get('set-cookie')!)![0];
});
afterAll(async () => svc?.cleanup());

describe('approval links', () => {
  it("the agent's bearer token opens neither the page's API nor any decision, even an administrator's token", async () => {
    const { id, link } = await stage('Not by the agent');
    for (const [path, method] of [
      [link, 'GET'],
      [`${link}/confirm`, 'POST'],
      [`${link}/discard`, 'POST'],
    ] as const) {
      const res = await api(path, { method, auth: { Authorization: `Bearer ${token}` } });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    // nor the console page with the token in place of a session: it is the static console, which asks for a session
    expect(svc.core.staging.get(id).status).toBe('pending');
    expect((await api(link)).status).toBe(401);
  });

  it('with a console session it shows that write only, and approves it; afterwards the link is gone (410)', async () => {
    const { id, link } = await stage('Approved through the link');
    const other = await stage('Another write');
    const view = (await (await api(link, { auth: { Cookie: cookie } })).json()) as {
      ok: boolean;
      data: Record<string, unknown>;
    };
    expect(view).toMatchObject({
      ok: true,
      data: {
        staged_id: id,
        summary: expect.stringContaining('title'),
        status: 'pending',
        expires_at: expect.any(String),
      },
    });
    expect(JSON.stringify(view)).toContain('Approved through the link');
    expect(JSON.stringify(view)).not.toContain(other.id);
    expect(JSON.stringify(view)).not.toContain('Another write');
    const confirmed = await api(`${link}/confirm`, { method: 'POST', auth: { Cookie: cookie } });
    expect(await confirmed.json()).toMatchObject({ ok: true, data: { status: 'confirmed' } });
    expect(svc.core.staging.get(id).decided_by).toMatchObject({ kind: 'person', surface: 'console', via: 'session' });
    for (const [path, method] of [
      [link, 'GET'],
      [`${link}/confirm`, 'POST'],
      [`${link}/discard`, 'POST'],
    ] as const) {
      const res = await api(path, { method, auth: { Cookie: cookie } });
      expect(res.status, `${method} ${path}`).toBe(410);
      expect(await res.json()).toMatchObject({ ok: false, code: 'approval_link_gone' });
    }
    expect(svc.core.staging.get(other.id).status).toBe('pending');
  });

  it('a discarded or expired write answers gone; a made-up link is not found; a malformed one is refused', async () => {
    const { id, link } = await stage('Discarded elsewhere');
    await svc.dispatch('staged.discard', { id });
    expect((await api(link, { auth: { Cookie: cookie } })).status).toBe(410);
    expect((await api('A'.repeat(43), { auth: { Cookie: cookie } })).status).toBe(404);
    expect((await api('not-a-link', { auth: { Cookie: cookie } })).status).toBe(400);
  });

  it('a write the policy now forbids: the link page and the desk (staged get and list) show it blocked with the reason; approve refused, discard works', async () => {
    const { id, link } = await stage('Forbidden after staging');
    const other = await stage('Still allowed');
    const before = await svc.dispatch('policy.get', {});
    const text = before.ok ? (before.data as { text: string }).text : '';
    const set = await svc.dispatch('policy.set', {
      text: `${text}\n@id("no-title-changes")\nforbid (principal, action == Action::"call", resource == Tool::"pages_update") when { context.arg_names.contains("title") };`,
    });
    expect(set.ok).toBe(true);
    const desk = (path: string) =>
      fetch(`${svc.baseUrl}${ADMIN_PREFIX}/${path}`, { headers: { Cookie: cookie } }).then(
        (r) => r.json() as Promise<{ ok: boolean; data: unknown }>,
      );
    try {
      const blocked = {
        blocked: 'policy_denied',
        blocked_reason: "calling pages_update is forbidden by policy 'no-title-changes'",
      };
      expect(await (await api(link, { auth: { Cookie: cookie } })).json()).toMatchObject({
        ok: true,
        data: { staged_id: id, ...blocked },
      });
      expect(await desk(`staged/${id}`)).toMatchObject({ ok: true, data: { id, status: 'pending', ...blocked } });
      const listed = (await desk('staged?status=pending')).data as Array<{ id: string; blocked?: string | null }>;
      expect(listed.find((x) => x.id === id)).toMatchObject(blocked);
      expect(listed.find((x) => x.id === other.id)).toMatchObject(blocked);

      const refused = await api(`${link}/confirm`, { method: 'POST', auth: { Cookie: cookie } });
      expect(await refused.json()).toMatchObject({ ok: false, code: 'policy_denied' });
      expect(svc.core.staging.get(id).status).toBe('pending');
      expect(await (await api(`${link}/discard`, { method: 'POST', auth: { Cookie: cookie } })).json()).toMatchObject({
        ok: true,
        data: { status: 'discarded', blocked: null },
      });
    } finally {
      await svc.dispatch('policy.set', { text });
    }
    // the policy no longer forbids it: offered again
    const again = (await desk(`staged/${other.id}`)).data as { blocked?: string | null };
    expect(again.blocked ?? null).toBeNull();
    expect(await (await api(other.link, { auth: { Cookie: cookie } })).json()).toMatchObject({
      ok: true,
      data: { blocked: null, blocked_reason: null },
    });
  });

  it('a browser without a session is sent to sign in and back: the next login returns to the link', async () => {
    const { link } = await stage('Sign in first');
    // the approval link's page sends the browser here: a same-origin navigation
    const ask = await fetch(`${svc.baseUrl}/console/login?next=${link}`, {
      redirect: 'manual',
      headers: { 'Sec-Fetch-Site': 'same-origin' },
    });
    expect(ask.status).toBe(401);
    expect(await ask.text()).toContain('gatehouse console-link');
    const next = /gatehouse_next=[^;]+/.exec(ask.headers.get('set-cookie')!)![0];
    const login = await fetch(svc.loginUrl(), { redirect: 'manual', headers: { Cookie: next } });
    expect(login.status).toBe(302);
    expect(login.headers.get('location')).toBe(`/console/#approve/${link}`);
    // anything but an approval link id is never remembered, so a login cannot be made to redirect elsewhere
    const evil = await fetch(`${svc.baseUrl}/console/login?next=${encodeURIComponent('//evil.example/')}`, {
      redirect: 'manual',
      headers: { 'Sec-Fetch-Site': 'same-origin' },
    });
    expect(evil.headers.get('set-cookie')).toBeNull();
    const plain = await fetch(svc.loginUrl(), {
      redirect: 'manual',
      headers: { Cookie: 'gatehouse_next=//evil.example' },
    });
    expect(plain.headers.get('location')).toBe('/console/');
  });

  it('only the console itself remembers where a login returns: another site, or no browser at all, sets nothing', async () => {
    const { link } = await stage('Cross-site');
    for (const site of ['cross-site', 'same-site', 'none', undefined]) {
      const ask = await fetch(`${svc.baseUrl}/console/login?next=${link}`, {
        redirect: 'manual',
        headers: site ? { 'Sec-Fetch-Site': site } : {},
      });
      expect(ask.status).toBe(401);
      expect(await ask.text()).toContain('gatehouse console-link');
      expect(ask.headers.get('set-cookie')).toBeNull();
    }
  });
});
