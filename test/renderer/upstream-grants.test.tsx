// @vitest-environment jsdom
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamDetail } from '../../main/contract/index.ts';
import { apiFrom } from '../../renderer/api/api-from.ts';
import { Upstreams } from '../../renderer/screens/upstreams/upstreams.tsx';
import { startTestService } from '../helpers/service.ts';
import { FILESYSTEM } from '../plugins/upstream/upstream-world.ts';
import { renderWith } from './render.tsx';

/**
 * The Upstreams screen changes a stdio upstream's sandbox grants through the
 * real service's `upstreams.grant` (server-filesystem under real bubblewrap):
 * each grant with its origin, add and remove, unconfined with its warning.
 */
let svc: Awaited<ReturnType<typeof startTestService>>;
let dir: string;
let docs: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-grants-fs-'));
  docs = await mkdtemp(join(tmpdir(), 'gh-grants-docs-'));
  svc = await startTestService();
  const r = await svc.dispatch('upstreams.add', {
    id: 'fs',
    transport: { kind: 'stdio', command: process.execPath, args: [FILESYSTEM, dir] },
  });
  if (!r.ok) throw new Error(r.message);
}, 60_000);
afterAll(async () => {
  await svc?.cleanup();
  await rm(dir, { recursive: true, force: true });
  await rm(docs, { recursive: true, force: true });
});
afterEach(cleanup);

const realApi = () => ({
  api: apiFrom(
    (action, input) => svc.dispatch(action as never, input as never) as never,
    (listener) => svc.events.subscribe((e) => listener(structuredClone(e))),
  ),
});
const stored = async () => {
  const r = await svc.dispatch('upstreams.get', { id: 'fs' });
  if (!r.ok) throw new Error(r.message);
  return (r.data as UpstreamDetail).confinement!;
};
const grantsShown = () =>
  within(screen.getByRole('list', { name: 'Grants' }))
    .getAllByRole('listitem')
    .map((li) => li.textContent!.replace(/ ?Remove .*$/, ''));

describe('the sandbox grants of an upstream', () => {
  it('shows each grant with its origin; a person adds and removes them, each change stored by upstreams.grant', async () => {
    renderWith(realApi(), <Upstreams />);
    const row = (await screen.findByText('fs')).closest('tr')!;
    await userEvent.click(within(row).getByRole('button', { name: 'Details of fs' }));
    await screen.findByRole('list', { name: 'Grants' });
    expect(grantsShown()).toEqual([`read-write ${dir} (from the command line)`]);
    expect(screen.getByLabelText('Sandbox').textContent).toMatch(/^Confined: confined by bubblewrap/);

    await userEvent.click(screen.getByRole('button', { name: 'Change the grants of fs' }));
    // A folder the contract refuses is said at once and never sent.
    await userEvent.type(screen.getByLabelText('Folder or host to grant'), 'notes');
    await userEvent.click(screen.getByRole('button', { name: 'Add grant' }));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'notes: a granted folder is an absolute path (or ~/...)',
    );
    await userEvent.clear(screen.getByLabelText('Folder or host to grant'));
    await userEvent.selectOptions(screen.getByRole('combobox'), 'a folder to read only');
    await userEvent.type(screen.getByLabelText('Folder or host to grant'), docs);
    await userEvent.click(screen.getByRole('button', { name: 'Add grant' }));
    await userEvent.selectOptions(screen.getByRole('combobox'), 'a host to reach');
    await userEvent.type(screen.getByLabelText('Folder or host to grant'), 'API.example.com{Enter}');
    expect(grantsShown()).toEqual([
      `read-write ${dir} (from the command line)`,
      `read-only ${docs} (granted by a person)`,
      'network api.example.com (granted by a person)',
    ]);
    expect((await stored()).grants).toHaveLength(1); // nothing sent before Save
    await userEvent.click(screen.getByRole('button', { name: 'Save the grants' }));
    await waitFor(async () =>
      expect((await stored()).grants).toEqual([
        { kind: 'read', value: docs, from: 'person' },
        { kind: 'net', value: 'api.example.com', from: 'person' },
        { kind: 'write', value: dir, from: 'command_line' },
      ]),
    );
    await waitFor(() =>
      expect(grantsShown()).toEqual([
        `read-only ${docs} (granted by a person)`,
        'network api.example.com (granted by a person)',
        `read-write ${dir} (from the command line)`,
      ]),
    );

    // Removing what the command line suggested keeps it removed (the service no longer suggests).
    await userEvent.click(screen.getByRole('button', { name: 'Change the grants of fs' }));
    await userEvent.click(screen.getByRole('button', { name: `Remove read-write ${dir}` }));
    await userEvent.click(screen.getByRole('button', { name: 'Remove network api.example.com' }));
    await userEvent.click(screen.getByRole('button', { name: 'Save the grants' }));
    await waitFor(async () => expect((await stored()).grants).toEqual([{ kind: 'read', value: docs, from: 'person' }]));
    await waitFor(() => expect(grantsShown()).toEqual([`read-only ${docs} (granted by a person)`]));
  }, 60_000);

  it('unconfined is a person’s toggle with a warning that stays; turning it off confines it again', async () => {
    renderWith(realApi(), <Upstreams />);
    const row = (await screen.findByText('fs')).closest('tr')!;
    await userEvent.click(within(row).getByRole('button', { name: 'Details of fs' }));
    await userEvent.click(await screen.findByRole('button', { name: 'Change the grants of fs' }));
    expect(screen.queryByLabelText('Unconfined warning')).toBeNull();
    await userEvent.click(screen.getByRole('checkbox', { name: /Run it unconfined/ }));
    expect(screen.getByLabelText('Unconfined warning').textContent).toContain('runs with all of your rights');
    await userEvent.click(screen.getByRole('button', { name: 'Save the grants' }));
    await waitFor(async () => expect(await stored()).toMatchObject({ state: 'unconfined', person_unconfined: true }));
    await waitFor(() =>
      expect(screen.getByLabelText('Sandbox').textContent).toMatch(/^Unconfined: a person chose to run it without/),
    );
    expect(screen.getByLabelText('Sandbox').className).toBe('warning');

    await userEvent.click(screen.getByRole('button', { name: 'Change the grants of fs' }));
    expect(screen.getByRole('checkbox', { name: /Run it unconfined/ })).toHaveProperty('checked', true);
    await userEvent.click(screen.getByRole('checkbox', { name: /Run it unconfined/ }));
    await userEvent.click(screen.getByRole('button', { name: 'Save the grants' }));
    await waitFor(async () => expect(await stored()).toMatchObject({ state: 'confined', person_unconfined: false }));
    // The grants a person kept survive the round trip.
    expect((await stored()).grants).toEqual([{ kind: 'read', value: docs, from: 'person' }]);
  }, 60_000);
});
