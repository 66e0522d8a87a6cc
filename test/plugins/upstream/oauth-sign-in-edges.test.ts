import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { OAuthStatus } from '../../../main/contract/oauth-status.ts';
import type { UpstreamDetail } from '../../../main/contract/upstreams.ts';
import { silentLogger } from '../../../main/lib/logger.ts';
import { OAuthCoordinator } from '../../../main/plugins/upstream/oauth/coordinator.ts';
import { cloudMetadataUrl } from '../../../main/plugins/upstream/oauth/oauth-upstreams.ts';
import { MemoryVault } from '../../helpers/core.ts';
import { callCatching, freePort, type OAuthWorld, useOAuthWorld } from './oauth-helpers.ts';
import { textOf, until } from './upstream-world.ts';

/**
 * The sign-in's edges: an authorization server that never
 * issues a refresh token, a server claiming another server's resource, an
 * authorization server a client cannot register with.
 */

/** A server that answers every MCP request 401 and serves the protected resource metadata a test gives it; it records every Authorization header. */
async function claimingServer(
  prm: (origin: string) => Record<string, unknown>,
  asMeta?: (origin: string) => Record<string, unknown>,
) {
  const seen: string[] = [];
  const http: Server = createServer((req, res) => {
    const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    seen.push(req.headers.authorization ?? '');
    if (req.url?.startsWith('/.well-known/oauth-protected-resource'))
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(prm(origin)));
    if (req.url?.startsWith('/.well-known/') && asMeta)
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(asMeta(origin)));
    if (req.url?.startsWith('/.well-known/')) return void res.writeHead(404).end();
    res
      .writeHead(401, {
        'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
        'content-type': 'application/json',
      })
      .end('{}');
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url: `${origin}/mcp`,
    origin,
    seen,
    stop: () => new Promise<void>((r) => (http.closeAllConnections(), http.close(() => r()))),
  };
}

const cimdMeta = (o: string) => ({
  issuer: o,
  authorization_endpoint: `${o}/authorize`,
  token_endpoint: `${o}/token`,
  response_types_supported: ['code'],
  code_challenge_methods_supported: ['S256'],
  client_id_metadata_document_supported: true,
});
const CIMD = 'https://gateway.example/.well-known/gatehouse/oauth-client.json';

