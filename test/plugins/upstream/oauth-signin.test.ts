import { readdir, readFile, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { UpstreamDetail } from '../../../main/contract/upstreams.ts';
import type { OAuthStatus } from '../../../main/contract/oauth-status.ts';
import { type OAuthWorld, useOAuthWorld } from './oauth-helpers.ts';
import { startResourceServer } from '../../fixtures/oauth/resource-server.ts';
import { textOf, until } from './upstream-world.ts';

/**
 * Sign-in of a remote MCP server through the service (docs/oauth.md),
 * against a real authorization server and a real SDK MCP server that takes
 * only its tokens, the browser step done by Chromium.
 */
describe('OAuth upstreams: sign-in, refresh, sign in again, step-up, sharing', () => {
  let W: OAuthWorld;
  useOAuthWorld((w) => (W = w));

  const call = async (name: string) => {
    const c = await W.mcp();
    try {
      return await c.callTool({ name, arguments: {} });
    } finally {
      await c.close();
    }
  };

  it('signs in once with the browser: PKCE, resource, the tools pinned, calls carry the token', async () => {
    const d = await W.ok<UpstreamDetail>('POST', 'upstreams', {
      id: 'remote',
      transport: { kind: 'http', url: W.rs.url('/a/mcp'), oauth: {} },
    });
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
    expect(s).toMatchObject({
      state: 'signed_in',
      issuer: W.as.issuer,
      resource: `${W.rs.origin}/`,
      refreshable: true,
      registration: 'dynamic',
    });
    expect(s.scopes).toContain('mcp:read');
    // The first listing waits for the person's consent, as at add (oauth-consent.test.ts); given here.
    await W.consent('remote');
    expect(textOf(await call('remote__whoami'))).toMatch(/scopes .*mcp:read/);
    // The token request named the resource too.
    const tokenCalls = W.as.tokenRequests.filter((r) => r.grant_type === 'authorization_code');
    expect(tokenCalls.length).toBe(1);
    expect(tokenCalls[0]).toMatchObject({ resource: `${W.rs.origin}/`, status: 200 });
  }, 60_000);
  it('a second upstream on the same issuer and resource shares the sign-in: no second browser step', async () => {
    const authorizations = W.as.seen.filter((r) => r.path === '/auth').length;
    await W.ok('POST', 'upstreams', { id: 'second', transport: { kind: 'http', url: W.rs.url('/b/mcp'), oauth: {} } });
    await until(
      async () => (await W.ok<UpstreamDetail>('GET', 'upstreams/second')).health.status === 'connected',
      10_000,
      'second connected with the shared sign-in',
    );
    expect((await W.status('second')).state).toBe('signed_in');
    await W.consent('second');
    expect(textOf(await call('second__whoami'))).toMatch(/mcp:read/);
    expect(W.as.seen.filter((r) => r.path === '/auth').length).toBe(authorizations);
  }, 30_000);

  it('refreshes before expiry, once for both upstreams, sending the resource', async () => {
    await W.ok('POST', 'upstreams/remote/logout');
    expect((await W.status('second')).state).toBe('signed_out');
    const started = await W.ok<OAuthStatus>('POST', 'upstreams/remote/login');
    expect(await W.signInWithBrowser(started.authorization_url!)).toMatch(/Signed in/);
    const first = await W.status('remote', 10_000);
    expect(first.state).toBe('signed_in');
    const tokenPosts = () => W.as.seen.filter((r) => r.path === '/token').length;
    const before = tokenPosts();
    const refreshesBefore = W.as.tokenRequests.filter((r) => r.grant_type === 'refresh_token').length;
    // The tokens live 300 s and are refreshed 60 s before expiry: at 240 s of the refresh timers' time.
    W.refreshTimers.advance(240_000);
    await until(async () => (await W.status('remote')).expires_at !== first.expires_at, 15_000, 'a proactive refresh');
    // RFC 8707: the refresh names the same resource, and the server granted it.
    const refreshes = W.as.tokenRequests.filter((r) => r.grant_type === 'refresh_token').slice(refreshesBefore);
    expect(refreshes).toEqual([{ grant_type: 'refresh_token', resource: `${W.rs.origin}/`, status: 200 }]);
    // One refresh for the shared sign-in (not one per upstream), and both upstreams still answer.
    expect(tokenPosts() - before).toBe(1);
    expect((await W.status('second')).expires_at).toBe((await W.status('remote')).expires_at);
    expect(textOf(await call('second__whoami'))).toMatch(/mcp:read/);
  }, 60_000);

  it('a refused refresh (invalid_grant) becomes one "sign in again" item, never a loop of browser tabs', async () => {
    await W.ok('POST', 'upstreams/remote/logout');
    const started = await W.ok<OAuthStatus>('POST', 'upstreams/remote/login');
    expect(await W.signInWithBrowser(started.authorization_url!)).toMatch(/Signed in/);
    expect((await W.status('remote', 10_000)).state).toBe('signed_in');
    W.as.forget('RefreshToken');
    const authorizations = W.as.seen.filter((r) => r.path === '/auth').length;
    W.refreshTimers.advance(240_000); // the proactive refresh, 60 s before the 300 s tokens expire
    const s = await until(
      async () => {
        const st = await W.status('remote');
        return st.state === 'sign_in_required' ? st : null;
      },
      30_000,
      'sign in again',
    );
    expect(s?.reason).toMatch(/refused the refresh/);
    for (let i = 0; i < 3; i++) {
      const r = await call('remote__whoami').catch((e: Error) => ({
        isError: true,
        content: [{ type: 'text', text: e.message }],
      }));
      expect(JSON.stringify(r)).toMatch(/sign-in|sign in/i);
    }
    expect((await W.status('second')).state).toBe('sign_in_required');
    // Nothing went to the authorization endpoint by itself: a person signs in again, once.
    expect(W.as.seen.filter((r) => r.path === '/auth').length).toBe(authorizations);
    const again = await W.ok<OAuthStatus>('POST', 'upstreams/second/login');
    expect(await W.signInWithBrowser(again.authorization_url!)).toMatch(/Signed in/);
    expect((await W.status('remote', 10_000)).state).toBe('signed_in');
    await until(
      async () => !JSON.stringify(await call('remote__whoami').catch((e: Error) => e.message)).includes('sign'),
      10_000,
      'calls work again',
    );
  }, 90_000);

  it('step-up: a server asking for more scope (insufficient_scope) gets a sign-in for the union, then the call works', async () => {
    const rs2 = await startResourceServer(W.as.issuer);
    try {
      await W.ok('POST', 'upstreams', {
        id: 'narrow',
        transport: { kind: 'http', url: rs2.url('/mcp'), oauth: { scopes: 'mcp:read' } },
      });
      const s = await W.ok<OAuthStatus>('POST', 'upstreams/narrow/login');
      expect(new URL(s.authorization_url!).searchParams.get('scope')?.split(' ')).not.toContain('mcp:write');
      expect(await W.signInWithBrowser(s.authorization_url!)).toMatch(/Signed in/);
      expect((await W.status('narrow', 10_000)).scopes).not.toMatch(/mcp:write/);
      await W.consent('narrow');
      rs2.requiredScopes = ['mcp:read', 'mcp:write'];
      const refused = await call('narrow__whoami').catch((e: Error) => ({
        isError: true,
        content: [{ type: 'text', text: e.message }],
      }));
      expect(textOf(refused)).toMatch(/more permission/);
      const st = await W.status('narrow');
      expect(st.state).toBe('sign_in_required');
      const up = await W.ok<OAuthStatus>('POST', 'upstreams/narrow/login');
      expect(new URL(up.authorization_url!).searchParams.get('scope')?.split(' ')).toEqual(
        expect.arrayContaining(['mcp:read', 'mcp:write']),
      );
      expect(await W.signInWithBrowser(up.authorization_url!)).toMatch(/Signed in/);
      expect((await W.status('narrow', 10_000)).scopes).toMatch(/mcp:write/);
      await until(
        async () => /mcp:write/.test(textOf(await call('narrow__whoami').catch(() => ({ content: [] })))),
        10_000,
        'the call with the wider token',
      );
    } finally {
      await rs2.stop();
    }
  }, 60_000);

  it('a callback with a tampered state is refused and leaves the sign-in under way; a tampered iss fails it', async () => {
    await W.ok('POST', 'upstreams/remote/logout');
    const s = await W.ok<OAuthStatus>('POST', 'upstreams/remote/login');
    const redirect = new URL(new URL(s.authorization_url!).searchParams.get('redirect_uri')!);
    const forged = await fetch(`${redirect.href}?code=x&state=not-the-state&iss=${encodeURIComponent(W.as.issuer)}`);
    expect(forged.status).toBe(400);
    expect(await forged.text()).toMatch(/state does not match/);
    expect((await W.status('remote')).state).toBe('signing_in');
    // The browser's own callback with iss changed on the way (the authorization server's redirect rewritten): the SDK's RFC 9207 check refuses it.
    W.as.rewriteCallback = (u) => u.searchParams.set('iss', 'http://127.0.0.1:1/evil');
    const body = await W.signInWithBrowser(s.authorization_url!).finally(() => (W.as.rewriteCallback = null));
    expect(body).toMatch(/failed/i);
    const after = await W.status('remote');
    expect(after.state).toBe('sign_in_required');
    expect(after.reason).toMatch(/iss|issuer/i);
  }, 40_000);
  /** A server pretending to be both resource and authorization server, with the metadata a test gives it. */
  async function fakeServer(
    meta: (origin: string) => Record<string, unknown>,
  ): Promise<{ url: string; stop(): Promise<void> }> {
    const http: Server = createServer((req, res) => {
      const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
      if (req.url?.startsWith('/.well-known/oauth-protected-resource'))
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ resource: `${origin}/`, authorization_servers: [origin] }));
      if (req.url?.startsWith('/.well-known/'))
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(meta(origin)));
      res
        .writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
          'content-type': 'application/json',
        })
        .end('{}');
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
      stop: () => new Promise((r) => http.close(() => r())),
    };
  }
  const goodMeta = (origin: string) => ({
    issuer: origin,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
  });

  it.each([
    [
      'PKCE not advertised',
      (o: string) => ({ ...goodMeta(o), code_challenge_methods_supported: undefined }),
      /PKCE S256/,
    ],
    ['PKCE plain only', (o: string) => ({ ...goodMeta(o), code_challenge_methods_supported: ['plain'] }), /PKCE S256/],
    [
      'an issuer that is not the URL (mix-up)',
      (o: string) => ({ ...goodMeta(o), issuer: 'http://127.0.0.1:1' }),
      /issuer/i,
    ],
    [
      'a javascript: authorization URL',
      (o: string) => ({ ...goodMeta(o), authorization_endpoint: 'javascript:alert(1)' }),
      /refused|invalid|URL/i,
    ],
    [
      'a file: authorization URL',
      (o: string) => ({ ...goodMeta(o), authorization_endpoint: 'file:///etc/passwd' }),
      /refused|invalid|URL/i,
    ],
  ])('refuses to sign in with %s, before anything is stored', async (_name, meta, message) => {
    const fake = await fakeServer(meta);
    const id = `bad-${Math.random().toString(36).slice(2, 8)}`;
    try {
      await W.ok('POST', 'upstreams', {
        id,
        transport: { kind: 'http', url: fake.url, oauth: { client_id: 'preset' } },
      });
      const r = await W.w.admin<{ message: string }>('POST', `upstreams/${id}/login`);
      expect(r.status).not.toBe(200);
      expect(r.body.message).toMatch(message);
      expect((await W.status(id)).authorization_url).toBeNull();
    } finally {
      await W.ok('DELETE', `upstreams/${id}`);
      await fake.stop();
    }
  });

  it('a client token reaches none of the sign-in routes', async () => {
    for (const path of ['upstreams/remote/login', 'upstreams/remote/logout', 'upstreams/remote/oauth']) {
      const res = await fetch(`${W.w.svc.adminUrl}/${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${W.token}`, 'Content-Type': 'application/json' },
        body: '{}',
      });
      expect([401, 403], path).toContain(res.status);
    }
  });

  it('no access or refresh token in any file of the data dir but the vault, nor in a log, audit line or error', async () => {
    const vault = JSON.parse(await readFile(join(W.w.svc.dataDir, 'vault.json'), 'utf8')) as {
      secrets: Record<string, string>;
    };
    const secrets = Object.entries(vault.secrets)
      .filter(([k]) => k.startsWith('oauth-tokens/'))
      .flatMap(([, v]) => {
        const t = JSON.parse(v) as { access_token: string; refresh_token?: string };
        return [t.access_token, t.refresh_token].filter((x): x is string => !!x);
      });
    const seenByServer = W.rs.authorizations.filter((a) => a.startsWith('Bearer ')).map((a) => a.slice(7));
    const needles = [...new Set([...secrets, ...seenByServer])].filter((x) => x.length > 20);
    expect(needles.length).toBeGreaterThan(3);
    const files: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const name of await readdir(dir)) {
        const full = join(dir, name);
        if ((await stat(full)).isDirectory()) await walk(full);
        else if (name !== 'vault.json') files.push(full);
      }
    };
    await walk(W.w.svc.dataDir);
    expect(files.some((f) => f.endsWith('upstreams.json'))).toBe(true);
    for (const f of files) {
      const text = await readFile(f, 'latin1');
      for (const n of needles) expect(text.includes(n), `${f} holds a token`).toBe(false);
    }
    // What people see: the upstream list, the health report, the audit.
    const shown = JSON.stringify([
      await W.ok('GET', 'upstreams'),
      await W.ok('GET', 'health'),
      await W.w.admin('GET', 'audit'),
    ]);
    for (const n of needles) expect(shown.includes(n)).toBe(false);
    // Every error the sign-in gave in these tests went through the same scrubbing: a failed call's message names no token.
    const refused = await W.w.admin<{ message: string }>('POST', 'upstreams/remote/login');
    for (const n of needles) expect(JSON.stringify(refused.body).includes(n)).toBe(false);
  });
});
