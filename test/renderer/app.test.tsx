// @vitest-environment jsdom
import { act, cleanup, screen, waitFor } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { render } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { App } from '../../renderer/app.tsx';
import type { ConsoleEnv } from '../../renderer/api/index.ts';
import { FakeApi, makeStaged } from './fake-api.ts';

beforeEach(() => {
  window.location.hash = '';
});
afterEach(cleanup);

const envOf = (fake: FakeApi, mode: ConsoleEnv['mode'] = 'browser'): ConsoleEnv => ({
  mode,
  api: fake.api,
  exportHref: () => null,
});

describe('App shell', () => {
  it('opens on Overview and moves between screens by the address fragment', async () => {
    render(<App env={envOf(new FakeApi())} />);
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Overview');
    expect(screen.getByRole('link', { name: 'Overview' }).getAttribute('aria-current')).toBe('page');
    await userEvent.click(screen.getByRole('link', { name: 'Tokens' }));
    await waitFor(() => expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Tokens'));
    // focus goes to the new screen's heading, for keyboard and screen-reader users
    expect(document.activeElement).toBe(screen.getByRole('heading', { level: 1 }));
    expect(document.title).toBe('Tokens · Gatehouse');
    act(() => {
      window.location.hash = '#nonsense';
      window.dispatchEvent(new HashChangeEvent('hashchange'));
    });
    await waitFor(() => expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Overview'));
  });

  it('counts pending approvals in the navigation and follows live events', async () => {
    const fake = new FakeApi({ staged: [makeStaged(1)] });
    render(<App env={envOf(fake)} />);
    const approvals = await screen.findByRole('link', { name: 'Approvals, 1 pending' });
    expect(approvals).toBeTruthy();
    fake.state.staged.push(makeStaged(2));
    act(() => fake.emit({ type: 'staged', item: makeStaged(2) }));
    expect(await screen.findByRole('link', { name: 'Approvals, 2 pending' })).toBeTruthy();
    await waitFor(() => expect(document.title).toBe('(2) Overview · Gatehouse'));
  });

  it("tells a browser without a session how to sign in, in words, instead of the API's refusal on every card", async () => {
    // The admin API's own words, written for scripts.
    const refusal =
      'log in through the console link printed by `gatehouse serve`, or send the admin key as a Bearer token';
    const fake = new FakeApi();
    for (const action of [
      'health.get',
      'settings.get',
      'tools.list',
      'stats.get',
      'staged.list',
      'cloud.status',
    ] as const)
      fake.fail(action, 'unauthorized', refusal);
    render(<App env={envOf(fake)} />);
    const banner = await screen.findByText(/not signed in to Gatehouse/);
    expect(banner.textContent).toBe(
      'This browser is not signed in to Gatehouse, or its session has ended. Open the one-time login link that gatehouse serve printed, or get a new one with gatehouse console-link.',
    );
    await waitFor(() => expect(document.body.textContent).not.toContain('Bearer'));
    expect(screen.getAllByRole('alert')).toHaveLength(1);
  });

  it('shows no sign-in banner in Electron', async () => {
    const fake = new FakeApi().fail('health.get', 'unauthorized', 'nope');
    render(<App env={envOf(fake, 'electron')} />);
    await screen.findByRole('alert');
    expect(screen.queryByText(/not signed in/)).toBeNull();
  });

  it('unsubscribes from live updates when it goes away', async () => {
    const fake = new FakeApi();
    const { unmount } = render(<App env={envOf(fake)} />);
    await screen.findByRole('switch', { name: 'Gateway' });
    expect(fake.subscribers).toBeGreaterThan(0);
    unmount();
    expect(fake.subscribers).toBe(0);
  });
});
