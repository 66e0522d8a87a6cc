import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuthStatus } from '../../../main/contract/oauth-status.ts';
import { startAuthServer, type AuthServer } from '../../fixtures/oauth/auth-server.ts';
import { startResourceServer, type ResourceServer } from '../../fixtures/oauth/resource-server.ts';
import { startOAuthWorld, type OAuthWorld } from './oauth-helpers.ts';

/**
 * Sign-out tells the authorization server (RFC 7009) before the tokens are
 * deleted here (docs/oauth.md), against real oidc-provider servers: one
 * with revocation, one without. Whether a refresh token is dead is asked of
 * the authorization server itself, with a refresh request as any client
 * holding it could make.
 */
describe('OAuth upstreams: sign-out revokes at the authorization server', () => {
  let W: OAuthWorld;
  beforeAll(async () => {
    W = await startOAuthWorld();
  }, 60_000);
  afterAll(async () => W?.stop());

  interface Held {
    access_token: string;
    refresh_token: string;
    client_id: string;
  }
  /** What the vault holds for the sign-in of that issuer: its tokens and the client id they were issued to. */
  const held = async (issuer: string): Promise<Held | null> => {
    const vault = JSON.parse(await readFile(join(W.w.svc.dataDir, 'vault.json'), 'utf8')) as {
      secrets: Record<string, string>;
    };
    const items = Object.entries(vault.secrets)
      .filter(([k]) => k.startsWith('oauth-'))
      .map(([k, v]) => [k, JSON.parse(v) as Record<string, string>] as const);
    const tokens = items.find(([k, v]) => k.startsWith('oauth-tokens/') && v.issuer === issuer)?.[1];
    const client = items.find(([k, v]) => k.startsWith('oauth-client/') && v.issuer === issuer)?.[1];
    return tokens && client
      ? { access_token: tokens.access_token!, refresh_token: tokens.refresh_token!, client_id: client.client_id! }
      : null;
  };
  /** A refresh at the authorization server with that refresh token, as its client: the status and the OAuth error. */
  const refreshAt = async (as: AuthServer, rs: ResourceServer, h: Held) => {
    const res = await fetch(`${as.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: h.refresh_token,
        client_id: h.client_id,
        resource: `${rs.origin}/`,
      }),
    });
    return { status: res.status, error: ((await res.json()) as { error?: string }).error ?? null };
  };
  const signIn = async (id: string) => {
    const s = await W.ok<OAuthStatus>('POST', `upstreams/${id}/login`);
    expect(await W.signInWithBrowser(s.authorization_url!)).toMatch(/Signed in/);
    expect((await W.status(id, 10_000)).state).toBe('signed_in');
  };
  const revocations = (as: AuthServer) =>
    as.seen.filter((r) => r.method === 'POST' && r.path === '/token/revocation').length;
  const leaks = (answer: unknown, h: Held) =>
    [h.access_token, h.refresh_token].some((t) => JSON.stringify(answer).includes(t));

  it('revokes the refresh and access tokens, then deletes them: the authorization server refuses the refresh token afterwards', async () => {
    await W.ok('POST', 'upstreams', { id: 'remote', transport: { kind: 'http', url: W.rs.url('/mcp'), oauth: {} } });
    await signIn('remote');
    const h = (await held(W.as.issuer))!;
    expect(h.refresh_token.length).toBeGreaterThan(20);
    const before = revocations(W.as);

    const out = await W.ok<OAuthStatus>('POST', 'upstreams/remote/logout');
    expect(out.revocation).toEqual({ outcome: 'revoked', warning: null });
    expect(out.state).not.toBe('signed_in');
    expect(leaks(out, h)).toBe(false);
    // One request per token (refresh first, then access), each authenticated as the registration is: a public client naming its id.
    expect(revocations(W.as) - before).toBe(2);
    expect(await held(W.as.issuer)).toBeNull();
    expect(await refreshAt(W.as, W.rs, h)).toEqual({ status: 400, error: 'invalid_grant' });
  }, 60_000);

  it('a revocation that fails is a warning, never a failed sign-out, and names no token: the tokens are deleted here anyway', async () => {
    await signIn('remote');
    const h = (await held(W.as.issuer))!;
    W.as.failRevocation = true;
    const out = await W.ok<OAuthStatus>('POST', 'upstreams/remote/logout').finally(() => (W.as.failRevocation = false));
    expect(out.revocation?.outcome).toBe('failed');
    expect(out.revocation?.warning).toMatch(/could not be told to revoke.*deleted here anyway/);
    expect(leaks(out, h)).toBe(false);
    expect(out.state).not.toBe('signed_in');
    expect(await held(W.as.issuer)).toBeNull();
    // Not revoked there: the same refresh as above succeeds (the check above can tell the two apart).
    expect(await refreshAt(W.as, W.rs, h)).toMatchObject({ status: 200, error: null });
    // Signing in again works as before.
    await signIn('remote');
  }, 60_000);

  it('an authorization server without a revocation_endpoint: the sign-out deletes the tokens here and says it could not revoke there', async () => {
    const as2 = await startAuthServer({ revocation: false });
    const rs2 = await startResourceServer(as2.issuer);
    try {
      const meta = (await (await fetch(`${as2.issuer}/.well-known/openid-configuration`)).json()) as Record<
        string,
        unknown
      >;
      expect(meta.revocation_endpoint).toBeUndefined();
      await W.ok('POST', 'upstreams', { id: 'norevoke', transport: { kind: 'http', url: rs2.url('/mcp'), oauth: {} } });
      await signIn('norevoke');
      const h = (await held(as2.issuer))!;
      const out = await W.ok<OAuthStatus>('POST', 'upstreams/norevoke/logout');
      expect(out.revocation).toEqual({ outcome: 'not_offered', warning: null });
      expect(out.state).not.toBe('signed_in');
      expect(await held(as2.issuer)).toBeNull();
      expect(as2.seen.filter((r) => r.path.includes('revocation'))).toEqual([]);
      expect(await refreshAt(as2, rs2, h)).toMatchObject({ status: 200 });
    } finally {
      await W.ok('DELETE', 'upstreams/norevoke');
      await rs2.stop();
      await as2.stop();
    }
  }, 60_000);
});
