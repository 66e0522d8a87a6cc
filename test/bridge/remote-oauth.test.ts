import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuthStatus } from '../../main/contract/oauth-status.ts';
import { startOAuthWorld, type OAuthWorld } from '../plugins/upstream/oauth-helpers.ts';
import { textOf } from '../plugins/upstream/upstream-world.ts';
import { type BridgedClient, bridgedClient } from './helpers/bridge-client.ts';
import { ensureBundle } from './helpers/bundle.ts';

/**
 * `gatehouse-bridge --remote URL` against OAuth upstreams: two
 * upstreams of one authorization server and resource, signed in once in the
 * service (real oidc-provider, Chromium), each reached by its own real bridge
 * bundle for the real SDK client over stdio. The bridges' calls carry the
 * service's sign-in; no access token ever reaches a bridge's stdout or stderr.
 */

let W: OAuthWorld;
let account: string;
const bridges: BridgedClient[] = [];

beforeAll(async () => {
  await ensureBundle();
  W = await startOAuthWorld();
  account = `oauth-bridge-${randomUUID()}`;
  await W.w.svc.createToken({ label: 'oauth bridge', user: 'admin', keychain_account: account });
}, 180_000);
afterAll(async () => {
  for (const b of bridges) await b.close().catch(() => undefined);
  await W?.stop();
});

describe('gatehouse-bridge --remote URL with an OAuth upstream', () => {
  it("two bridges to two upstreams sharing one sign-in: calls use the service's token, no bridge ever sees it", async () => {
    await W.ok('POST', 'upstreams', { id: 'alpha', transport: { kind: 'http', url: W.rs.url('/a/mcp'), oauth: {} } });
    await W.ok('POST', 'upstreams', { id: 'beta', transport: { kind: 'http', url: W.rs.url('/b/mcp'), oauth: {} } });
    const started = await W.ok<OAuthStatus>('POST', 'upstreams/alpha/login');
    expect(await W.signInWithBrowser(started.authorization_url!)).toMatch(/Signed in/);
    for (const id of ['alpha', 'beta']) await W.consent(id);
    const authorizationsBefore = W.as.seen.filter((r) => r.path === '/auth').length;

    const seen: string[] = [];
    for (const path of ['/a/mcp', '/b/mcp']) {
      const b = await bridgedClient([
        '--data-dir',
        W.w.svc.dataDir,
        '--vault',
        'file',
        '--token-keychain',
        account,
        '--log-level',
        'debug',
        '--remote',
        W.rs.url(path),
      ]);
      bridges.push(b);
      const onmessage = b.client.transport!.onmessage!;
      b.client.transport!.onmessage = (m, extra) => (seen.push(JSON.stringify(m)), onmessage(m, extra));
      expect((await b.client.listTools()).tools.map((t) => t.name)).toContain('whoami');
      expect(textOf(await b.client.callTool({ name: 'whoami', arguments: {} }))).toMatch(/scopes .*mcp:read/);
    }
    // One sign-in served both: no second browser step, and the remote saw bearer tokens on every call.
    expect(W.as.seen.filter((r) => r.path === '/auth').length).toBe(authorizationsBefore);
    const tokens = [...new Set(W.rs.authorizations.filter((a) => a.startsWith('Bearer ')).map((a) => a.slice(7)))];
    expect(tokens.length).toBeGreaterThanOrEqual(1);
    const everything = [...bridges.map((b) => b.stderr()), ...seen].join('\n');
    expect(everything.length).toBeGreaterThan(100);
    for (const t of tokens) {
      expect(everything.includes(t)).toBe(false);
      // Nor a recognisable piece of it (the JWT's payload or signature alone).
      for (const part of t.split('.').filter((p) => p.length > 20)) expect(everything.includes(part)).toBe(false);
    }
  }, 90_000);
});
