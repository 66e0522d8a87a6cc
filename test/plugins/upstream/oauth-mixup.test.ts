import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuthStatus } from '../../../main/contract/oauth-status.ts';
import { startAuthServer, type AuthServer } from '../../fixtures/oauth/auth-server.ts';
import { callCatching, startOAuthWorld, type OAuthWorld } from './oauth-helpers.ts';
import { textOf, until } from './upstream-world.ts';

/**
 * Credentials are keyed by issuer and resource: when the resource
 * server's metadata starts naming another authorization server (B, a second
 * oidc-provider), nothing of A's (tokens, client registration) goes to B, the
 * upstream asks for a sign-in again, and the next sign-in registers afresh at B.
 */
describe('OAuth upstreams: the authorization server changes', () => {
  let W: OAuthWorld;
  let B: AuthServer;
  beforeAll(async () => {
    W = await startOAuthWorld();
    B = await startAuthServer();
  }, 60_000);
  afterAll(async () => {
    await W?.stop();
    await B?.stop();
  });

  const call = (name: string) => callCatching(W, name);
  const clientIdsAt = (as: AuthServer) =>
    as.seen.filter((r) => r.path === '/auth').map((r) => new URLSearchParams(r.query).get('client_id'));

  it('A\'s tokens and client never reach B; "sign in again"; the next sign-in registers at B and works; a callback naming A\'s issuer is refused', async () => {
    await W.ok('POST', 'upstreams', { id: 'mix', transport: { kind: 'http', url: W.rs.url('/m/mcp'), oauth: {} } });
    const first = await W.ok<OAuthStatus>('POST', 'upstreams/mix/login');
    expect(await W.signInWithBrowser(first.authorization_url!)).toMatch(/Signed in/);
    expect(await W.status('mix', 10_000)).toMatchObject({ state: 'signed_in', issuer: W.as.issuer });
    await W.consent('mix');
    expect(textOf(await call('mix__whoami'))).toMatch(/mcp:read/);
    const aClient = clientIdsAt(W.as)[0]!;
    expect(aClient).toBeTruthy();
    const aBearers = new Set(W.rs.authorizations.filter((a) => a.startsWith('Bearer ')));
    expect(aBearers.size).toBeGreaterThan(0);

    // The resource server now names B: A's token is refused there, and Gatehouse must not carry anything of A's to B.
    W.rs.authorizationServers = [B.issuer];
    const refused = await call('mix__whoami');
    expect(textOf(refused)).toMatch(/sign-in|sign in/i);
    const again = await until(
      async () => {
        const s = await W.status('mix');
        return s.state === 'sign_in_required' ? s : null;
      },
      10_000,
      'sign in again after the authorization server changed',
    );
    // Said as what happened: not "the server refused the refresh" (nothing was refused: there are simply no tokens for B).
    expect(again?.reason).toBe('its authorization server changed');
    const leaked = () => {
      expect(
        B.seen.filter((r) => r.authorization !== '' && [...aBearers].some((a) => r.authorization.includes(a.slice(7)))),
      ).toEqual([]);
      expect(B.seen.filter((r) => r.query.includes(aClient))).toEqual([]);
      expect(B.tokenClientIds.filter((c) => c === aClient)).toEqual([]);
      expect(B.tokenRequests.filter((r) => r.grant_type === 'refresh_token')).toEqual([]);
    };
    leaked();
    // Still refused, and no token of A's used silently.
    expect(textOf(await call('mix__whoami'))).toMatch(/sign-in|sign in/i);

    // A sign-in with B whose callback names A's issuer (a mix-up): refused by the RFC 9207 check.
    const mixed = await W.ok<OAuthStatus>('POST', 'upstreams/mix/login');
    expect(new URL(mixed.authorization_url!).origin).toBe(B.issuer);
    B.rewriteCallback = (u) => u.searchParams.set('iss', W.as.issuer);
    const body = await W.signInWithBrowser(mixed.authorization_url!).finally(() => (B.rewriteCallback = null));
    expect(body).toMatch(/failed/i);
    const failed = await W.status('mix');
    expect(failed.state).toBe('sign_in_required');
    expect(failed.reason).toMatch(/iss|issuer/i);

    // The real sign-in with B: a client registered at B, never A's client id.
    const tokensAtA = W.as.tokenRequests.length;
    const next = await W.ok<OAuthStatus>('POST', 'upstreams/mix/login');
    const bClient = new URL(next.authorization_url!).searchParams.get('client_id');
    expect(new URL(next.authorization_url!).origin).toBe(B.issuer);
    expect(bClient).not.toBe(aClient);
    expect(B.seen.some((r) => r.method === 'POST' && r.path === '/reg')).toBe(true);
    expect(await W.signInWithBrowser(next.authorization_url!)).toMatch(/Signed in/);
    expect(await W.status('mix', 10_000)).toMatchObject({
      state: 'signed_in',
      issuer: B.issuer,
      registration: 'dynamic',
    });
    await until(
      async () => /mcp:read/.test(textOf(await call('mix__whoami'))) || null,
      10_000,
      "calls work with B's token",
    );
    expect(textOf(await call('mix__whoami'))).toContain(`client ${bClient}`);
    leaked();
    // The recording sees client ids (so the check above can fail): B's own client is there.
    expect(B.tokenClientIds).toContain(bClient);
    expect(W.as.tokenRequests.length).toBe(tokensAtA);
  }, 90_000);
});
