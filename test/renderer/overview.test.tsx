// @vitest-environment jsdom
import { act, cleanup, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { Overview } from '../../renderer/screens/overview.tsx';
import { FakeApi, makeHealth, makeStaged } from './fake-api.ts';
import { connectedStatus, makeOutbox, quotaAlert } from './fake-cloud.ts';
import { renderWith } from './render.tsx';

afterEach(cleanup);

describe('Overview', () => {
  it('shows loading, then an error with retry', async () => {
    const fake = new FakeApi().hold('health.get');
    renderWith(fake, <Overview />);
    expect(screen.getByRole('status').textContent).toMatch(/Loading the service status/);
    fake.fail('health.get', 'service_unavailable', 'cannot reach the service');
    fake.release('health.get');
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('cannot reach the service');
    fake.heal('health.get');
    await userEvent.click(within(alert).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('switch', { name: 'Gateway' })).toBeTruthy();
  });

  it('shows the endpoint, the empty states and an honest "not connected" cloud panel', async () => {
    renderWith(new FakeApi(), <Overview />);
    const gateway = await screen.findByRole('region', { name: 'Gateway' });
    expect(within(gateway).getByText('http://127.0.0.1:7823/wp-json/gatehouse-mcp/v1/mcp')).toBeTruthy();
    expect(within(gateway).getByRole('button', { name: 'Copy the MCP endpoint URL' })).toBeTruthy();
    expect(within(gateway).getByText(/^In the OS keychain/).textContent).toBe('In the OS keychain (Secret Service)');
    expect(screen.getByText('Nothing is waiting for you.')).toBeTruthy();
    expect(screen.getByText(/No client has connected yet/)).toBeTruthy();
    expect(screen.getByText(/None\. Everything looks fine/)).toBeTruthy();
    const cloud = screen.getByRole('region', { name: 'Cloud, license and products' });
    expect(within(cloud).getByText(/^Not connected\./)).toBeTruthy();
    // Raw values in words, the value itself kept as a detail; product codes explained.
    const license = within(cloud).getByText('License').nextElementSibling!;
    expect(license.textContent).toBe('Not connected (not_connected)');
    expect(within(cloud).getByText('Entitlements').nextElementSibling!.textContent).toBe(
      'Local policy (this computer decides) (local)',
    );
    expect(cloud.textContent).toContain('Verto: translation: Not active');
    expect(cloud.textContent).toContain('MCP gateway (this app): Active');
  });

  it('shows clients, pending approvals and warnings from the health report', async () => {
    const fake = new FakeApi({
      staged: [makeStaged(1), makeStaged(2)],
      health: makeHealth({
        vault: { backend: 'file', label: '/data/vault.json' },
        recent_clients: [
          {
            token_id: 't1',
            label: 'Cursor',
            client: 'cursor/1.2',
            last_used: new Date(Date.now() - 120_000).toISOString(),
          },
        ],
        warnings: [
          {
            code: 'vault_file',
            message: 'Secrets are kept in a plain file (vault: file (not encrypted)): no OS keychain was reachable.',
          },
        ],
      }),
    });
    renderWith(fake, <Overview />);
    expect(await screen.findByRole('link', { name: 'Review 2 staged writes' })).toBeTruthy();
    const clients = screen.getByRole('region', { name: 'Clients seen recently' });
    expect(within(clients).getByText('cursor/1.2')).toBeTruthy();
    expect(within(clients).getByText('2 min ago')).toBeTruthy();
    const warning = within(screen.getByRole('region', { name: 'Warnings' })).getByRole('listitem');
    expect(warning.textContent).toMatch(
      /^Secrets are in a plain file\. .*no OS keychain was reachable\. \(code vault_file\)$/,
    );
    expect(screen.getByText(/^In a plain file readable only by your user account/).textContent).toContain(
      '(/data/vault.json)',
    );
  });

  it('does not look fine while definitions wait for review (a client calling one gets unknown tool)', async () => {
    const message =
      '2 definitions wait for review (fs: 2 tools): offered to no client until a person approves them, a client calling one gets "unknown tool". Review in the console\'s Upstreams, or: gatehouse upstreams review fs.';
    renderWith(
      new FakeApi({ health: makeHealth({ warnings: [{ code: 'definitions_review', message }] }) }),
      <Overview />,
    );
    const card = await screen.findByRole('region', { name: 'Warnings' });
    await waitFor(() => expect(within(card).getByRole('listitem').textContent).toContain(message));
    expect(within(card).getByRole('listitem').textContent).toMatch(/^Definitions wait for review\. 2 definitions/);
    expect(within(card).queryByText(/Everything looks fine/)).toBeNull();
    expect(within(card).getByRole('link', { name: 'Review them in Upstreams' }).getAttribute('href')).toBe(
      '#upstreams',
    );
  });

  it('shows the cloud connection, plan, certificate, outbox and quota warnings from cloud.status', async () => {
    const fake = new FakeApi();
    const status = connectedStatus(Date.now(), { outbox: makeOutbox({ depth: 12 }), quota_alerts: [quotaAlert()] });
    fake.state.cloud.status = status;
    fake.state.health.cloud = status.health;
    renderWith(fake, <Overview />);
    const cloud = await screen.findByRole('region', { name: 'Cloud, license and products' });
    await waitFor(() => expect(within(cloud).getByText('Plan').nextElementSibling!.textContent).toBe('pro'));
    expect(cloud.textContent).toMatch(
      /^Cloud, license and productsConnected to http:\/\/127\.0\.0\.1:8787\/gateway\/v1, last sync .+\. Open Cloud/,
    );
    expect(within(cloud).getByRole('link', { name: 'Open Cloud' }).getAttribute('href')).toBe('#cloud');
    expect(within(cloud).getByText('Certificate').nextElementSibling!.textContent).toMatch(/^Valid until /);
    expect(within(cloud).getByText('Usage outbox').nextElementSibling!.textContent).toBe('12 events waiting');
    expect(within(cloud).getByRole('alert').textContent).toMatch(
      /^AI tokens per month \(this site\) is used up: 10,000 of 10,000\./,
    );
    expect(within(cloud).getByText('License').nextElementSibling!.textContent).toBe('Active');
  });

  it('keeps to the health report when cloud.status cannot be read', async () => {
    renderWith(new FakeApi().fail('cloud.status', 'service_unavailable', 'not wired'), <Overview />);
    const cloud = await screen.findByRole('region', { name: 'Cloud, license and products' });
    expect(within(cloud).getByText(/^Not connected\./).textContent).toContain('Connect on the Cloud screen');
    expect(within(cloud).queryByText('Usage outbox')).toBeNull();
    expect(within(cloud).queryByRole('alert')).toBeNull();
  });

  it('switches the gateway on and off through settings.update', async () => {
    const fake = new FakeApi();
    renderWith(fake, <Overview />);
    const toggle = await screen.findByRole('switch', { name: 'Gateway' });
    expect(toggle.getAttribute('aria-checked')).toBe('false');
    await userEvent.click(toggle);
    await waitFor(() =>
      expect(screen.getByRole('switch', { name: 'Gateway' }).getAttribute('aria-checked')).toBe('true'),
    );
    expect(fake.callsTo('settings.update')).toEqual([{ enabled: true }]);
    expect(screen.getByText(/On: MCP clients with a valid token can connect/)).toBeTruthy();
    await userEvent.click(screen.getByRole('switch', { name: 'Gateway' }));
    await waitFor(() =>
      expect(screen.getByRole('switch', { name: 'Gateway' }).getAttribute('aria-checked')).toBe('false'),
    );
  });

  it('reports a failed switch', async () => {
    const fake = new FakeApi().fail('settings.update', 'store_locked', 'the settings file is locked');
    renderWith(fake, <Overview />);
    await userEvent.click(await screen.findByRole('switch', { name: 'Gateway' }));
    expect((await screen.findByRole('alert')).textContent).toContain(
      'Could not switch the gateway: the settings file is locked',
    );
  });

  it('follows live changes made elsewhere', async () => {
    const fake = new FakeApi();
    renderWith(fake, <Overview />);
    await screen.findByRole('switch', { name: 'Gateway' });
    fake.state.settings.enabled = true;
    act(() => fake.emit({ type: 'settings', settings: { ...fake.state.settings } }));
    await waitFor(() =>
      expect(screen.getByRole('switch', { name: 'Gateway' }).getAttribute('aria-checked')).toBe('true'),
    );
    fake.state.staged.push(makeStaged(3));
    act(() => fake.emit({ type: 'staged', item: makeStaged(3) }));
    expect(await screen.findByRole('link', { name: 'Review 1 staged write' })).toBeTruthy();
  });
});
