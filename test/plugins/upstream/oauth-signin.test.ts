import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamDetail } from '../../../main/contract/upstreams.ts';
import type { OAuthStatus } from '../../../main/contract/oauth-status.ts';
import { startOAuthWorld, type OAuthWorld } from './oauth-helpers.ts';
import { textOf, until } from './upstream-world.ts';

/**
 * Sign-in of a remote MCP server through the service (docs/oauth.md),
 * against a real authorization server and a real SDK MCP server that takes
 * only its tokens, the browser step done by Chromium.
 */
describe('OAuth upstreams: sign-in, refresh, sign in again, step-up, sharing', () => {
  let W: OAuthWorld;
  beforeAll(async () => {
    W = await startOAuthWorld();
  }, 60_000);
  afterAll(async () => W?.stop());

  const call = async (name: string) => {
    const c = await W.mcp();
    try {
      return await c.callTool({ name, arguments: {} });
    } finally {
      await c.close();
    }
  };

  it('signs in once with the browser: PKCE, resource, the tools pinned, calls carry the token', async () => {
    const d = await W.ok<UpstreamDetail>('POST', 'upstreams', { id: 'remote', transport: { kind: 'http', url: W.rs.url('/a/mcp'), oauth: {} } });
    expect(d.oauth?.state).toMatch(/signed_out|sign_in_required/);
    const started = await W.ok<OAuthStatus>('POST', 'upstreams/remote/login');
    expect(started.state).toBe('signing_in');
    const url = new URL(started.authorization_url!);
    expect(url.origin).toBe(W.as.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('resource')).toBe(`${W.rs.origin}/`);
    expect(url.searchParams.get('state')?.length).toBeGreaterThanOrEqual(40);
    expect(url.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/oauth\/callback$/);

    expect(await W.signInWithBrowser(url.href)).toMatch(/Signed in/);
    const s = await W.status('remote', 10_000);
    expect(s).toMatchObject({ state: 'signed_in', issuer: W.as.issuer, resource: `${W.rs.origin}/`, refreshable: true, registration: 'dynamic' });
    expect(s.scopes).toContain('mcp:read');
    await until(async () => (await W.ok<UpstreamDetail>('GET', 'upstreams/remote')).tool_list.some((t) => t.state === 'approved'), 10_000, 'tools pinned after sign-in');
    expect(textOf(await call('remote__whoami'))).toMatch(/scopes .*mcp:read/);
    // The token request named the resource too.
    const tokenCalls = W.as.seen.filter((r) => r.path === '/token' && r.method === 'POST');
    expect(tokenCalls.length).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
