// @vitest-environment jsdom
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { Clients } from '../../renderer/screens/clients/clients.tsx';
import { FakeApi } from '../renderer/fake-api.ts';
import { renderWith } from '../renderer/render.tsx';

/** The console's Clients screen (renderer/screens/clients/) on the fake API: consent first, progress per server, connect, restore. */
afterEach(cleanup);

describe('Clients screen', () => {
  it('shows each client, its files and servers; import shows what will run before anything runs, then each server’s progress', async () => {
    const fake = new FakeApi();
    renderWith(fake, <Clients />);
    const cursor = await screen.findByRole('article', { name: 'Cursor' });
    expect(within(cursor).getByText('/home/ada/.cursor/mcp.json')).toBeTruthy();
    expect(within(cursor).getByText(/stays in the client: uses \$\{workspaceFolder\}/)).toBeTruthy();
    expect(within(cursor).getByRole('button', { name: 'Point Cursor at Gatehouse' })).toHaveProperty('disabled', true);

    await userEvent.click(within(cursor).getByRole('button', { name: 'Import servers' }));
    const plan = await screen.findByRole('region', { name: "Import Cursor's servers?" });
    // What will run: program, arguments, env names; nothing sent yet but the plan.
    expect(await within(plan).findByText('npx')).toBeTruthy();
    expect(within(plan).getByText('API_KEY')).toBeTruthy();
    const items = within(plan)
      .getAllByRole('listitem')
      .map((li) => li.textContent ?? '');
    expect(items.some((t) => /^per-workspace \(user\): skipped: stays in the client: uses/.test(t))).toBe(true);
    expect(fake.calls.map((c) => c.action)).not.toContain('clients.import');

    fake.hold('clients.import');
    await userEvent.click(within(plan).getByRole('button', { name: 'Start 1 server, list and pin their tools' }));
    const progress = await within(plan).findByRole('list', { name: 'Progress' });
    expect(within(progress).getByText('user:files: starting upstream files and listing its tools…')).toBeTruthy();
    fake.release('clients.import');
    expect(await within(progress).findByText('user:files: 14 tools pinned (upstream files)')).toBeTruthy();
    expect(fake.calls.filter((c) => c.action === 'clients.import').map((c) => c.input)).toEqual([
      { client: 'cursor', server: 'user:files' },
    ]);
    await userEvent.click(within(plan).getByRole('button', { name: 'Done' }));

    // Imported now: connect, then restore.
    const again = await screen.findByRole('article', { name: 'Cursor' });
    await waitFor(() => expect(within(again).getByText('imported as upstream files')).toBeTruthy());
    await userEvent.click(within(again).getByRole('button', { name: 'Point Cursor at Gatehouse' }));
    expect(
      await screen.findByText(
        '/home/ada/.cursor/mcp.json: files replaced by “gatehouse” (backup: /data/client-backups/cursor.bak)',
      ),
    ).toBeTruthy();
    expect(fake.state.clients.connected).toEqual(['cursor']);
  });

  it('import shows each stdio server’s sandbox beside its command, and sends what the person grants it; a bad grant stops it before anything runs', async () => {
    const fake = new FakeApi();
    renderWith(fake, <Clients />);
    const cursor = await screen.findByRole('article', { name: 'Cursor' });
    await userEvent.click(within(cursor).getByRole('button', { name: 'Import servers' }));
    const plan = await screen.findByRole('region', { name: "Import Cursor's servers?" });
    // Suggested from its command line, as at `upstreams add`: server-filesystem's folder, the runner's registry.
    const folders = await within(plan).findByRole('list', { name: 'Folders granted' });
    expect(folders.textContent).toBe('read-write /tmp (from the command line)');
    expect(within(plan).getByRole('list', { name: 'Hosts granted' }).textContent).toBe(
      'registry.npmjs.org (for the package runner)',
    );

    await userEvent.type(within(plan).getByLabelText(/^Folders it may only read .*\(user:files\)$/), 'notes');
    await userEvent.click(within(plan).getByRole('button', { name: 'Start 1 server, list and pin their tools' }));
    expect((await within(plan).findByRole('alert')).textContent).toBe(
      'notes: a granted folder is an absolute path (or ~/...)',
    );
    expect(fake.calls.map((c) => c.action)).not.toContain('clients.import');

    const read = within(plan).getByLabelText(/^Folders it may only read .*\(user:files\)$/);
    await userEvent.clear(read);
    await userEvent.type(read, '~/docs');
    await userEvent.type(within(plan).getByLabelText(/^Hosts it may reach .*\(user:files\)$/), 'api.example.com');
    // Shown beside the command as it is typed.
    expect(within(plan).getByRole('list', { name: 'Folders granted' }).textContent).toBe(
      'read-only ~/docsread-write /tmp (from the command line)',
    );
    await userEvent.click(within(plan).getByRole('button', { name: 'Start 1 server, list and pin their tools' }));
    expect(await within(plan).findByText('user:files: 14 tools pinned (upstream files)')).toBeTruthy();
    expect(fake.calls.filter((c) => c.action === 'clients.import').map((c) => c.input)).toEqual([
      { client: 'cursor', server: 'user:files', sandbox: { read: ['~/docs'], write: [], net: ['api.example.com'] } },
    ]);
  });

  it('unconfined at import is said as a warning beside the command', async () => {
    const fake = new FakeApi();
    renderWith(fake, <Clients />);
    const cursor = await screen.findByRole('article', { name: 'Cursor' });
    await userEvent.click(within(cursor).getByRole('button', { name: 'Import servers' }));
    const plan = await screen.findByRole('region', { name: "Import Cursor's servers?" });
    await userEvent.click(await within(plan).findByLabelText('Run user:files unconfined'));
    expect(within(plan).getByLabelText('Sandbox').textContent).toBe(
      'Unconfined: it runs with all of your rights (files, network, your keys).',
    );
    await userEvent.click(within(plan).getByRole('button', { name: 'Start 1 server, list and pin their tools' }));
    await within(plan).findByText('user:files: 14 tools pinned (upstream files)');
    expect(fake.calls.find((c) => c.action === 'clients.import')?.input).toMatchObject({
      sandbox: { unconfined: true },
    });
  });

  it('a refused action says why', async () => {
    const fake = new FakeApi().fail('clients.connect', 'not_found', 'nothing of Cursor is imported into Gatehouse yet');
    fake.state.clients.reports[0]!.locations[0]!.servers[0]!.imported_as = 'files';
    renderWith(fake, <Clients />);
    const cursor = await screen.findByRole('article', { name: 'Cursor' });
    await userEvent.click(within(cursor).getByRole('button', { name: 'Point Cursor at Gatehouse' }));
    expect((await screen.findByRole('alert')).textContent).toContain(
      'nothing of Cursor is imported into Gatehouse yet (not_found)',
    );
  });
});
