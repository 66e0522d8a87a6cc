import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OAuthStatus } from '../../../main/contract/oauth-status.ts';
import type { RuntimeInfo } from '../../../main/contract/health.ts';
import type { UpstreamDetail, UpstreamView } from '../../../main/contract/upstreams.ts';
import type { Connection } from '../../../main/cli/connect.ts';
import { httpDispatch } from '../../../main/cli/admin-client.ts';
import { login } from '../../../main/cli/oauth-commands.ts';
import { upstreams } from '../../../main/cli/upstream-commands.ts';
import { callCatching, type OAuthWorld, useOAuthWorld } from './oauth-helpers.ts';
import { textOf, until } from './upstream-world.ts';

/**
 * The first sign-in of an OAuth upstream is where its tools are first listed:
 * they get the same consent as `upstreams add` (offered to no client until the
 * person agrees), and a deliberate sign-out reads "signed out" everywhere,
 * with calls answering `sign_in_required` (docs/oauth.md).
 */
describe('OAuth upstreams: consent to the first listing, and signing out', () => {
  let W: OAuthWorld;
  useOAuthWorld((w) => (W = w));
  afterEach(() => vi.restoreAllMocks());

  /** The CLI's connection to the running service, as `gatehouse` makes it (admin key over HTTP). */
  const cli = (): Connection => {
    const http = httpDispatch({ base_url: W.w.svc.baseUrl } as RuntimeInfo, W.w.adminKey);
    return {
      mode: 'service',
      dispatch: http.dispatch,
      send: http.dispatch,
      exportAudit: async () => undefined,
      close: async () => undefined,
    };
  };
  const listed = async () => {
    const c = await W.mcp();
    try {
      return (await c.listTools()).tools.map((t) => t.name);
    } finally {
      await c.close();
    }
  };
  const signIn = async (id: string) => {
    const s = await W.ok<OAuthStatus>('POST', `upstreams/${id}/login`);
    expect(await W.signInWithBrowser(s.authorization_url!)).toMatch(/Signed in/);
    expect((await W.status(id, 10_000)).state).toBe('signed_in');
  };

  it('a sign-in from the console or the API lists the tools quarantined, offered to no client until the person consents', async () => {
    await W.ok('POST', 'upstreams', { id: 'quiet', transport: { kind: 'http', url: W.rs.url('/q/mcp'), oauth: {} } });
    await signIn('quiet');
    const d = (await until(
      async () => {
        const got = await W.ok<UpstreamDetail>('GET', 'upstreams/quiet');
        return got.tool_list.length ? got : null;
      },
      10_000,
      'the first listing',
    ))!;
    expect(d.awaiting_consent).toBe(true);
    expect(d.tool_list.map((t) => [t.tool, t.state, t.pending?.reason])).toEqual([['whoami', 'quarantined', 'new']]);
    expect(await listed()).not.toContain('quiet__whoami');
    expect(textOf(await callCatching(W, 'quiet__whoami'))).not.toMatch(/token|scopes/);

    const after = await W.consent('quiet');
    expect(after.awaiting_consent).toBeUndefined();
    expect(after.tool_list.map((t) => t.state)).toEqual(['approved']);
    expect(await listed()).toContain('quiet__whoami');
    expect(textOf(await callCatching(W, 'quiet__whoami'))).toMatch(/scopes .*mcp:read/);
  }, 60_000);

  it('`upstreams login ID` prints the tools listed at the first sign-in and pins exactly those, as `add` does', async () => {
    await W.ok('POST', 'upstreams', { id: 'shown', transport: { kind: 'http', url: W.rs.url('/s/mcp'), oauth: {} } });
    let stdout = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((t) => ((stdout += String(t)), true));
    const run = login(cli(), 'shown', { json: false, browser: false });
    const url = (await until(async () => (await W.status('shown')).authorization_url, 10_000, 'the sign-in URL'))!;
    expect(await W.signInWithBrowser(url)).toMatch(/Signed in/);
    await run;
    vi.restoreAllMocks();
    expect(stdout).toContain('Signed in shown.');
    expect(stdout).toMatch(/pinned as listed now/);
    expect(stdout).toMatch(/shown__whoami\s+read\s+approved\s+sha256:/);
    const d = await W.ok<UpstreamDetail>('GET', 'upstreams/shown');
    expect(d.awaiting_consent).toBeUndefined();
    expect(d.tool_list.map((t) => t.state)).toEqual(['approved']);
    expect(await listed()).toContain('shown__whoami');
  }, 60_000);

  it('after a sign-out: "signed out" in its health, `show` and the health report (no "down" warning); calls answer sign_in_required', async () => {
    const out = await W.ok<OAuthStatus>('POST', 'upstreams/shown/logout');
    expect(out).toMatchObject({ state: 'signed_out', reason: 'signed out' });
    const view = (await until(
      async () => {
        const v = (await W.ok<UpstreamView[]>('GET', 'upstreams')).find((u) => u.id === 'shown')!;
        return v.health.status === 'signed_out' ? v : null;
      },
      10_000,
      'signed_out health',
    ))!;
    expect(view.health.last_error).toBeNull();
    expect(view.oauth?.state).toBe('signed_out');
    const health = await W.ok<{ warnings: Array<{ code: string; message: string }> }>('GET', 'health');
    expect(health.warnings.filter((w) => /shown/.test(w.message))).toEqual([]);

    const answer = await callCatching(W, 'shown__whoami');
    expect(answer.isError).toBe(true);
    expect(JSON.stringify(answer)).toMatch(/sign_in_required/);
    expect(textOf(answer)).toMatch(/is signed out/);
    expect(textOf(answer)).not.toMatch(/upstream_unavailable/);

    // The CLI's `show` says it in words.
    let stdout = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((t) => ((stdout += String(t)), true));
    await upstreams(['show', 'shown', '--data-dir', W.w.svc.dataDir, '--vault', 'file']);
    vi.restoreAllMocks();
    expect(stdout).toMatch(/^shown {2}http {2}enabled {2}signed out/m);
    expect(stdout).toMatch(/sign-in: signed out \(issuer [^;)]+\)$/m);

    // Signing in again connects it; nothing is consented anew (the pins stand).
    await signIn('shown');
    await until(
      async () => (await W.ok<UpstreamDetail>('GET', 'upstreams/shown')).health.status === 'connected',
      10_000,
      'connected again',
    );
    expect(textOf(await callCatching(W, 'shown__whoami'))).toMatch(/mcp:read/);
  }, 60_000);
});
