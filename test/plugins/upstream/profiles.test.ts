import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProfileView } from '../../../main/contract/profiles.ts';
import type { TokenView } from '../../../main/contract/tokens.ts';
import { startUpstreamWorld, TEST_UPSTREAM, type UpstreamWorld } from './upstream-world.ts';

/** Profiles: named tool sets bound to tokens, over a built-in plugin and a real stdio upstream. */
let u: UpstreamWorld;
const clients: Client[] = [];
const connect = async (token: string) => {
  const c = await u.mcp(token);
  clients.push(c);
  return c;
};
const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name).sort();
const discovered = async (c: Client, query?: string) =>
  (
    (await c.callTool({ name: 'discover_tools', arguments: { limit: 100, ...(query ? { query } : {}) } }))
      .structuredContent as { tools: Array<{ name: string }> }
  ).tools
    .map((t) => t.name)
    .sort();
const tokenFor = async (label: string, profile: string, user?: string) =>
  (await u.w.svc.createToken({ label, ...(user ? { user } : {}), scope: { profile } })).token;

beforeAll(async () => {
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', {
    id: 't',
    transport: { kind: 'stdio', command: process.execPath, args: [TEST_UPSTREAM], env: [] },
    read: ['pid', 'lookup'],
  });
  await u.ok('POST', 'profiles', { name: 'site-readers', tools: ['discover_tools', 'pages_list'] });
  await u.ok('POST', 'profiles', { name: 'upstream-t', upstreams: ['t'], tools: ['discover_tools'] });
}, 120_000);
afterAll(async () => {
  for (const c of clients) await c.close();
  await u?.stop();
});

