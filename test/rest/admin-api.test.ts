import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, TestClock } from '../helpers/service.ts';
import { ADMIN_PREFIX } from '../../main/contract/health.ts';
import { ADMIN_AUTH_FAILURES_PER_MINUTE } from '../../main/rest/admin-guard.ts';
import { ADMIN_KEY_ACCOUNT } from '../../main/store/vault-account.ts';

let svc: Awaited<ReturnType<typeof startTestService>>;
const clock = new TestClock();
let cookie: string;

beforeAll(async () => {
  svc = await startTestService({ clock });
  const res = await fetch(svc.loginUrl(), { redirect: 'manual' });
  expect(res.status).toBe(302);
  const set = res.headers.get('set-cookie')!;
  expect(set).toMatch(/HttpOnly/);
  expect(set).toMatch(/SameSite=Strict/);
  cookie = set.split(';')[0]!;
});
afterAll(async () => svc?.cleanup());

const admin = (path: string) => `${svc.baseUrl}${ADMIN_PREFIX}/${path}`;

describe('admin API', () => {
  it('refuses requests without a session or admin credential', async () => {
    const res = await fetch(admin('settings'));
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ ok: false, code: 'unauthorized' });
  });

  it('a login link works once', async () => {
    const link = svc.loginUrl();
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(302);
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(401);
  });

  it('a session reads, and changes state only with the CSRF header from its own origin', async () => {
    const read = await fetch(admin('settings'), { headers: { Cookie: cookie } });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { ok: boolean }).ok).toBe(true);

    const patch = (headers: Record<string, string>) =>
      fetch(admin('settings'), {
        method: 'PATCH',
        headers: { Cookie: cookie, 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify({ rate_limit: 77 }),
      });
    expect((await patch({})).status).toBe(403);
    expect((await patch({ 'X-Gatehouse-CSRF': '1', Origin: 'https://evil.example' })).status).toBe(403);
    const ok = await patch({ 'X-Gatehouse-CSRF': '1', Origin: svc.baseUrl });
    expect(ok.status).toBe(200);
    expect(svc.core.settings.get().rate_limit).toBe(77);
    // a patch changes only what it names
    expect(svc.core.settings.get().enabled).toBe(true);
  });

  it('validates input against the contract with a specific message', async () => {
    const res = await fetch(admin('settings'), {
      method: 'PATCH',
      headers: { Cookie: cookie, 'X-Gatehouse-CSRF': '1', 'Content-Type': 'application/json' },
      body: JSON.stringify({ rate_limit: 'lots' }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe('invalid_value');
    expect(body.message).toContain('rate_limit');
  });

  it('creates a token (clear once), lists it without hash, revokes it', async () => {
    const h = { Cookie: cookie, 'X-Gatehouse-CSRF': '1', 'Content-Type': 'application/json' };
    const created = (await (
      await fetch(admin('tokens'), { method: 'POST', headers: h, body: JSON.stringify({ label: 'from console' }) })
    ).json()) as { ok: true; data: { token: string; record: { id: string } } };
    expect(created.data.token).toMatch(/^gth_/);
    const list = (await (await fetch(admin('tokens'), { headers: { Cookie: cookie } })).json()) as {
      data: Array<Record<string, unknown>>;
    };
    const row = list.data.find((t) => t.id === created.data.record.id)!;
    expect(row).toBeDefined();
    expect(row).not.toHaveProperty('hash');
    expect(JSON.stringify(list)).not.toContain(created.data.token);
    const del = await fetch(admin(`tokens/${created.data.record.id}`), { method: 'DELETE', headers: h });
    expect(del.status).toBe(200);
  });

  it("MCP client tokens never open the admin API, not even an administrator's; a wrong key is 401", async () => {
    const adminTok = await svc.createToken({ label: 'ops', user: 'admin' });
    const byToken = await fetch(admin('health'), { headers: { Authorization: `Bearer ${adminTok.token}` } });
    expect(byToken.status).toBe(403);
    expect(await byToken.json()).toMatchObject({
      ok: false,
      code: 'forbidden',
      message: expect.stringContaining('MCP client tokens are for the MCP endpoint only'),
    });
    await svc.dispatch('users.add', { login: 'writer', role: 'author' });
    const authorTok = await svc.createToken({ label: 'w', user: 'writer' });
    expect((await fetch(admin('health'), { headers: { Authorization: `Bearer ${authorTok.token}` } })).status).toBe(
      403,
    );
    expect((await fetch(admin('health'), { headers: { Authorization: 'Bearer gha_not-the-key' } })).status).toBe(401);
  });

  it('streams live events over SSE', async () => {
    const ctrl = new AbortController();
    const res = await fetch(admin('events'), { headers: { Cookie: cookie }, signal: ctrl.signal });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    await svc.dispatch('settings.update', { rate_limit: 99 });
    let text = '';
    while (!text.includes('"type":"settings"')) text += new TextDecoder().decode((await reader.read()).value);
    ctrl.abort();
    expect(text).toContain('"rate_limit":99');
  });

  it('serves the local REST pro/* routes with honest cloud state', async () => {
    const status = (await (
      await fetch(`${svc.baseUrl}/wp-json/gatehouse/v1/pro/cloud/status`, { headers: { Cookie: cookie } })
    ).json()) as { gateway: { connected: boolean } };
    expect(status.gateway.connected).toBe(false);
    const ent = (await (
      await fetch(`${svc.baseUrl}/wp-json/gatehouse/v1/pro/entitlements`, { headers: { Cookie: cookie } })
    ).json()) as { entitlements: Array<{ feature: string; allowed: boolean; plan: string }> };
    expect(ent.entitlements.find((e) => e.feature === 'verto.translate')).toMatchObject({
      allowed: false,
      plan: 'pro',
    });
    // the local usage sink's totals, per usage event and feature
    svc.core.usage.record({
      event: 'ai.generation.completed',
      product: 'verto',
      feature: 'verto.translate',
      model: 'm',
      tokens_input: 7,
      tokens_output: 5,
    });
    const usage = (await (
      await fetch(`${svc.baseUrl}/wp-json/gatehouse/v1/pro/usage`, { headers: { Cookie: cookie } })
    ).json()) as { usage: Record<string, Record<string, { tokens_input: number }>> };
    expect(usage.usage['ai.generation.completed']?.['verto.translate']?.tokens_input).toBe(7);
    // the local REST sits behind the same gate as the admin API: no CSRF header, no state change
    const noCsrf = await fetch(`${svc.baseUrl}/wp-json/gatehouse/v1/pro/license/activate`, {
      method: 'POST',
      headers: { Cookie: cookie },
    });
    expect(noCsrf.status).toBe(403);
    const post = (body: unknown) =>
      fetch(`${svc.baseUrl}/wp-json/gatehouse/v1/pro/license/activate`, {
        method: 'POST',
        headers: { Cookie: cookie, 'X-Gatehouse-CSRF': '1', 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    // a key not in the form is the caller's error, and the answer never repeats it
    const bad = await post({ license_key: 'not-a-key-secret-1234' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).not.toContain('not-a-key-secret-1234');
    // a well-formed key while no gateway is connected: the cloud client says how to connect, and no request goes anywhere
    const key = `ghl_${'a'.repeat(32)}`;
    const act = await post({ license_key: key });
    const body = (await act.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('invalid_site');
    expect(body.error.message).toContain('gatehouse cloud connect');
    expect(JSON.stringify(body)).not.toContain(key);
  });

  it('limits failed authentications per address (the MCP endpoint has such a limit too); a valid credential is never held back', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < ADMIN_AUTH_FAILURES_PER_MINUTE + 5; i++) {
      const res = await fetch(admin('settings'), { headers: { Authorization: `Bearer gha_guess${i}` } });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(await res.json()).toMatchObject({ ok: false, code: 'rate_limited' });
      }
    }
    // the service's clock stands still here: a burst of exactly the limit (two failures earlier in this file counted too)
    const earlier = 2;
    expect(statuses).toEqual([
      ...Array(ADMIN_AUTH_FAILURES_PER_MINUTE - earlier).fill(401),
      ...Array(5 + earlier).fill(429),
    ]);
    clock.advance(60_000);
    expect((await fetch(admin('settings'))).status).toBe(401);
    const key = (await svc.core.vault.get(ADMIN_KEY_ACCOUNT))!;
    expect((await fetch(admin('settings'), { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);
    expect((await fetch(admin('settings'), { headers: { Cookie: cookie } })).status).toBe(200);
  });

  it('serves the console with its CSP', async () => {
    const res = await fetch(`${svc.baseUrl}/console/`);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
  });
});

describe('admin API input from the query string', () => {
  it("prototype names in the query are plain unknown keys, refused by every action and never reaching an object's prototype", async () => {
    const strict = await fetch(`${admin('tokens')}?__proto__=x&constructor=y`, { headers: { Cookie: cookie } });
    expect(strict.status).toBe(400);
    expect(await strict.json()).toMatchObject({
      ok: false,
      code: 'invalid_value',
      message: expect.stringMatching(/^tokens\.list: /),
    });
    const audit = await fetch(`${admin('audit')}?__proto__=x&limit=5`, { headers: { Cookie: cookie } });
    expect(audit.status).toBe(400);
    expect(await audit.json()).toMatchObject({
      code: 'invalid_value',
      message: expect.stringMatching(/^audit\.query: /),
    });
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('an unknown field in a body is refused, not ignored (a narrowing put beside scope made a full token)', async () => {
    const res = await fetch(admin('tokens'), {
      method: 'POST',
      headers: { Cookie: cookie, 'X-Gatehouse-CSRF': '1', 'Content-Type': 'application/json' },
      body: JSON.stringify({ label: 'agent', read_only: true }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ ok: false, code: 'invalid_value' });
    const list = await fetch(admin('tokens'), { headers: { Cookie: cookie } });
    expect(((await list.json()) as { data: { label: string }[] }).data.map((t) => t.label)).not.toContain('agent');
  });
});
