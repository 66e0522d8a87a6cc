// @vitest-environment jsdom
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import type { UpstreamDetail, UpstreamViewView } from '../../main/contract/upstreams.ts';
import { apiFrom } from '../../renderer/api/api-from.ts';
import { Upstreams } from '../../renderer/screens/upstreams/upstreams.tsx';
import { renderWith } from './render.tsx';

/**
 * An upstream's MCP App views on the Upstreams screen (docs/upstreams.md,
 * "MCP Apps"): each view with what it asks for and its pin state; a changed
 * one with its HTML diff and Approve bound to the hash shown; the consent
 * step lists the views with their asks and consents to exactly those.
 */
afterEach(() => {
  cleanup();
  window.location.hash = '';
});

const H = (c: string) => `sha256:${c.repeat(64)}`;
const view = (extra: Partial<UpstreamViewView>): UpstreamViewView => ({
  name: 'ui://board/board/view.html',
  view: 'ui://board/view.html',
  state: 'approved',
  hash: H('a'),
  pending: null,
  removed: false,
  title: null,
  description: null,
  size: 2048,
  asks: [],
  html_diff: null,
  ...extra,
});
const changed = view({
  state: 'quarantined',
  asks: ['connectDomains: https://evil.example', 'permissions: camera, microphone'],
  pending: {
    reason: 'changed',
    hash: H('b'),
    changes: [
      { field: 'ui', before: { prefersBorder: true }, after: { csp: { connectDomains: ['https://evil.example'] } } },
    ],
  },
  html_diff: { before: '@@ line 4 @@\n- <p>board v1</p>', after: '@@ line 4 @@\n+ <p>board v2</p>', changed_lines: 2 },
});
const detail = (views: UpstreamViewView[], awaiting = false): UpstreamDetail => ({
  id: 'board',
  kind: 'http',
  enabled: true,
  created: '2026-12-01T10:00:00.000Z',
  url: 'https://mcp.example/mcp',
  header_names: [],
  token_keychain: null,
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
  tools: { approved: awaiting ? 0 : 1, quarantined: awaiting ? 1 : 0, hidden: 0, removed: 0 },
  prompts: { approved: 0, quarantined: 0, hidden: 0, removed: 0 },
  views: { approved: 0, quarantined: 1, hidden: 0, removed: 0 },
  problems: [],
  tool_list: [
    {
      name: 'board__show-board',
      tool: 'show-board',
      class: 'read',
      state: awaiting ? 'quarantined' : 'approved',
      hash: awaiting ? null : H('c'),
      pending: awaiting ? { reason: 'new', hash: H('c'), changes: [] } : null,
      removed: false,
      title: null,
      description: 'Shows the board.',
    },
  ],
  prompt_list: [],
  view_list: views,
  stderr: [],
  recipes: [],
});

function recording(d: UpstreamDetail) {
  const calls: Array<[string, unknown]> = [];
  const api = apiFrom(
    async (action, input) => {
      calls.push([action, input]);
      if (action === 'upstreams.list') return { ok: true, data: [d] } as never;
      if (action === 'upstreams.get') return { ok: true, data: d } as never;
      if (action === 'upstreams.review') return { ok: true, data: [] } as never;
      return { ok: false, code: 'not_found', message: `unexpected ${action}` } as never;
    },
    () => () => {},
  );
  return { api, calls };
}
const reviewed = (calls: Array<[string, unknown]>) => calls.find(([a]) => a === 'upstreams.review')?.[1];

describe('views on the Upstreams screen', () => {
  it('lists each view with what it asks for; a changed one shows its HTML diff; Approve names the hash shown', async () => {
    window.location.hash = '#upstreams/board';
    const { api, calls } = recording(detail([changed]));
    renderWith({ api }, <Upstreams />);
    const table = await screen.findByRole('table', { name: 'Views' });
    expect(within(table).getByText('ui://board/board/view.html')).toBeTruthy();
    expect(
      within(table).getByText('connectDomains: https://evil.example; permissions: camera, microphone'),
    ).toBeTruthy();
    const html = within(table).getByLabelText('HTML of view ui://board/board/view.html');
    expect(html.textContent).toContain('- <p>board v1</p>');
    expect(html.textContent).toContain('+ <p>board v2</p>');
    await userEvent.click(within(table).getByRole('button', { name: 'Approve view ui://board/board/view.html' }));
    await waitFor(() => expect(reviewed(calls)).toBeDefined());
    expect(reviewed(calls)).toMatchObject({
      id: 'board',
      view_consent: [{ view: 'ui://board/view.html', hash: H('b') }],
    });
  });

  it('Hide keeps the view from clients', async () => {
    window.location.hash = '#upstreams/board';
    const { api, calls } = recording(detail([changed]));
    renderWith({ api }, <Upstreams />);
    const table = await screen.findByRole('table', { name: 'Views' });
    await userEvent.click(within(table).getByRole('button', { name: 'Hide view ui://board/board/view.html' }));
    await waitFor(() => expect(reviewed(calls)).toMatchObject({ hide_views: ['ui://board/view.html'] }));
  });
});

describe('the consent step', () => {
  it('shows each view with its asks, and Offer consents to exactly the views shown', async () => {
    window.location.hash = '#upstreams/board';
    const fresh = view({
      state: 'quarantined',
      hash: null,
      asks: ['permissions: camera'],
      pending: { reason: 'new', hash: H('d'), changes: [] },
    });
    const { api, calls } = recording(detail([fresh], true));
    renderWith({ api }, <Upstreams />);
    expect(
      await screen.findByRole('heading', { name: /Offer these 1 tools and 1 views of “board” to your clients\?/ }),
    ).toBeTruthy();
    const views = screen.getByRole('table', { name: 'Views of board' });
    expect(within(views).getByText('permissions: camera')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Offer these 1 tools and 1 views' }));
    await waitFor(() => expect(reviewed(calls)).toBeDefined());
    expect(reviewed(calls)).toMatchObject({
      consent: [{ tool: 'show-board', hash: H('c') }],
      view_consent: [{ view: 'ui://board/view.html', hash: H('d') }],
    });
  });
});
