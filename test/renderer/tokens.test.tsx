// @vitest-environment jsdom
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { Tokens } from '../../renderer/screens/tokens/tokens.tsx';
import { FakeApi, makeHealth } from './fake-api.ts';
import { renderWith } from './render.tsx';

afterEach(cleanup);

const token = (i: number, label: string) => ({
  id: `tok_${i}`,
  label,
  user_id: 'u_admin',
  user_login: 'admin',
  preview: `gth_…000${i}`,
  created: new Date(Date.now() - i * 3_600_000).toISOString(),
  last_used: null,
  scope: { read_only: false },
});

describe('Tokens', () => {
  it('shows loading, then the empty list and the form', async () => {
    const fake = new FakeApi().hold('tokens.list');
    renderWith(fake, <Tokens />);
    expect(await screen.findByText(/Loading tokens/)).toBeTruthy();
    fake.release('tokens.list');
    expect(await screen.findByText(/No tokens yet/)).toBeTruthy();
    expect(screen.getByRole('form', { name: 'New token' })).toBeTruthy();
  });

  it('shows a load error with retry', async () => {
    const fake = new FakeApi().fail('tokens.list', 'internal_error', 'boom');
    renderWith(fake, <Tokens />);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Could not load tokens: boom');
  });

  it('lists tokens with label, user, preview, created and last used', async () => {
    renderWith(new FakeApi({ tokens: [token(1, 'Cursor on desk')] }), <Tokens />);
    const row = (await screen.findByText('Cursor on desk')).closest('tr')!;
    expect(row.textContent).toContain('admin');
    expect(row.textContent).toContain('gth_…0001');
    expect(row.textContent).toContain('1 h ago');
    expect(row.textContent).toContain('never');
  });

  it("shows each token's tool count and its profile", async () => {
    const bound = { ...token(2, 'Files bot'), scope: { read_only: false, profile: 'files' }, tool_count: 7 };
    renderWith(new FakeApi({ tokens: [bound, { ...token(3, 'Full'), tool_count: 31 }] }), <Tokens />);
    const row = (await screen.findByText('Files bot')).closest('tr')!;
    expect(
      within(row)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    ).toContain('7');
    expect(row.textContent).toContain('profile files');
    const full = screen.getByText('Full').closest('tr')!;
    expect(
      within(full)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    ).toContain('31');
    expect(screen.getByRole('columnheader', { name: 'Tools' })).toBeTruthy();
  });

  it('refuses an empty label before calling the service', async () => {
    const fake = new FakeApi();
    renderWith(fake, <Tokens />);
    await userEvent.click(await screen.findByRole('button', { name: 'Create token' }));
    expect(screen.getByText('a label is required')).toBeTruthy();
    expect(screen.getByLabelText('Label').getAttribute('aria-invalid')).toBe('true');
    expect(fake.callsTo('tokens.create')).toEqual([]);
  });

  it('creates a token, shows it once with copy buttons and client snippets', async () => {
    const fake = new FakeApi();
    renderWith(fake, <Tokens />);
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('Label'), 'Claude Desktop on laptop');
    await user.click(screen.getByLabelText('Read only'));
    expect((screen.getByLabelText('Acts as user') as HTMLSelectElement).selectedOptions[0]?.textContent).toMatch(
      /^AI agent .*agent, editor/,
    );
    await user.click(screen.getByRole('button', { name: 'Create token' }));
    // least privilege by default: no user named, so the service binds the token to its `agent` user, never the administrator
    expect(fake.callsTo('tokens.create')).toEqual([{ label: 'Claude Desktop on laptop', scope: { read_only: true } }]);
    const panel = await screen.findByRole('region', { name: /Token “Claude Desktop on laptop” created/ });
    const clear = within(panel).getByLabelText('The new token') as HTMLInputElement;
    expect(clear.value).toMatch(/^gth_/);
    await user.click(within(panel).getByRole('button', { name: 'Copy the token' }));
    // user-event puts a clipboard stub in place: read back what was copied
    expect(await navigator.clipboard.readText()).toBe(clear.value);
    expect(within(panel).getByText('Copied to the clipboard')).toBeTruthy();
    // Claude Desktop first: the env variable route, with the token in it
    expect(within(panel).getByText(/"GATEHOUSE_TOKEN": "gth_/)).toBeTruthy();
    await user.click(within(panel).getByRole('tab', { name: 'Claude Code' }));
    // the launch line the service reported (FakeApi's health), never a bare `gatehouse-bridge` that is not on PATH
    expect(
      within(panel).getByText(
        /^claude mcp add --scope user gatehouse -e GATEHOUSE_TOKEN=gth_\S+ -- \/usr\/bin\/node \/opt\/gatehouse\/bin\/gatehouse-bridge\.mjs --token-env GATEHOUSE_TOKEN$/,
      ),
    ).toBeTruthy();
    await user.keyboard('{ArrowLeft}');
    expect(within(panel).getByRole('tab', { name: 'VS Code' }).getAttribute('aria-selected')).toBe('true');
    expect(within(panel).getByText(/"password": true/)).toBeTruthy();
    // the new token is in the list, and Done forgets the clear token
    expect(screen.getByRole('region', { name: 'Tokens' }).textContent).toContain('Claude Desktop on laptop');
    await user.click(within(panel).getByRole('button', { name: /Done/ }));
    expect(screen.queryByLabelText('The new token')).toBeNull();
  });

  it('saves to the keychain: the snippets then carry no secret', async () => {
    const fake = new FakeApi();
    renderWith(fake, <Tokens />);
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('Label'), 'Cursor');
    await user.click(screen.getByLabelText(/Save it/));
    await user.type(screen.getByLabelText('Account name'), 'cursor-desk');
    await user.click(screen.getByRole('button', { name: 'Create token' }));
    expect(fake.callsTo('tokens.create')).toEqual([{ label: 'Cursor', keychain_account: 'cursor-desk' }]);
    const panel = await screen.findByRole('region', { name: /created/ });
    const pre = panel.querySelector('pre')!;
    expect(pre.textContent).toContain('"--token-keychain"');
    expect(pre.textContent).toContain('"cursor-desk"');
    expect(pre.textContent).not.toContain('gth_');
    expect(panel.textContent).toContain('Saved in this computer’s keychain');
  });

  it('does not claim the keychain when the service keeps secrets in the file vault', async () => {
    const fake = new FakeApi({
      health: makeHealth({ vault: { backend: 'file', label: 'file (not encrypted)' }, data_dir: '/srv/gh' }),
    });
    renderWith(fake, <Tokens />);
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('Label'), 'Cursor');
    await user.click(screen.getByLabelText(/Save it/));
    await user.click(screen.getByRole('button', { name: 'Create token' }));
    const panel = await screen.findByRole('region', { name: /created/ });
    expect(panel.textContent).not.toMatch(/keychain as/);
    expect(panel.textContent).toContain('Gatehouse’s secrets file');
    expect(panel.textContent).toContain('/srv/gh');
  });

  it('reports a failed creation without losing the form', async () => {
    const fake = new FakeApi().fail('tokens.create', 'vault_unavailable', 'the keychain is locked');
    renderWith(fake, <Tokens />);
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('Label'), 'X');
    await user.click(screen.getByRole('button', { name: 'Create token' }));
    expect((await screen.findByRole('alert')).textContent).toContain('the keychain is locked (vault_unavailable)');
    expect((screen.getByLabelText('Label') as HTMLInputElement).value).toBe('X');
  });

  it('revokes only after confirmation, and Cancel keeps the token', async () => {
    const fake = new FakeApi({ tokens: [token(1, 'Old laptop'), token(2, 'Cursor')] });
    renderWith(fake, <Tokens />);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Revoke “Old laptop”' }));
    const confirm = screen.getByRole('group', { name: /Revoke “Old laptop”\?/ });
    expect(document.activeElement).toBe(within(confirm).getByRole('button', { name: 'Cancel' }));
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('group', { name: /Revoke/ })).toBeNull();
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Revoke “Old laptop”' }));
    expect(fake.callsTo('tokens.revoke')).toEqual([]);
    await user.click(screen.getByRole('button', { name: 'Revoke “Old laptop”' }));
    await user.click(within(screen.getByRole('group', { name: /Revoke/ })).getByRole('button', { name: 'Revoke' }));
    await waitFor(() => expect(screen.queryByText('Old laptop')).toBeNull());
    expect(fake.callsTo('tokens.revoke')).toEqual([{ id: 'tok_1' }]);
    expect(screen.getByText('Cursor')).toBeTruthy();
  });
});
