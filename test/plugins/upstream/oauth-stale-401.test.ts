import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../main/lib/logger.ts';
import { clientSdk } from '../../../main/plugins/upstream/client-sdk.ts';
import { HttpUpstream } from '../../../main/plugins/upstream/http-upstream.ts';
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

const opened: OAuthCoordinator[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
});

async function signedIn(refresh_token?: string, access_token = 'now-held') {
  const vault = new MemoryVault();
  const tokenRequests: string[] = [];
  const stored = {
    issuer,
    resource,
    access_token,
    token_type: 'Bearer',
    ...(refresh_token ? { refresh_token } : {}),
    expires_at: Date.now() + 3_600_000,
  };
  await writeItem(vault, tokensAccount(issuer, resource), stored);
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
  opened.push(coordinator);
  await coordinator.register(
    { id: 'u', url: `${resource}mcp`, client_id: null, scopes: null, client_metadata_url: null },
    { issuer, resource },
  );
  const auth = coordinator.authFor('u');
  // As the SDK sends it: a Headers object, set only for a non-empty token.
  const answer = (bearer: string | null) => {
    const headers = new Headers();
    if (bearer) headers.set('authorization', `Bearer ${bearer}`);
    return auth.fetch(async () => unauthorized())(`${resource}mcp`, { headers });
  };
  const onUnauthorized = async (response: Response) =>
    auth.provider.onUnauthorized!({ response, serverUrl: new URL(`${resource}mcp`), fetchFn: fetch });
  // The coordinator reads the vault again, as it does when a sign-in stores new tokens (no public seam for it).
  const reload = async () => {
    await (coordinator as unknown as { tokens: { load(b: object, fresh: boolean): Promise<unknown> } }).tokens.load(
      { issuer, resource },
      true,
    );
  };
  return { coordinator, auth, answer, onUnauthorized, tokenRequests, vault, stored, reload };
}

describe('OAuth upstreams: a 401 answers the token its request carried', () => {
  it('a 401 to a request sent with no token, arriving once signed in: no sign-in asked, the SDK sends again with the token', async () => {
    const w = await signedIn();
    await expect(w.onUnauthorized(await w.answer(null))).resolves.toBeUndefined();
    expect(w.coordinator.status('u').state).toBe('signed_in');
    expect(await w.auth.provider.token()).toBe('now-held');
  });

  it('a 401 to a token a refresh replaced: no second refresh spent', async () => {
    const w = await signedIn('rotating');
    await expect(w.onUnauthorized(await w.answer('replaced-earlier'))).resolves.toBeUndefined();
    expect(w.tokenRequests).toEqual([]);
    expect(w.coordinator.status('u').state).toBe('signed_in');
  });

  it('a 401 to the token held now, with no refresh token: one "sign in again"', async () => {
    const w = await signedIn();
    await expect(w.onUnauthorized(await w.answer('now-held'))).rejects.toThrow(/sign/i);
    expect(w.coordinator.status('u')).toMatchObject({
      state: 'sign_in_required',
      reason: expect.stringMatching(/refused and there is no refresh token/),
    });
  });

  it.each([
    ['with spaces around it (a header trims them)', 'held '],
    ['empty (sent as no token at all)', ''],
  ])('a 401 to the token held now, %s, is still its refusal', async (_what, token) => {
    const w = await signedIn(undefined, token);
    await expect(w.onUnauthorized(await w.answer(token))).rejects.toThrow(/sign/i);
    expect(w.coordinator.status('u').state).toBe('sign_in_required');
  });

  it('a 401 the coordinator never saw go out (no tagging fetch) is taken as a refusal, as before', async () => {
    const w = await signedIn();
    await expect(w.onUnauthorized(unauthorized())).rejects.toThrow(/sign/i);
    expect(w.coordinator.status('u').state).toBe('sign_in_required');
  });
});

describe("OAuth upstreams: the transport's 401 reaches the coordinator as it was tagged", () => {
  it('through the Streamable HTTP transport: a 401 to a token replaced meanwhile is sent again once, with the new one', async () => {
    const w = await signedIn(undefined, 'first');
    const seen: string[] = [];
    let swap: (() => Promise<void>) | null = async () => {
      // The tokens change while the first request is in flight (a sign-in or a refresh finishing elsewhere).
      await writeItem(w.vault, tokensAccount(issuer, resource), { ...w.stored, access_token: 'second' });
      await w.reload();
    };
    const http = createServer((req, res) => {
      seen.push(req.headers.authorization ?? '');
      req.resume().on('end', async () => {
        const run = swap;
        swap = null;
        if (run) {
          await run();
          return void res
            .writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'application/json' })
            .end('{}');
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
      });
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    const stored = { kind: 'http' as const, url, header_names: [], token_keychain: null };
    const upstream = new HttpUpstream(
      {
        id: 'u',
        transport: stored,
        secrets: { env: [], headers: [] },
        token: null,
        era: '2025',
        auth: w.auth,
      },
      stored,
      silentLogger,
    );
    const transport = await upstream.openLive(await clientSdk());
    const answers: unknown[] = [];
    transport.onmessage = (m) => answers.push(m);
    try {
      await transport.start();
      await transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
      expect(seen).toEqual(['Bearer first', 'Bearer second']);
      expect(answers).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
      expect(w.coordinator.status('u').state).toBe('signed_in');
    } finally {
      await transport.close();
      await new Promise<void>((r) => (http.closeAllConnections(), http.close(() => r())));
    }
  });
});
