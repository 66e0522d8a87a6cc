import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../main/lib/logger.ts';
import { OAuthCoordinator } from '../../../main/plugins/upstream/oauth/coordinator.ts';
import { tokensAccount, writeItem } from '../../../main/plugins/upstream/oauth/oauth-vault.ts';
import { MemoryVault } from '../../helpers/core.ts';

/**
 * A 401 is a refusal of the token the request carried, not of whatever token
 * is held by the time it arrives. A request sent without a token while a
 * sign-in was finishing (or with a token a refresh has since replaced) comes
 * back 401 after the new token is stored; taken as a refusal of the new one,
 * it asked for a sign-in just after one succeeded (seen on a slow machine in
 * oauth-sign-in-edges.test.ts).
 */

const issuer = 'https://as.example';
const resource = 'https://rs.example/';
const unauthorized = () =>
  new Response('{}', { status: 401, headers: { 'www-authenticate': 'Bearer', 'content-type': 'application/json' } });

async function signedIn(refresh_token?: string) {
  const vault = new MemoryVault();
  const tokenRequests: string[] = [];
  await writeItem(vault, tokensAccount(issuer, resource), {
    issuer,
    resource,
    access_token: 'now-held',
    token_type: 'Bearer',
    ...(refresh_token ? { refresh_token } : {}),
    expires_at: Date.now() + 3_600_000,
  });
  const coordinator = new OAuthCoordinator({
    vault,
    log: silentLogger,
    reconnect: () => {},
    changed: () => {},
    bind: async () => {},
    // Nothing here may reach a network: a refresh (or discovery) attempt is recorded and fails.
    fetch: async (input) => {
      tokenRequests.push(String(input));
      throw new TypeError('fetch failed');
    },
  });
  await coordinator.register(
    { id: 'u', url: `${resource}mcp`, client_id: null, scopes: null, client_metadata_url: null },
    { issuer, resource },
  );
  const auth = coordinator.authFor('u');
  const answer = (bearer: string | null) =>
    auth.fetch(async () => unauthorized())(`${resource}mcp`, {
      headers: new Headers(bearer ? { authorization: `Bearer ${bearer}` } : {}),
    });
  const onUnauthorized = async (response: Response) =>
    auth.provider.onUnauthorized!({ response, serverUrl: new URL(`${resource}mcp`), fetchFn: fetch });
  return { coordinator, auth, answer, onUnauthorized, tokenRequests };
}

describe('OAuth upstreams: a 401 answers the token its request carried', () => {
  it('a 401 to a request sent with no token, arriving once signed in: no sign-in asked, the SDK sends again with the token', async () => {
    const w = await signedIn();
    try {
      await expect(w.onUnauthorized(await w.answer(null))).resolves.toBeUndefined();
      expect(w.coordinator.status('u').state).toBe('signed_in');
      expect(await w.auth.provider.token()).toBe('now-held');
    } finally {
      await w.coordinator.close();
    }
  });

  it('a 401 to a token a refresh replaced: no second refresh spent', async () => {
    const w = await signedIn('rotating');
    try {
      await expect(w.onUnauthorized(await w.answer('replaced-earlier'))).resolves.toBeUndefined();
      expect(w.tokenRequests).toEqual([]);
      expect(w.coordinator.status('u').state).toBe('signed_in');
    } finally {
      await w.coordinator.close();
    }
  });

  it('a 401 to the token held now, with no refresh token: one "sign in again"', async () => {
    const w = await signedIn();
    try {
      await expect(w.onUnauthorized(await w.answer('now-held'))).rejects.toThrow(/sign/i);
      expect(w.coordinator.status('u')).toMatchObject({
        state: 'sign_in_required',
        reason: expect.stringMatching(/refused and there is no refresh token/),
      });
    } finally {
      await w.coordinator.close();
    }
  });

  it('a 401 the coordinator never saw go out (no tagging fetch) is taken as a refusal, as before', async () => {
    const w = await signedIn();
    try {
      await expect(w.onUnauthorized(unauthorized())).rejects.toThrow(/sign/i);
      expect(w.coordinator.status('u').state).toBe('sign_in_required');
    } finally {
      await w.coordinator.close();
    }
  });
});
