import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuthStatus } from '../../../main/contract/oauth-status.ts';
import { callCatching, freePort, startOAuthWorld, type OAuthWorld } from './oauth-helpers.ts';
import { textOf } from './upstream-world.ts';

/**
 * A client a person registered with the authorization server beforehand
 * (`--client-id`, docs/oauth.md "Registration"), end to end: oidc-provider
 * knows the client from its configuration, the browser step is Chromium's,
 * and Gatehouse never asks the server to register anything.
 */
describe('OAuth upstreams: a pre-registered client', () => {
  const CLIENT_ID = 'gatehouse-preset';
  let W: OAuthWorld;
  beforeAll(async () => {
    const callbackPort = await freePort();
    W = await startOAuthWorld({
      callbackPort,
      authServer: {
        clients: [
          {
            client_id: CLIENT_ID,
            application_type: 'native',
            token_endpoint_auth_method: 'none',
            redirect_uris: [`http://127.0.0.1:${callbackPort}/oauth/callback`],
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
          },
        ],
      },
    });
  }, 60_000);
  afterAll(async () => W?.stop());

  it('signs in with the browser, calls through the upstream, and never makes a registration request', async () => {
    await W.ok('POST', 'upstreams', {
      id: 'preset',
      transport: { kind: 'http', url: W.rs.url('/mcp'), oauth: { client_id: CLIENT_ID } },
    });
    const started = await W.ok<OAuthStatus>('POST', 'upstreams/preset/login');
    const url = new URL(started.authorization_url!);
    expect(url.searchParams.get('client_id')).toBe(CLIENT_ID);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(await W.signInWithBrowser(url.href)).toMatch(/Signed in/);

    const s = await W.status('preset', 10_000);
    expect(s).toMatchObject({
      state: 'signed_in',
      issuer: W.as.issuer,
      registration: 'preregistered',
      refreshable: true,
    });
    await W.consent('preset');
    const answer = await callCatching(W, 'preset__whoami');
    expect(answer.isError ?? false).toBe(false);
    expect(textOf(answer)).toMatch(/scopes .*mcp:read/);

    // The authorization server's registration endpoint (advertised: it would be used without --client-id) was never asked.
    const meta = (await (await fetch(`${W.as.issuer}/.well-known/openid-configuration`)).json()) as {
      registration_endpoint?: string;
    };
    expect(meta.registration_endpoint).toBe(`${W.as.issuer}/reg`);
    expect(W.as.seen.filter((r) => r.path === '/reg' || r.path.startsWith('/reg/'))).toEqual([]);
    // Every token request was the pre-registered client's; nothing about a registration went to the vault.
    expect(W.as.tokenClientIds.length).toBeGreaterThan(0);
    expect(new Set(W.as.tokenClientIds)).toEqual(new Set([CLIENT_ID]));
    const vault = JSON.parse(await readFile(join(W.w.svc.dataDir, 'vault.json'), 'utf8')) as {
      secrets: Record<string, string>;
    };
    expect(Object.keys(vault.secrets).filter((k) => k.startsWith('oauth-client/'))).toEqual([]);
  }, 60_000);

  it('signs out revoking with the pre-registered client', async () => {
    const out = await W.ok<OAuthStatus>('POST', 'upstreams/preset/logout');
    expect(out.revocation).toEqual({ outcome: 'revoked', warning: null });
    expect(W.as.seen.filter((r) => r.path === '/reg')).toEqual([]);
  }, 30_000);
});