describe('profiles', () => {
  it('two tokens with different profiles see different tools/list, and discover_tools finds only what the token may call (upstream tools included)', async () => {
    const readers = await connect(await tokenFor('readers', 'site-readers'));
    const upstream = await connect(await tokenFor('upstream', 'upstream-t'));
    expect(await names(readers)).toEqual(['discover_tools', 'pages_list']);
    const upstreamTools = await names(upstream);
    expect(upstreamTools).toEqual(expect.arrayContaining(['discover_tools', 't__append', 't__lookup', 't__pid']));
    expect(upstreamTools.filter((n) => n !== 'discover_tools').every((n) => n.startsWith('t__'))).toBe(true);

    // discover_tools covers upstream tools and checks each target's permission, not only its own
    expect(await discovered(upstream)).toEqual(upstreamTools);
    expect(await discovered(readers)).toEqual(['discover_tools', 'pages_list']);
    expect(await discovered(readers, 'pid')).toEqual([]);
    // a tool outside the profile answers like an unknown tool
    await expect(readers.callTool({ name: 't__pid', arguments: {} })).rejects.toThrow(/unknown tool/i);
    await expect(upstream.callTool({ name: 'pages_list', arguments: {} })).rejects.toThrow(/unknown tool/i);
    expect((await upstream.callTool({ name: 't__pid', arguments: {} })).isError).toBeFalsy();
  });

  it("tools/list varies by the token only: a second connection of the same token sees the same list; the Tokens list counts each token's tools", async () => {
    const token = await tokenFor('twice', 'upstream-t');
    const [a, b] = [await connect(token), await connect(token)];
    const listed = await names(a);
    expect(await names(b)).toEqual(listed);
    const rows = await u.ok<TokenView[]>('GET', 'tokens');
    expect(rows.find((t) => t.label === 'twice')).toMatchObject({
      scope: { profile: 'upstream-t' },
      tool_count: listed.length,
    });
    expect(rows.find((t) => t.label === 'readers')?.tool_count).toBe(2);
    const full = rows.find((t) => t.label === 'upstream tests')!;
    expect(full.tool_count).toBe((await names(await connect(u.token))).length);
  });

  it("never widens beyond the user: an author's token bound to the upstream profile sees no upstream tool", async () => {
    await u.w.svc.dispatch('users.add', { login: 'writer', role: 'author' });
    const author = await connect(await tokenFor('author', 'upstream-t', 'writer'));
    expect(await names(author)).toEqual(['discover_tools']);
    await expect(author.callTool({ name: 't__pid', arguments: {} })).rejects.toThrow(/unknown tool/i);
  });

  it('names are validated and bounded; unknown tools, upstreams and profiles are refused', async () => {
    for (const name of ['__proto__', 'constructor', 'a\u0007b', 'x'.repeat(5000), 'Upper', '', 'a_b']) {
      const r = await u.w.admin('POST', 'profiles', { name, tools: ['pages_list'] });
      expect(r.status, JSON.stringify(name.slice(0, 20))).toBe(400);
      expect(r.body).toMatchObject({
        ok: false,
        code: 'invalid_value',
        message: expect.stringMatching(/profile name/),
      });
      expect(JSON.stringify(r.body)).not.toContain('\u0007');
    }
    const bad = async (body: unknown) => (await u.w.admin('POST', 'profiles', body)).body;
    expect(await bad({ name: 'empty' })).toMatchObject({
      ok: false,
      code: 'invalid_value',
      message: expect.stringContaining('at least one tool'),
    });
    expect(await bad({ name: 'ghost', tools: ['no_such_tool'] })).toMatchObject({
      ok: false,
      code: 'invalid_value',
      message: expect.stringContaining("'no_such_tool'"),
    });
    expect(await bad({ name: 'ghost', upstreams: ['nope'] })).toMatchObject({ ok: false, code: 'invalid_value' });
    expect(await bad({ name: 'site-readers', tools: ['pages_list'] })).toMatchObject({ ok: false, code: 'conflict' });
    expect((await u.w.admin('GET', 'profiles/__proto__')).status).toBe(400);
    const unbound = await u.w.admin('POST', 'tokens', { label: 'ghost', scope: { profile: 'no-such' } });
    expect(unbound.body).toMatchObject({ ok: false, code: 'not_found' });
    expect((await u.ok<TokenView[]>('GET', 'tokens')).some((t) => t.label === 'ghost')).toBe(false);
  });

  it('removing a profile that tokens use is refused with the list of those tokens; once they are revoked it goes', async () => {
    await u.ok('POST', 'profiles', { name: 'short-lived', tools: ['pages_list'] });
    const created = await u.w.svc.createToken({ label: 'bound', scope: { profile: 'short-lived' } });
    const refused = await u.w.admin('DELETE', 'profiles/short-lived');
    expect(refused.body).toMatchObject({
      ok: false,
      code: 'conflict',
      message: expect.stringContaining(created.record.id),
    });
    expect((await u.ok<ProfileView>('GET', 'profiles/short-lived')).tokens).toEqual([
      { id: created.record.id, label: 'bound' },
    ]);
    await u.ok('DELETE', `tokens/${created.record.id}`);
    expect(await u.ok('DELETE', 'profiles/short-lived')).toEqual({ name: 'short-lived' });
    expect((await u.ok<ProfileView[]>('GET', 'profiles')).map((p) => p.name)).not.toContain('short-lived');
  });

  it('a client token reaches none of the profile admin routes, a profile-bound one neither', async () => {
    const bound = await tokenFor('bound-admin-try', 'upstream-t', 'admin');
    const routes: Array<[string, string, unknown?]> = [
      ['GET', 'profiles'],
      ['GET', 'profiles/upstream-t'],
      ['POST', 'profiles', { name: 'evil', upstreams: ['t'] }],
      ['DELETE', 'profiles/site-readers'],
      ['POST', 'tokens', { label: 'evil', scope: { profile: 'upstream-t' } }],
    ];
    for (const token of [u.token, bound]) {
      for (const [method, path, body] of routes) {
        const res = await fetch(`${u.w.svc.adminUrl}/${path}`, {
          method,
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        expect([401, 403], `${method} ${path}`).toContain(res.status);
      }
    }
    expect((await u.ok<ProfileView[]>('GET', 'profiles')).map((p) => p.name).sort()).toEqual([
      'site-readers',
      'upstream-t',
    ]);
    // the local REST opens read-only actions to un-narrowed administrator tokens only: a profile-bound one is narrowed
    expect((await u.w.rest('GET', 'pro/license', { token: u.token })).status).toBe(200);
    expect((await u.w.rest('GET', 'pro/license', { token: bound })).status).toBe(403);
  });
});