describe("OAuth upstreams: no refresh token, another server's resource, no way to register", () => {
  let W: OAuthWorld;
  useOAuthWorld((w) => (W = w));

  const call = (name: string) => callCatching(W, name);

  it('an authorization server that issues no refresh token: at expiry one "sign in again", no refresh tried, no browser', async () => {
    W.as.issueRefresh = false;
    await W.ok('POST', 'upstreams', { id: 'plain', transport: { kind: 'http', url: W.rs.url('/a/mcp'), oauth: {} } });
    const started = await W.ok<OAuthStatus>('POST', 'upstreams/plain/login');
    expect(await W.signInWithBrowser(started.authorization_url!)).toMatch(/Signed in/);
    const s = await W.status('plain', 10_000);
    expect(s).toMatchObject({ state: 'signed_in', refreshable: false });
    await W.consent('plain');
    const authorizations = W.as.seen.filter((r) => r.path === '/auth').length;
    // The 300 s token's timer falls due 60 s before its expiry, at 240 s of the refresh timers' time.
    W.refreshTimers.advance(240_000);
    const again = await until(
      async () => {
        const st = await W.status('plain');
        return st.state === 'sign_in_required' ? st : null;
      },
      30_000,
      'sign in again at expiry',
    );
    expect(again?.reason).toMatch(/no refresh token/);
    for (let i = 0; i < 3; i++) expect(textOf(await call('plain__whoami'))).toMatch(/sign-in|sign in/i);
    // Never a refresh with a token it was not given, never a browser step by itself.
    expect(W.as.tokenRequests.filter((r) => r.grant_type === 'refresh_token')).toEqual([]);
    expect(W.as.seen.filter((r) => r.path === '/auth').length).toBe(authorizations);
    expect((await W.status('plain')).state).toBe('sign_in_required');
    W.as.issueRefresh = true;
    const back = await W.ok<OAuthStatus>('POST', 'upstreams/plain/login');
    expect(await W.signInWithBrowser(back.authorization_url!)).toMatch(/Signed in/);
    expect(await W.status('plain', 10_000)).toMatchObject({ state: 'signed_in', refreshable: true });
  }, 90_000);

  it("a server whose metadata claims another server's resource never gets that server's token", async () => {
    await until(
      async () => (await W.ok<UpstreamDetail>('GET', 'upstreams/plain')).health.status === 'connected',
      10_000,
      'plain connected',
    );
    const evil = await claimingServer(() => ({ resource: `${W.rs.origin}/`, authorization_servers: [W.as.issuer] }));
    try {
      await W.ok('POST', 'upstreams', { id: 'evil', transport: { kind: 'http', url: evil.url, oauth: {} } });
      await until(() => evil.seen.length >= 4, 10_000, 'the service tried the server');
      const r = await W.w.admin<{ message: string }>('POST', 'upstreams/evil/login');
      expect(r.status).not.toBe(200);
      expect(r.body.message).toMatch(/resource/);
      // The connection tries again after the login too (backoff 50-400 ms): give it a few more tries to leak.
      const tries = evil.seen.length;
      await until(() => evil.seen.length >= tries + 2, 10_000, 'more tries');
      expect(evil.seen.filter((h) => h !== '')).toEqual([]);
      expect((await W.status('evil')).state).not.toBe('signed_in');
    } finally {
      await W.ok('DELETE', 'upstreams/evil');
      await evil.stop();
    }
  }, 40_000);

  it('a signed-in server redirecting its requests to another server: the other server never sees the token', async () => {
    expect(textOf(await call('plain__whoami'))).toMatch(/mcp:read/);
    const other = await claimingServer((o) => ({ resource: `${o}/`, authorization_servers: [W.as.issuer] }));
    const bearers = () => W.rs.authorizations.filter((a) => a.startsWith('Bearer ')).length;
    const before = bearers();
    W.rs.redirectTo = other.url;
    try {
      for (let i = 0; i < 3; i++) await call('plain__whoami');
      // The signed-in server got its token on these calls and answered with the redirect; the other got none of it.
      expect(bearers()).toBeGreaterThan(before);
      expect(other.seen.filter((h) => h !== '')).toEqual([]);
    } finally {
      W.rs.redirectTo = null;
      await other.stop();
    }
  }, 30_000);

  it('no client id, no Client ID Metadata Document support, no registration endpoint: a message naming --client-id', async () => {
    const meta = (o: string) => ({
      issuer: o,
      authorization_endpoint: `${o}/authorize`,
      token_endpoint: `${o}/token`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
    });
    const closed = await claimingServer((o) => ({ resource: `${o}/`, authorization_servers: [o] }), meta);
    try {
      await W.ok('POST', 'upstreams', { id: 'closed', transport: { kind: 'http', url: closed.url, oauth: {} } });
      const r = await W.w.admin<{ message: string }>('POST', 'upstreams/closed/login');
      expect(r.status).not.toBe(200);
      expect(r.body.message).toMatch(/--client-id/);
      expect(r.body.message).not.toMatch(/Incompatible auth server/);
    } finally {
      await W.ok('DELETE', 'upstreams/closed');
      await closed.stop();
    }
  }, 30_000);

  it('an authorization server advertising Client ID Metadata Documents: the sign-in uses the URL as client_id, no registration', async () => {
    const as = await claimingServer((o) => ({ resource: `${o}/`, authorization_servers: [o] }), cimdMeta);
    try {
      await W.ok('POST', 'upstreams', {
        id: 'cimd',
        transport: { kind: 'http', url: as.url, oauth: { client_metadata_url: CIMD } },
      });
      const s = await W.ok<OAuthStatus>('POST', 'upstreams/cimd/login');
      expect(new URL(s.authorization_url!).searchParams.get('client_id')).toBe(CIMD);
    } finally {
      await W.ok('DELETE', 'upstreams/cimd');
      await as.stop();
    }
  }, 30_000);
});

describe('the Client ID Metadata Document URL by default', () => {
  it("is the connected cloud gateway's, https only", () => {
    expect(cloudMetadataUrl('https://gw.example')).toBe('https://gw.example/.well-known/gatehouse/oauth-client.json');
    expect(cloudMetadataUrl('https://gw.example/base/')).toBe(
      'https://gw.example/base/.well-known/gatehouse/oauth-client.json',
    );
    expect(cloudMetadataUrl('http://127.0.0.1:8080')).toBeNull();
    expect(cloudMetadataUrl(null)).toBeNull();
    expect(cloudMetadataUrl('not a url')).toBeNull();
  });

  it('a sign-in of an upstream naming none uses the default the service gives at that moment', async () => {
    const as = await claimingServer((o) => ({ resource: `${o}/`, authorization_servers: [o] }), cimdMeta);
    let gateway: string | null = null;
    const coordinator = new OAuthCoordinator({
      vault: new MemoryVault(),
      log: silentLogger,
      reconnect: () => {},
      changed: () => {},
      bind: async () => {},
      callbackPorts: [await freePort()],
      defaultClientMetadataUrl: () => cloudMetadataUrl(gateway),
    });
    try {
      await coordinator.register(
        { id: 'u', url: as.url, client_id: null, scopes: null, client_metadata_url: null },
        null,
      );
      // Not connected (or over http): no document to name, and this server offers no registration either.
      await expect(coordinator.login('u')).rejects.toThrow(/--client-id/);
      gateway = 'https://gw.example';
      const s = await coordinator.login('u');
      expect(new URL(s.authorization_url!).searchParams.get('client_id')).toBe(cloudMetadataUrl(gateway));
    } finally {
      await coordinator.close();
      await as.stop();
    }
  });
});
