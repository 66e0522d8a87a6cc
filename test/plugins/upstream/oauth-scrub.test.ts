import { afterAll, describe, expect, it } from 'vitest';
import type { OAuthStatus } from '../../../main/contract/oauth-status.ts';
import { startResourceServer, type ResourceServer } from '../../fixtures/oauth/resource-server.ts';
import { callCatching, type OAuthWorld, useOAuthWorld } from './oauth-helpers.ts';
import { textOf, until } from './upstream-world.ts';

/**
 * An OAuth upstream that quotes the bearer token it was sent (and, through `echoAlso`, the refresh
 * token) in an error result and in a JSON-RPC error: the agent, through the real SDK client, gets the
 * text with both masked, before and after a refresh replaced them. With its access token an agent could
 * call the remote directly, with no approval and no audit.
 */
describe('OAuth upstreams: the tokens never reach the agent', () => {
  let W: OAuthWorld;
  let rs: ResourceServer | undefined;
  useOAuthWorld((w) => (W = w));
  afterAll(async () => rs?.stop());

  /** Every token the authorization server issued so far, none of which may appear in `text`. */
  const noToken = (text: string) => {
    expect(W.as.issued.length).toBeGreaterThan(0);
    for (const t of W.as.issued) {
      expect(text).not.toContain(t.access_token);
      if (t.refresh_token) expect(text).not.toContain(t.refresh_token);
    }
  };

  it('an echoed access or refresh token is masked in error results and errors, the refreshed ones too', async () => {
    rs = await startResourceServer(W.as.issuer, { echo: true });
    // short-lived, so that the coordinator refreshes it when the test moves the refresh timers on
    W.as.accessTtl = 15;
    await W.ok('POST', 'upstreams', { id: 'leaky', transport: { kind: 'http', url: rs.url('/mcp'), oauth: {} } });
    const started = await W.ok<OAuthStatus>('POST', 'upstreams/leaky/login');
    expect(await W.signInWithBrowser(started.authorization_url!)).toMatch(/Signed in/);
    expect((await W.status('leaky', 10_000)).state).toBe('signed_in');
    await W.consent('leaky');
    const first = W.as.issued.at(-1)!;
    expect(first.refresh_token).toBeTruthy();
    rs.echoAlso = first.refresh_token!;

    const failed = textOf(await callCatching(W, 'leaky__echo_error'));
    expect(failed).toContain('refused: token [redacted] also [redacted]');
    noToken(failed);
    const thrown = textOf(await callCatching(W, 'leaky__echo_throw'));
    expect(thrown).toContain('broke: token [redacted] also [redacted]');
    noToken(thrown);
    // the upstream did receive the token it echoed (the check above is not about a call that never reached it)
    expect(rs.authorizations).toContain(`Bearer ${first.access_token}`);

    // The refresh stores new tokens; the next answers quote those, masked from the moment they are stored.
    // (The refresh timers move only when the test moves them: past the refresh point of the 15 s tokens.)
    W.refreshTimers.advance(15_000);
    // (a refresh may have come before the first tokens were read: wait for tokens newer than those)
    await until(
      () =>
        W.as.tokenRequests.some((r) => r.grant_type === 'refresh_token' && r.status === 200) &&
        W.as.issued.at(-1)!.access_token !== first.access_token,
      30_000,
      'the refresh',
    );
    const renewed = W.as.issued.at(-1)!;
    expect(renewed.access_token).not.toBe(first.access_token);
    rs.echoAlso = renewed.refresh_token ?? first.refresh_token!;
    const after = (await until(
      async () => {
        const t = textOf(await callCatching(W, 'leaky__echo_error'));
        return rs!.authorizations.includes(`Bearer ${renewed.access_token}`) ? t : null;
      },
      10_000,
      'a call with the refreshed token',
    ))!;
    expect(after).toContain('refused: token [redacted] also [redacted]');
    noToken(after);
  }, 90_000);
});
