// @vitest-environment jsdom
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OAuthStatus } from '../../main/contract/oauth-status.ts';
import { apiFrom } from '../../renderer/api/api-from.ts';
import { SignIn } from '../../renderer/screens/upstreams/sign-in.tsx';
import { renderWith } from './render.tsx';

/** The sign-in panel of an OAuth upstream (renderer/screens/upstreams/sign-in.tsx): what it shows per state and what its buttons call. */
afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const AUTH_URL = 'https://as.example/authorize?client_id=c1&state=s1';
const status = (over: Partial<OAuthStatus>): OAuthStatus => ({
  id: 'remote',
  state: 'signed_out',
  reason: null,
  issuer: null,
  resource: 'https://mcp.example/mcp',
  scopes: null,
  expires_at: null,
  refreshable: false,
  registration: null,
  authorization_url: null,
  ...over,
});

/** An Api whose every call is recorded; login answers signing_in with the authorization URL, logout signed_out. */
function recording() {
  const calls: Array<[string, unknown]> = [];
  const api = apiFrom(
    async (action, input) => {
      calls.push([action, input]);
      if (action === 'upstreams.login')
        return { ok: true, data: status({ state: 'signing_in', authorization_url: AUTH_URL }) };
      if (action === 'upstreams.logout')
        return { ok: true, data: status({ state: 'signed_out', reason: 'signed out' }) };
      return { ok: false, code: 'not_found', message: `unexpected ${action}` } as never;
    },
    () => () => {},
  );
  return { api, calls };
}

const panel = () => screen.getByRole('region', { name: 'Sign-in of remote' });
const button = (name: string) => within(panel()).getByRole('button', { name });

describe('the sign-in panel', () => {
  it("shows a signed-in upstream's state, scopes, expiry and issuer; Sign out calls upstreams.logout", async () => {
    const { api, calls } = recording();
    const onChanged = vi.fn();
    const expires = '2026-12-01T10:00:00.000Z';
    renderWith(
      { api },
      <SignIn
        id="remote"
        status={status({
          state: 'signed_in',
          issuer: 'https://as.example',
          scopes: 'mcp:read mcp:write',
          expires_at: expires,
          refreshable: true,
        })}
        onChanged={onChanged}
      />,
    );
    const text = panel().textContent!;
    expect(text).toContain('Signed in');
    expect(text).toContain('mcp:read mcp:write');
    expect(text).toContain(new Date(expires).toLocaleString());
    expect(text).toContain('(renewed by itself)');
    expect(within(panel()).getByText('https://as.example').tagName).toBe('CODE');
    expect(button('Sign in again')).toBeTruthy();
    expect(button('Sign out').hasAttribute('disabled')).toBe(false);
    // No confirmation step: one click signs out.
    await userEvent.click(button('Sign out'));
    await waitFor(() => expect(onChanged).toHaveBeenCalledTimes(1));
    expect(calls).toEqual([['upstreams.logout', { id: 'remote' }]]);
  });

  it('after a person signed out it says "Signed out", and offers Sign in', () => {
    const { api } = recording();
    renderWith(
      { api },
      <SignIn id="remote" status={status({ state: 'signed_out', reason: 'signed out' })} onChanged={vi.fn()} />,
    );
    const sign = within(panel()).getByText('Sign-in').nextElementSibling!;
    expect(sign.textContent).toBe('Signed out');
    expect(button('Sign in')).toBeTruthy();
    expect(button('Sign out').hasAttribute('disabled')).toBe(true);
  });

  it('Sign in calls upstreams.login and opens the authorization URL it answers in a new tab', async () => {
    const { api, calls } = recording();
    const open = vi.spyOn(window, 'open').mockImplementation(() => null);
    const onChanged = vi.fn();
    renderWith({ api }, <SignIn id="remote" status={status({ state: 'signed_out' })} onChanged={onChanged} />);
    expect(panel().textContent).toContain('Not signed in');
    expect(panel().textContent).not.toContain('Authorization server');
    expect(button('Sign out').hasAttribute('disabled')).toBe(true);
    await userEvent.click(button('Sign in'));
    await waitFor(() => expect(onChanged).toHaveBeenCalledTimes(1));
    expect(calls).toEqual([['upstreams.login', { id: 'remote' }]]);
    expect(open).toHaveBeenCalledWith(AUTH_URL, '_blank', 'noopener,noreferrer');
  });

  it('while signing in shows the authorization URL as a link (http(s) only); sign_in_required says why and offers Sign in', async () => {
    const { api } = recording();
    renderWith(
      { api },
      <SignIn id="remote" status={status({ state: 'signing_in', authorization_url: AUTH_URL })} onChanged={() => {}} />,
    );
    expect(panel().textContent).toContain('Waiting for the browser');
    const link = within(panel()).getByRole('link', { name: 'open the sign-in page' });
    expect(link.getAttribute('href')).toBe(AUTH_URL);
    expect(link.getAttribute('rel')).toBe('noopener noreferrer');
    expect(button('Sign in')).toBeTruthy();
    expect(button('Sign out').hasAttribute('disabled')).toBe(false);

    cleanup();
    renderWith(
      { api },
      <SignIn
        id="remote"
        status={status({ state: 'signing_in', authorization_url: 'javascript:alert(1)' })}
        onChanged={() => {}}
      />,
    );
    expect(within(panel()).queryByRole('link')).toBeNull();

    cleanup();
    renderWith(
      { api },
      <SignIn
        id="remote"
        status={status({
          state: 'sign_in_required',
          reason: 'the authorization server changed',
          issuer: 'https://as-b.example',
        })}
        onChanged={() => {}}
      />,
    );
    expect(panel().textContent).toContain('Sign in again (the authorization server changed)');
    expect(button('Sign in')).toBeTruthy();
    expect(within(panel()).queryByRole('button', { name: 'Sign in again' })).toBeNull();
    expect(button('Sign out').hasAttribute('disabled')).toBe(false);
  });

  it('a refused login is shown in words and nothing is opened', async () => {
    const open = vi.spyOn(window, 'open').mockImplementation(() => null);
    const onChanged = vi.fn();
    const api = apiFrom(
      async () =>
        ({ ok: false, code: 'upstream_unreachable', message: 'the authorization server did not answer' }) as never,
      () => () => {},
    );
    renderWith({ api }, <SignIn id="remote" status={status({})} onChanged={onChanged} />);
    await userEvent.click(button('Sign in'));
    expect(await within(panel()).findByText(/the authorization server did not answer/)).toBeTruthy();
    expect(open).not.toHaveBeenCalled();
    expect(onChanged).not.toHaveBeenCalled();
  });

  it('a sign-out whose revocation failed says so as a warning, and is still a sign-out', async () => {
    const warning =
      'the authorization server could not be told to revoke the tokens (503); they are deleted here anyway and stay valid there until they expire';
    const api = apiFrom(
      async () => ({
        ok: true,
        data: status({ state: 'signed_out', reason: 'signed out', revocation: { outcome: 'failed', warning } }),
      }),
      () => () => {},
    );
    const onChanged = vi.fn();
    renderWith(
      { api },
      <SignIn
        id="remote"
        status={status({ state: 'signed_in', issuer: 'https://as.example' })}
        onChanged={onChanged}
      />,
    );
    expect(within(panel()).queryByRole('status')).toBeNull();
    await userEvent.click(button('Sign out'));
    await waitFor(() => expect(onChanged).toHaveBeenCalledTimes(1));
    expect(within(panel()).getByRole('status').textContent).toBe(`Signed out, but ${warning}`);
    expect(within(panel()).queryByRole('alert')).toBeNull();
  });
});
