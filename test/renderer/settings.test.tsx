// @vitest-environment jsdom
import { act, cleanup, screen, waitFor } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { SETTINGS_DEFAULTS, SETTINGS_HELP } from '../../main/contract/index.ts';
import { SettingsScreen } from '../../renderer/screens/settings.tsx';
import { FakeApi } from './fake-api.ts';
import { renderWith } from './render.tsx';

afterEach(cleanup);

describe('Settings', () => {
  it('shows loading, then an error with retry', async () => {
    const fake = new FakeApi().fail('settings.get', 'store_corrupt', 'settings unreadable');
    renderWith(fake, <SettingsScreen />);
    expect(screen.getByText(/Loading settings/)).toBeTruthy();
    expect((await screen.findByRole('alert')).textContent).toContain('settings unreadable');
  });

  it('explains every setting in one line, tied to its field', async () => {
    renderWith(new FakeApi(), <SettingsScreen />);
    const rate = await screen.findByLabelText('Rate limit (requests per minute)');
    expect((rate as HTMLInputElement).value).toBe('1200');
    expect(document.getElementById(rate.getAttribute('aria-describedby')!)?.textContent).toBe(SETTINGS_HELP.rate_limit);
    for (const help of Object.values(SETTINGS_HELP))
      expect(screen.getByText(help.replace(' (comma-separated)', ''))).toBeTruthy();
    expect(screen.getByRole('checkbox', { name: 'pages_update' })).toBeTruthy();
  });

  it('validates with the Settings schema before sending anything', async () => {
    const fake = new FakeApi();
    renderWith(fake, <SettingsScreen />);
    const user = userEvent.setup();
    const rate = await screen.findByLabelText('Rate limit (requests per minute)');
    await user.clear(rate);
    await user.type(rate, '-5');
    await user.type(screen.getByLabelText('Allowed browser origins'), 'https://ok.example\nftp://bad/path');
    await user.click(screen.getByRole('button', { name: 'Save settings' }));
    expect(rate.getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByText(/an origin is scheme:\/\/host/)).toBeTruthy();
    expect(screen.getByText('Some values need fixing; nothing was saved.')).toBeTruthy();
    expect(fake.callsTo('settings.update')).toEqual([]);
  });

  it('sends only what changed', async () => {
    const fake = new FakeApi();
    renderWith(fake, <SettingsScreen />);
    const user = userEvent.setup();
    const rate = await screen.findByLabelText('Rate limit (requests per minute)');
    await user.clear(rate);
    await user.type(rate, '30');
    await user.click(screen.getByLabelText(/The agent’s user may confirm/));
    await user.click(screen.getByRole('checkbox', { name: 'pages_update' }));
    await user.type(screen.getByLabelText('Allowed browser origins'), 'https://a.example, https://b.example');
    await user.click(screen.getByRole('button', { name: 'Save settings' }));
    await waitFor(() => expect(screen.getByText('Saved.')).toBeTruthy());
    expect(fake.callsTo('settings.update')).toEqual([
      {
        rate_limit: 30,
        cors: ['https://a.example', 'https://b.example'],
        disabled_tools: ['pages_update'],
        approval_mode: 'agent',
      },
    ]);
    expect(fake.state.settings.rate_limit).toBe(30);
    await user.click(screen.getByRole('button', { name: 'Save settings' }));
    expect(screen.getByText('Nothing changed.')).toBeTruthy();
    expect(fake.callsTo('settings.update')).toHaveLength(1);
  });

  it('shows a refusal from the service and keeps the edits', async () => {
    const fake = new FakeApi().fail('settings.update', 'invalid_value', 'rate_limit too high for this plan');
    renderWith(fake, <SettingsScreen />);
    const user = userEvent.setup();
    await user.click(await screen.findByLabelText('Trust proxy headers'));
    await user.click(screen.getByRole('button', { name: 'Save settings' }));
    expect((await screen.findByRole('alert')).textContent).toContain(
      'rate_limit too high for this plan (invalid_value)',
    );
    expect((screen.getByLabelText('Trust proxy headers') as HTMLInputElement).checked).toBe(true);
  });

  it('takes changes made elsewhere unless you are editing, and undoes edits', async () => {
    const fake = new FakeApi();
    renderWith(fake, <SettingsScreen />);
    const user = userEvent.setup();
    const enabled = (await screen.findByLabelText('Gateway on')) as HTMLInputElement;
    act(() => fake.emit({ type: 'settings', settings: { ...SETTINGS_DEFAULTS, enabled: true } }));
    await waitFor(() => expect(enabled.checked).toBe(true));
    const days = screen.getByLabelText('Keep audit files (days)') as HTMLInputElement;
    await user.clear(days);
    await user.type(days, '7');
    act(() => fake.emit({ type: 'settings', settings: { ...SETTINGS_DEFAULTS, enabled: false } }));
    expect(days.value).toBe('7');
    await user.click(screen.getByRole('button', { name: 'Undo changes' }));
    expect(days.value).toBe('90');
    expect(enabled.checked).toBe(false);
  });
});
