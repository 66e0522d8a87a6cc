import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { OAUTH_CALLBACK_PATH } from '../../../main/contract/oauth.ts';
import { startCallbackServer } from '../../../main/plugins/upstream/oauth/callback-server.ts';
import { scrubOAuth } from '../../../main/plugins/upstream/oauth/oauth-errors.ts';
import { checkAuthorizationUrl, openerFor, openInBrowser } from '../../../main/plugins/upstream/oauth/open-url.ts';
import { sameIssuer } from '../../../main/plugins/upstream/oauth/vault-provider.ts';

describe('OAuth pieces', () => {
  it.each([
    'javascript:alert(1)',
    'file:///etc/passwd',
    'data:text/html,x',
    'vbscript:x',
    'ms-settings:',
    'https://user:pw@as.example/auth',
    'https://as.example/a b',
    'https://as.example/\nx',
    'long',
    'not a url',
  ])('refuses the authorization URL %j', async (given) => {
    const url = given === 'long' ? `https://as.example/${'a'.repeat(9000)}` : given;
    expect(() => checkAuthorizationUrl(url)).toThrow(/refused/);
    await expect(openInBrowser(url, 'linux')).rejects.toThrow(/refused/);
  });

  it('opens http(s) URLs as one argument of the platform opener, never a shell line', () => {
    const url = 'https://as.example/authorize?a=1&b=$(touch%20/tmp/x);rm';
    expect(checkAuthorizationUrl(url).protocol).toBe('https:');
    expect(openerFor('linux', url)).toEqual({ command: 'xdg-open', args: [url] });
    expect(openerFor('darwin', url)).toEqual({ command: 'open', args: [url] });
    expect(openerFor('win32', url)).toEqual({ command: 'rundll32', args: ['url.dll,FileProtocolHandler', url] });
  });

  it('takes an issuer as the URL it was fetched for, an origin with or without its root slash, nothing else', () => {
    expect(sameIssuer('http://localhost:4030', 'http://localhost:4030/')).toBe(true);
    expect(sameIssuer('http://localhost:4030/', 'http://localhost:4030')).toBe(true);
    expect(sameIssuer('https://as.example/tenant1', 'https://as.example/tenant1')).toBe(true);
    for (const [published, fetchedFor] of [
      ['https://as.example/tenant1', 'https://as.example/tenant1/'],
      ['https://as.example/tenant1/', 'https://as.example/tenant1'],
      ['https://as.example/oauth', 'https://as.example/'],
      ['HTTPS://AS.EXAMPLE', 'https://as.example/'],
      ['https://as.example:443', 'https://as.example/'],
      ['https://as.example:8443', 'https://as.example/'],
      ['https://attacker.example', 'https://as.example/'],
      ['http://as.example', 'https://as.example/'],
      ['https://as.example/?x', 'https://as.example/'],
      ['not a url', 'not a url/'],
    ])
      expect([published, fetchedFor, sameIssuer(published!, fetchedFor!)]).toEqual([published, fetchedFor, false]);
  });

  it('scrubs JWTs, codes and tokens from messages a server echoes', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlc2lnbmF0dXJl';
    const text = scrubOAuth(new Error(`bad ${jwt} code=abc123def refresh_token=r-123456 Bearer opaque-token-value`));
    expect(text).not.toMatch(/eyJhbGci|abc123def|r-123456|opaque-token-value/);
  });

  it('the callback server binds 127.0.0.1 on the first free port of its set, answers only its path', async () => {
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const taken = (busy.address() as { port: number }).port;
    const seen: string[] = [];
    const cb = await startCallbackServer(
      async (p) => (seen.push(p.get('state') ?? ''), { status: 200, message: '<b>ok</b>' }),
      [taken, 0],
    );
    try {
      expect(cb.port).not.toBe(taken);
      expect(cb.redirectUris[0]).toBe(`http://127.0.0.1:${taken}${OAUTH_CALLBACK_PATH}`);
      expect((await fetch(`http://127.0.0.1:${cb.port}/other`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${cb.port}${OAUTH_CALLBACK_PATH}`, { method: 'POST' })).status).toBe(404);
      const r = await fetch(`${cb.redirectUri}?state=s1&code=c`);
      expect(await r.text()).toContain('&#60;b&#62;ok');
      // Never kept alive: the server closes after a sign-in, and a pooled connection would fail the next one's redirect.
      expect(r.headers.get('connection')).toBe('close');
      expect(seen).toEqual(['s1']);
    } finally {
      await cb.close();
      busy.close();
    }
  });
});
