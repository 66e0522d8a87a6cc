// @vitest-environment jsdom
import { act, cleanup, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { Cloud } from '../../renderer/screens/cloud/cloud.tsx';
import { FakeApi } from './fake-api.ts';
import { FINGERPRINT, GOOD_LICENSE, connectedStatus, makeOutbox, makeUpdates, quotaAlert } from './fake-cloud.ts';
import { renderWith } from './render.tsx';

afterEach(cleanup);

const connect = async (fake: FakeApi, url = 'http://127.0.0.1:8787') => {
  renderWith(fake, <Cloud />);
  await userEvent.type(await screen.findByLabelText('Gateway address'), url);
  await userEvent.click(screen.getByRole('button', { name: 'Connect' }));
  return screen.findByRole('region', { name: 'Connection' });
};

describe('Cloud screen', () => {
  it('shows loading, then an error with retry', async () => {
    const fake = new FakeApi()
      .hold('cloud.status')
      .fail('cloud.status', 'service_unavailable', 'the service is not answering');
    renderWith(fake, <Cloud />);
    expect(screen.getByRole('status').textContent).toMatch(/Loading the cloud connection/);
    fake.release('cloud.status');
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('the service is not answering');
    fake.heal('cloud.status');
    await userEvent.click(within(alert).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('form', { name: 'Connect to a cloud gateway' })).toBeTruthy();
  });

  it('checks the form before asking, then connects and shows the fingerprint to compare', async () => {
    const fake = new FakeApi();
    renderWith(fake, <Cloud />);
    await userEvent.click(await screen.findByRole('button', { name: 'Connect' }));
    expect(screen.getByLabelText('Gateway address').getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByText('required')).toBeTruthy();
    expect(fake.callsTo('cloud.connect')).toEqual([]);

    await userEvent.type(screen.getByLabelText('Gateway address'), 'http://127.0.0.1:8787');
    await userEvent.selectOptions(screen.getByLabelText('Environment'), 'staging');
    await userEvent.click(screen.getByRole('button', { name: 'Connect' }));
    const conn = await screen.findByRole('region', { name: 'Connection' });
    expect(fake.callsTo('cloud.connect')).toEqual([{ url: 'http://127.0.0.1:8787', environment: 'staging' }]);
    expect(conn.textContent).toContain('Connected to http://127.0.0.1:8787 (staging)');
    expect(conn.textContent).toMatch(/fetched from the gateway and pinned\. Compare its fingerprint/);
    expect(within(conn).getAllByText(FINGERPRINT)).toHaveLength(2);
    expect(within(conn).getByText('Site id').nextElementSibling!.textContent).toBe('site_01JD5K');
    const license = screen.getByRole('region', { name: 'License' });
    expect(within(license).getByText('State').nextElementSibling!.textContent).toBe('No license activated');
    expect(within(license).getByText('Plan').nextElementSibling!.textContent).toBe('free (local policy)');
  });

  it('sends an explicit key and says it was pinned as given', async () => {
    const fake = new FakeApi();
    renderWith(fake, <Cloud />);
    await userEvent.type(await screen.findByLabelText('Gateway address'), 'https://gw.example.com');
    await userEvent.type(screen.getByLabelText('Gateway public key (optional)'), 'gw-2026-11:abc');
    await userEvent.type(screen.getByLabelText('Site name (optional)'), 'Shop');
    await userEvent.click(screen.getByRole('button', { name: 'Connect' }));
    expect(await screen.findByText('The key you gave was pinned.')).toBeTruthy();
    expect(fake.callsTo('cloud.connect')).toEqual([
      { url: 'https://gw.example.com', environment: 'production', public_key: 'gw-2026-11:abc', name: 'Shop' },
    ]);
  });

  it('says why a connect failed in words, with the code and the request id', async () => {
    const fake = new FakeApi().fail('cloud.connect', 'gateway_unavailable', 'connect ECONNREFUSED 127.0.0.1:8787', {
      request_id: 'req_01JDX',
    });
    renderWith(fake, <Cloud />);
    await userEvent.type(await screen.findByLabelText('Gateway address'), 'http://127.0.0.1:8787');
    await userEvent.click(screen.getByRole('button', { name: 'Connect' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toBe(
      'Could not connect. The cloud gateway could not be reached: connect ECONNREFUSED 127.0.0.1:8787 (code gateway_unavailable, request id req_01JDX)',
    );
    expect(screen.getByRole('form', { name: 'Connect to a cloud gateway' })).toBeTruthy();
  });

  it('activates a license from a password field that is emptied and never shows the key', async () => {
    const fake = new FakeApi();
    await connect(fake);
    const license = screen.getByRole('region', { name: 'License' });
    const field = within(license).getByLabelText('License key') as HTMLInputElement;
    expect(field.type).toBe('password');
    expect(field.autocomplete).toBe('off');

    await userEvent.type(field, 'not-a-key');
    await userEvent.click(within(license).getByRole('button', { name: 'Activate' }));
    expect(within(license).getByText(/A license key is ghl_ followed by 32/)).toBeTruthy();
    expect(fake.callsTo('cloud.activate')).toEqual([]);

    await userEvent.clear(field);
    await userEvent.type(field, `ghl_${'Z'.repeat(32)}`);
    await userEvent.click(within(license).getByRole('button', { name: 'Activate' }));
    const alert = await within(license).findByRole('alert');
    expect(alert.textContent).toBe(
      'Could not activate. The license key is not valid: the gateway does not know this license key (code license_invalid, request id req_activate_1)',
    );
    expect(field.value).toBe('');

    await userEvent.type(field, GOOD_LICENSE);
    await userEvent.click(within(license).getByRole('button', { name: 'Activate' }));
    await waitFor(() => expect(within(license).getByText('State').nextElementSibling!.textContent).toBe('Active'));
    expect(within(license).getByRole('status').textContent).toBe(
      'License activated: pro, key ghl_…QQQQ. 1 of 3 seats in use.',
    );
    expect(within(license).getByText('Key').nextElementSibling!.textContent).toBe('ghl_…QQQQ');
    expect(fake.callsTo('cloud.activate')).toEqual([
      { license_key: `ghl_${'Z'.repeat(32)}` },
      { license_key: GOOD_LICENSE },
    ]);
    expect(document.body.innerHTML).not.toContain(GOOD_LICENSE);
    expect(document.body.innerHTML).not.toContain('Z'.repeat(32));
  });

  it('deactivates after a confirmation', async () => {
    const fake = new FakeApi();
    fake.state.cloud.status = connectedStatus();
    renderWith(fake, <Cloud />);
    const license = await screen.findByRole('region', { name: 'License' });
    await userEvent.click(within(license).getByRole('button', { name: 'Deactivate…' }));
    const confirm = within(license).getByRole('group', { name: 'Deactivate the license on this site?' });
    expect(document.activeElement).toBe(within(confirm).getByRole('button', { name: 'Cancel' }));
    await userEvent.click(within(confirm).getByRole('button', { name: 'Deactivate' }));
    await waitFor(() =>
      expect(within(license).getByText('State').nextElementSibling!.textContent).toBe('Not active (inactive)'),
    );
    expect(fake.callsTo('cloud.deactivate')).toHaveLength(1);
    expect(within(license).getByLabelText('License key')).toBeTruthy();
  });

  it('shows the certificate, products, outbox, breaker, clock and errors with request ids', async () => {
    const now = Date.now();
    const fake = new FakeApi();
    fake.state.cloud.status = connectedStatus(now, {
      outbox: makeOutbox({
        depth: 10_000,
        capacity: 10_000,
        full: true,
        refused_full: 3,
        delivered: 40,
        accepted: 38,
        duplicate: 2,
        rejected: 1,
        recent_rejections: [
          { event_id: 'ev_1', reason: 'timestamp_out_of_range', message: 'the event is older than 7 days' },
        ],
      }),
      breaker: { state: 'open', open_until: new Date(now + 60_000).toISOString(), open_ms: 60_000, trips: 2 },
      clock: { offset_ms: 1200, set_back: false },
      last_errors: [
        {
          at: new Date(now - 5000).toISOString(),
          operation: 'usage/record',
          code: 'gateway_unavailable',
          message: '503 from the gateway',
          request_id: 'req_01JDZ',
          attempts: 4,
          stopped: 'attempts_exhausted',
          http_status: 503,
        },
      ],
      warnings: [
        { code: 'cloud_outbox_full', message: 'The usage outbox is full (10000 events): 3 event(s) were refused.' },
      ],
      quota_alerts: [quotaAlert({ level: 'near', metric: 'mcp_actions', used: 850, limit: 1000 }), quotaAlert()],
    });
    fake.state.cloud.status.products.code = 'inactive';
    renderWith(fake, <Cloud />);

    const attention = await screen.findByRole('region', { name: 'Needs attention' });
    const quotas = within(attention).getByRole('list', { name: 'Quota warnings' });
    expect(
      within(quotas)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual([
      expect.stringMatching(
        /^AI tokens per month \(this site\) is used up: 10,000 of 10,000\. It resets .+\. \(code quota_exceeded\)$/,
      ),
      expect.stringMatching(/^MCP tool calls per month \(this site\) is nearly used up: 850 of 1,000\. It resets /),
    ]);
    expect(
      within(attention)
        .getByText(/^The usage outbox is full\./)
        .closest('li')!.textContent,
    ).toContain('(code cloud_outbox_full)');

    const cert = screen.getByRole('region', { name: 'Certificate' });
    expect(within(cert).getByText('State').nextElementSibling!.textContent).toBe('Valid');
    expect(within(cert).getByText('Update channel').nextElementSibling!.textContent).toBe('stable (updates included)');
    const products = screen.getByRole('region', { name: 'Products' });
    expect(products.textContent).toContain('Verto: translation: Active');
    expect(products.textContent).toContain('Code: developer tools: Not active');

    const outbox = screen.getByRole('region', { name: 'Usage outbox' });
    expect(outbox.textContent).toContain('Full: 3 events were not queued');
    expect(within(outbox).getByText('Waiting').nextElementSibling!.textContent).toBe('10000 of 10000');
    expect(within(outbox).getByText('Delivered').nextElementSibling!.textContent).toBe(
      '40 (38 accepted, 2 already there)',
    );
    expect(within(outbox).getByRole('list', { name: 'Recently refused events' }).textContent).toBe(
      'the event is older than 7 days (timestamp_out_of_range, event ev_1)',
    );

    const problems = screen.getByRole('region', { name: 'Requests and errors' });
    expect(within(problems).getByText('Requests').nextElementSibling!.textContent).toMatch(
      /^Paused after repeated failures, until .+ \(open\)$/,
    );
    expect(within(problems).getByText('Clock').nextElementSibling!.textContent).toBe(
      'In step with the gateway (1 s apart)',
    );
    const row = within(problems).getAllByRole('row')[1]!;
    expect(row.textContent).toContain('usage/record · 4 attempts');
    expect(row.textContent).toContain(
      'The cloud gateway could not be reached: 503 from the gateway (code gateway_unavailable, request id req_01JDZ)',
    );
  });

  it('says when there is no certificate yet, or it is stale', async () => {
    const fake = new FakeApi();
    fake.state.cloud.status = connectedStatus(Date.now(), { certificate: null });
    renderWith(fake, <Cloud />);
    expect(await screen.findByText(/No certificate from the gateway yet\. Sync now/)).toBeTruthy();
    expect(
      within(screen.getByRole('region', { name: 'License' })).getByText('State').nextElementSibling!.textContent,
    ).toBe('No license activated');
    cleanup();
    const stale = connectedStatus();
    stale.certificate!.reason = 'stale';
    renderWith(new FakeApi({ cloud: { ...fake.state.cloud, status: stale } }), <Cloud />);
    const cert = await screen.findByRole('region', { name: 'Certificate' });
    expect(within(cert).getByText('State').nextElementSibling!.textContent).toBe(
      'Valid, but not refreshed for over 72 hours: sync now (stale)',
    );
  });

  it('syncs now, and disconnects only after a confirmation that Escape cancels', async () => {
    const fake = new FakeApi();
    fake.state.cloud.status = connectedStatus(Date.now(), { outbox: makeOutbox({ depth: 7 }) });
    renderWith(fake, <Cloud />);
    const conn = await screen.findByRole('region', { name: 'Connection' });
    await userEvent.click(within(conn).getByRole('button', { name: 'Sync now' }));
    await waitFor(() =>
      expect(within(conn).getByRole('status').textContent).toBe(
        'Synced: certificate renewed and verified, 7 usage events uploaded, 0 waiting.',
      ),
    );
    expect(
      within(screen.getByRole('region', { name: 'Usage outbox' })).getByText('Waiting').nextElementSibling!.textContent,
    ).toBe('0 of 10000');

    await userEvent.click(within(conn).getByRole('button', { name: 'Disconnect…' }));
    await userEvent.keyboard('{Escape}');
    expect(fake.callsTo('cloud.disconnect')).toEqual([]);
    await userEvent.click(within(conn).getByRole('button', { name: 'Disconnect…' }));
    await userEvent.click(within(conn).getByRole('button', { name: 'Disconnect' }));
    expect(await screen.findByRole('form', { name: 'Connect to a cloud gateway' })).toBeTruthy();
    expect(screen.getByText('Disconnected.')).toBeTruthy();
    expect(fake.callsTo('cloud.disconnect')).toEqual([{}]);
  });

  it('shows control characters in a gateway’s message instead of obeying them', async () => {
    const fake = new FakeApi().fail('cloud.connect', 'upstream_error', 'bad\u202egateway\nline', {
      request_id: 'req\u0007',
    });
    renderWith(fake, <Cloud />);
    await userEvent.type(await screen.findByLabelText('Gateway address'), 'http://127.0.0.1:8787');
    await userEvent.click(screen.getByRole('button', { name: 'Connect' }));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Could not connect. bad\\u{202E}gateway\\u{000A}line (code upstream_error, request id req\\u{0007})',
    );
  });

  it('says a failed sync in words and keeps the screen', async () => {
    const fake = new FakeApi().fail('cloud.sync', 'signature_invalid', 'the certificate signature did not verify', {
      request_id: 'req_sig',
    });
    fake.state.cloud.status = connectedStatus();
    renderWith(fake, <Cloud />);
    const conn = await screen.findByRole('region', { name: 'Connection' });
    await userEvent.click(within(conn).getByRole('button', { name: 'Sync now' }));
    expect((await within(conn).findByRole('alert')).textContent).toContain(
      'A signature did not verify: check the pinned gateway key: the certificate signature did not verify (code signature_invalid, request id req_sig)',
    );
  });

  it('shows the update channel and the latest verified version, and checks on request', async () => {
    const fake = new FakeApi();
    fake.state.cloud.status = connectedStatus();
    fake.state.cloud.updates = makeUpdates({ connected: true });
    renderWith(fake, <Cloud />);
    const card = await screen.findByRole('region', { name: 'Updates' });
    await waitFor(() =>
      expect(within(card).getByText('Latest version').nextElementSibling!.textContent).toBe('not checked yet'),
    );
    // Not "not known yet" beside the certificate's "Update channel: stable": this is the channel of a check, none made yet.
    expect(within(card).getByText('Channel').nextElementSibling!.textContent).toBe(
      "not checked yet (the license's channel is under Certificate)",
    );
    expect(within(card).getByText('This version').nextElementSibling!.textContent).toBe('0.1.0');
    fake.state.cloud.updates = makeUpdates({
      connected: true,
      channel: 'stable',
      eligible: true,
      latest_version: '0.2.0',
      update_available: true,
      release: { version: '0.2.0', channel: 'stable', released_at: '2026-11-20T10:00:00.000Z', notes: null, files: [] },
    });
    await userEvent.click(within(card).getByRole('button', { name: 'Check for updates' }));
    await waitFor(() => expect(within(card).getByRole('status').textContent).toBe('Version 0.2.0 is available.'));
    expect(within(card).getByText('Channel').nextElementSibling!.textContent).toBe('stable');
    expect(within(card).getByText('Latest version').nextElementSibling!.textContent).toMatch(
      /^0\.2\.0 \(available\) · released /,
    );
    expect(card.textContent).toContain('asks you before installing');
    expect(fake.callsTo('updates.check')).toEqual([{}]);
  });

  it('says when a release was not offered because its manifest did not verify, and why a check failed', async () => {
    const fake = new FakeApi();
    fake.state.cloud.status = connectedStatus();
    fake.state.cloud.updates = makeUpdates({
      connected: true,
      channel: 'beta',
      eligible: false,
      checked_at: '2026-11-23T10:00:00.000Z',
      refused:
        'the release manifest did not verify against the pinned gateway key (bad signature); no update is offered',
      error: { code: 'update_not_allowed', message: 'the beta channel is not in the plan', request_id: 'req_upd' },
    });
    renderWith(fake, <Cloud />);
    const card = await screen.findByRole('region', { name: 'Updates' });
    await waitFor(() =>
      expect(within(card).getByText('Channel').nextElementSibling!.textContent).toBe(
        'beta (not included in the license)',
      ),
    );
    expect(within(card).getByText('Latest version').nextElementSibling!.textContent).toBe('none newer');
    expect(card.textContent).toContain(
      'Not offered: the release manifest did not verify against the pinned gateway key',
    );
    expect(card.textContent).toContain(
      'The last check failed. Updates on this channel are not included in the license: the beta channel is not in the plan (code update_not_allowed, request id req_upd)',
    );
  });

  it('follows changes made elsewhere (CLI, tray) through the health event', async () => {
    const fake = new FakeApi();
    renderWith(fake, <Cloud />);
    await screen.findByRole('form', { name: 'Connect to a cloud gateway' });
    fake.state.cloud.status = connectedStatus();
    act(() => fake.emit({ type: 'health' }));
    expect(await screen.findByRole('region', { name: 'Connection' })).toBeTruthy();
  });
});
