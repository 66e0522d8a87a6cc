// @vitest-environment jsdom
import { cleanup, screen, waitFor } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import type { OAuthStatus } from '../../main/contract/oauth-status.ts';
import type { UpstreamDetail } from '../../main/contract/upstreams.ts';
import { apiFrom } from '../../renderer/api/api-from.ts';
import { Upstreams } from '../../renderer/screens/upstreams/upstreams.tsx';
import { renderWith } from './render.tsx';

/**
 * An OAuth upstream's first listing after its first sign-in, on the
 * Upstreams screen: the same consent as adding one (docs/oauth.md, "Consent
 * to its tools"); nothing is offered until the person agrees.
 */
afterEach(() => {
  cleanup();
  window.location.hash = '';
});

const HASH = `sha256:${'a'.repeat(64)}`;
const signedIn: OAuthStatus = {
  id: 'remote',
  state: 'signed_in',
  reason: null,
  issuer: 'https://as.example',
  resource: 'https://mcp.example/',
  scopes: 'mcp:read',
  expires_at: null,
  refreshable: true,
  registration: 'dynamic',
  authorization_url: null,
};
const detail = (awaiting: boolean): UpstreamDetail => ({
  id: 'remote',
  kind: 'http',
  enabled: true,
  created: '2026-12-01T10:00:00.000Z',
  url: 'https://mcp.example/mcp',
  header_names: [],
  token_keychain: null,
  oauth: signedIn,
  ...(awaiting ? { awaiting_consent: true } : {}),
  timeout_ms: 60_000,
  health: {
    status: 'connected',
    last_error: null,
    latency_ms: 5,
    restarts: 0,
    protocol: '2025-11-25',
    era: '2025',
    connected_at: null,
  },
  tools: { approved: 0, quarantined: 1, hidden: 0, removed: 0 },
  prompts: { approved: 0, quarantined: 0, hidden: 0, removed: 0 },
  problems: [],
  tool_list: [
    {
      name: 'remote__whoami',
      tool: 'whoami',
      class: 'read',
      state: 'quarantined',
      hash: null,
      pending: { reason: 'new', hash: HASH, changes: [] },
      removed: false,
      title: null,
      description: 'Says who the token belongs to.',
    },
  ],
  prompt_list: [],
  stderr: [],
  recipes: [],
});

function recording(awaiting: boolean) {
  const calls: Array<[string, unknown]> = [];
  const api = apiFrom(
    async (action, input) => {
      calls.push([action, input]);
      if (action === 'upstreams.list') return { ok: true, data: [detail(awaiting)] } as never;
      if (action === 'upstreams.get') return { ok: true, data: detail(awaiting) } as never;
      if (action === 'upstreams.review') return { ok: true, data: [] } as never;
      return { ok: false, code: 'not_found', message: `unexpected ${action}` } as never;
    },
    () => () => {},
  );
  return { api, calls };
}

describe('the first listing of an OAuth upstream', () => {
  it('is asked for like an add: the tools shown, and Offer consents to exactly the hashes shown', async () => {
    window.location.hash = '#upstreams/remote';
    const { api, calls } = recording(true);
    renderWith({ api }, <Upstreams />);
    expect(
      await screen.findByRole('heading', { name: /Offer these 1 tools of “remote” to your clients\?/ }),
    ).toBeTruthy();
    expect(screen.getAllByText('Says who the token belongs to.').length).toBeGreaterThan(0);
    await userEvent.click(screen.getByRole('button', { name: 'Offer these 1 tools' }));
    await waitFor(() => expect(calls.some(([a]) => a === 'upstreams.review')).toBe(true));
    expect(calls.find(([a]) => a === 'upstreams.review')![1]).toMatchObject({
      id: 'remote',
      consent: [{ tool: 'whoami', hash: HASH }],
    });
  });

  it('a later change waits in the tool table as usual, without the consent card', async () => {
    window.location.hash = '#upstreams/remote';
    renderWith(recording(false), <Upstreams />);
    expect(await screen.findByText('remote__whoami')).toBeTruthy();
    expect(screen.queryByRole('heading', { name: /Offer these/ })).toBeNull();
  });
});
