import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuthStatus } from '../../../main/contract/oauth-status.ts';
import { startScriptedServer, type ScriptedServer } from '../../fixtures/oauth/scripted-server.ts';
import { callCatching, consentTo, freePort, startOAuthWorld, type OAuthWorld } from './oauth-helpers.ts';
import { textOf } from './upstream-world.ts';

/**
 * A pre-registered confidential client (docs/oauth.md, "Registration"): its
 * secret goes into the vault at `add` and from there only to the token and
 * revocation endpoints, authenticated as the authorization server's metadata
 * allows. oidc-provider judges client_secret_basic for real (it knows the
 * client, secret and method from its configuration); the scripted server
 * (shaped as the conformance suite's auth/pre-registration) one whose
 * metadata lists only client_secret_post.
 */
describe('OAuth upstreams: a pre-registered confidential client', () => {
  const CLIENT_ID = 'gatehouse-confidential';
  const SECRET = 'oidc-secret-7c41d9e2-never-shown';
  let W: OAuthWorld;
  const scripted: ScriptedServer[] = [];
  beforeAll(async () => {
    const callbackPort = await freePort();
    W = await startOAuthWorld({
      callbackPort,
      authServer: {
        clients: [
          {
            client_id: CLIENT_ID,
            client_secret: SECRET,
            application_type: 'native',
            token_endpoint_auth_method: 'client_secret_basic',
            redirect_uris: [`http://127.0.0.1:${callbackPort}/oauth/callback`],
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
          },
        ],
      },
    });
  }, 60_000);
  afterAll(async () => {
    await W?.stop();
    for (const s of scripted) await s.stop();
  });

  /** HTTP Basic client credentials (RFC 6749 section 2.3.1: each part form-encoded) */
  const credentialsOf = (header: string) =>
    header.startsWith('Basic ')
      ? Buffer.from(header.slice(6), 'base64').toString('utf8').split(':').map(decodeURIComponent)
      : [header];

  /** Everything the service wrote outside the vault, and what it answered: the secret is in none of it. */
  const neverShown = async (secret: string, answers: unknown[]) => {
    const dir = W.w.svc.dataDir;
    for (const name of await readdir(dir, { recursive: true, withFileTypes: false }))
      if (!String(name).startsWith('vault')) {
        const text = await readFile(join(dir, String(name)), 'utf8').catch(() => '');
        expect([name, text.includes(secret)]).toEqual([name, false]);
      }
    expect(JSON.stringify(answers)).not.toContain(secret);
  };

  it('signs in with client_secret_basic at oidc-provider, calls, revokes with it, and never shows it', async () => {
    const added = await W.ok('POST', 'upstreams', {
      id: 'conf',
      transport: { kind: 'http', url: W.rs.url('/mcp'), oauth: { client_id: CLIENT_ID, client_secret: SECRET } },
    });
    const started = await W.ok<OAuthStatus>('POST', 'upstreams/conf/login');
    expect(await W.signInWithBrowser(started.authorization_url!)).toMatch(/Signed in/);
    const s = await W.status('conf', 10_000);
    expect(s).toMatchObject({ state: 'signed_in', registration: 'preregistered' });
    await W.consent('conf');
    const answer = await callCatching(W, 'conf__whoami');
    expect(textOf(answer)).toContain(`client ${CLIENT_ID}`);

    // The token endpoint was asked with HTTP Basic carrying the id and secret; nothing was registered.
    const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${SECRET}`).toString('base64')}`;
    const tokenAsks = W.as.seen.filter((r) => r.path === '/token');
    expect(tokenAsks.length).toBeGreaterThan(0);
    expect(tokenAsks.every((r) => r.authorization === basic)).toBe(true);
    expect(W.as.seen.filter((r) => r.path === '/reg')).toEqual([]);

    const out = await W.ok<OAuthStatus>('POST', 'upstreams/conf/logout');
    expect(out.revocation).toEqual({ outcome: 'revoked', warning: null });
    // Both revocations (refresh, then access token) with Basic too: oauth4webapi form-encodes the id and secret first (RFC 6749 section 2.3.1).
    const revocations = W.as.seen
      .filter((r) => r.path === '/token/revocation')
      .map((r) => credentialsOf(r.authorization));
    expect(revocations).toEqual([
      [CLIENT_ID, SECRET],
      [CLIENT_ID, SECRET],
    ]);
    await neverShown(SECRET, [
      added,
      started,
      s,
      out,
      await W.ok('GET', 'upstreams/conf'),
      await W.ok('GET', 'upstreams'),
    ]);
  }, 90_000);

  it.each([
    [['client_secret_post'], 'post'],
    [['client_secret_basic', 'client_secret_post'], 'basic'],
  ] as const)(
    'a server whose metadata lists %j gets the secret by %s',
    async (methods, how) => {
      const secret = `scripted-secret-${how}-3f9a`;
      const s = await startScriptedServer({
        client: { id: 'pre-registered-client', secret },
        authMethods: [...methods],
      });
      scripted.push(s);
      const id = `pre-${how}`;
      await W.ok('POST', 'upstreams', {
        id,
        transport: { kind: 'http', url: s.url, oauth: { client_id: 'pre-registered-client', client_secret: secret } },
      });
      const started = await W.ok<OAuthStatus>('POST', `upstreams/${id}/login`);
      expect(await (await fetch(started.authorization_url!)).text()).toMatch(/Signed in/);
      expect(await W.status(id, 10_000)).toMatchObject({ state: 'signed_in' });
      // The code is exchanged once; every token request (a refresh too, should a slow machine's first connection
      // have been answered 401 in between) authenticates the same way.
      expect(s.tokenRequests.filter((r) => r.form.get('grant_type') === 'authorization_code')).toHaveLength(1);
      expect(new Set(s.tokenRequests.map((r) => r.auth))).toEqual(new Set([how]));
      expect(s.registrations).toBe(0);
      await consentTo(W, id);
      expect(textOf(await callCatching(W, `${id}__whoami`))).toContain('client pre-registered-client');
      await neverShown(secret, [started, await W.ok('GET', `upstreams/${id}`)]);
    },
    60_000,
  );

  it('refuses a client secret without a client id', async () => {
    const r = await W.w.admin('POST', 'upstreams', {
      id: 'lone',
      transport: { kind: 'http', url: W.rs.url('/mcp'), oauth: { client_secret: 'lone-secret-x' } },
    });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toMatch(/client id/);
    expect(JSON.stringify(r.body)).not.toContain('lone-secret-x');
  });
});
