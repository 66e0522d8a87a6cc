import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuthStatus } from '../../../main/contract/oauth-status.ts';
import {
  startScriptedServer,
  type ScriptedOptions,
  type ScriptedServer,
} from '../../fixtures/oauth/scripted-server.ts';
import { ManualTimers } from '../../helpers/service.ts';
import { callCatching, consentTo, freePort } from './oauth-helpers.ts';
import { startUpstreamWorld, textOf, until, type UpstreamWorld } from './upstream-world.ts';

/**
 * Where a sign-in finds its authorization server, shaped as the official
 * conformance suite's client scenarios shape it (docs/oauth.md, "The flow"):
 * the 401's `resource_metadata` and `scope` (auth/metadata-var3,
 * auth/scope-from-www-authenticate), and an authorization server on the MCP
 * server's own origin whose issuer has no trailing slash
 * (auth/2025-03-26-oauth-metadata-backcompat), next to an issuer that is
 * another one (still refused). The servers approve at once, so a sign-in is
 * one fetch of its authorization URL, which delivers the callback.
 */
describe('OAuth upstreams: discovery from the 401 and the issuer comparison', () => {
  let W: UpstreamWorld;
  const refreshTimers = new ManualTimers();
  const servers: ScriptedServer[] = [];
  beforeAll(async () => {
    W = await startUpstreamWorld({ oauth: { callbackPorts: [await freePort()], refreshTimers } });
  }, 60_000);
  afterAll(async () => {
    await W?.stop();
    for (const s of servers) await s.stop();
  });

  const serve = async (o: ScriptedOptions) => {
    const s = await startScriptedServer(o);
    servers.push(s);
    return s;
  };
  const add = (id: string, s: ScriptedServer) =>
    W.ok('POST', 'upstreams', { id, transport: { kind: 'http', url: s.url, oauth: {} } });
  const login = (id: string) => W.ok<OAuthStatus>('POST', `upstreams/${id}/login`);
  const status = (id: string, waitMs = 0) => W.ok<OAuthStatus>('POST', `upstreams/${id}/oauth`, { wait_ms: waitMs });
  /** the person's browser step, headless: the server approves and redirects to Gatehouse's callback */
  const approve = async (url: string) => (await fetch(url)).text();

  it('finds protected resource metadata that only the 401 names, signs in, calls, and refreshes there', async () => {
    const s = await serve({ prmPath: '/custom/metadata/location.json', prmInChallenge: true });
    await add('var3', s);
    const started = await login('var3');
    expect(started.state).toBe('signing_in');
    expect(await approve(started.authorization_url!)).toMatch(/Signed in/);
    expect(await status('var3', 10_000)).toMatchObject({ state: 'signed_in', issuer: s.asUrl, resource: s.url });
    // Nothing of it is at the well-known locations: the metadata came from where the 401 said.
    expect(s.paths).toContain('/custom/metadata/location.json');
    expect(new URL(started.authorization_url!).searchParams.get('resource')).toBe(s.url);
    await consentTo(W, 'var3');
    expect(textOf(await callCatching(W, 'var3__whoami'))).toMatch(/^client dcr-/);

    // Kept with the sign-in: the refresh (no 401 in hand) discovers at the same URL and reaches the token endpoint.
    const stored = JSON.parse(await readFile(join(W.w.svc.dataDir, 'upstreams.json'), 'utf8')) as {
      upstreams: Array<{ id: string; transport: { oauth?: { resource_metadata_url: string | null } } }>;
    };
    expect(stored.upstreams.find((u) => u.id === 'var3')?.transport.oauth?.resource_metadata_url).toBe(
      `${new URL(s.url).origin}/custom/metadata/location.json`,
    );
    const refreshesBefore = s.tokenRequests.filter((r) => r.form.get('grant_type') === 'refresh_token').length;
    refreshTimers.advance(3_600_000);
    await until(
      async () =>
        s.tokenRequests.filter((r) => r.form.get('grant_type') === 'refresh_token').length > refreshesBefore || null,
      10_000,
      'the refresh at the token endpoint',
    );
    expect(textOf(await callCatching(W, 'var3__whoami'))).toMatch(/^client dcr-/);
  }, 60_000);

  it('asks for the scope the 401 names, not every scope the metadata lists', async () => {
    const s = await serve({ challengeScope: 'mcp:basic', scopesSupported: ['mcp:basic', 'mcp:read', 'mcp:write'] });
    await add('scoped', s);
    const started = await login('scoped');
    expect(new URL(started.authorization_url!).searchParams.get('scope')).toBe('mcp:basic');
    expect(await approve(started.authorization_url!)).toMatch(/Signed in/);
    expect(await status('scoped', 10_000)).toMatchObject({ state: 'signed_in', scopes: 'mcp:basic' });
  }, 30_000);

  it("without a challenge scope, asks for the metadata's scopes_supported as before", async () => {
    const s = await serve({ scopesSupported: ['mcp:basic', 'mcp:read'] });
    await add('listed', s);
    const started = await login('listed');
    expect(new URL(started.authorization_url!).searchParams.get('scope')).toBe('mcp:basic mcp:read');
  }, 30_000);

  it("signs in to an authorization server on the MCP server's origin whose issuer has no trailing slash (2025-03-26)", async () => {
    const s = await serve({ sameOrigin: true });
    await add('legacy', s);
    const started = await login('legacy');
    expect(started.state).toBe('signing_in');
    expect(await approve(started.authorization_url!)).toMatch(/Signed in/);
    expect(await status('legacy', 10_000)).toMatchObject({ state: 'signed_in', issuer: new URL(s.url).origin });
    await consentTo(W, 'legacy');
    expect(textOf(await callCatching(W, 'legacy__whoami'))).toMatch(/^client dcr-/);
  }, 60_000);

  it.each([
    ['another origin', () => 'https://attacker.example.com'],
    ['a path', (u: string) => `${u}/tenant`],
    ['another port', (u: string) => u.replace(/:(\d+)$/, (_m, p: string) => `:${Number(p) + 1}`)],
    ['upper case', (u: string) => u.toUpperCase()],
  ])(
    'still refuses metadata naming another issuer (%s), asking nothing of its endpoints',
    async (_what, issuer) => {
      const s = await serve({ sameOrigin: true, issuer });
      const id = `mixup-${servers.length}`;
      await add(id, s);
      const r = await W.w.admin('POST', `upstreams/${id}/login`);
      expect(r.status).not.toBe(200);
      expect(JSON.stringify(r.body)).toMatch(/issuer/i);
      expect(s.paths.filter((p) => p === '/register' || p === '/authorize' || p === '/token')).toEqual([]);
    },
    30_000,
  );
});
