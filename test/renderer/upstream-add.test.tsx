// @vitest-environment jsdom
import { cleanup, screen, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { addInput, EMPTY_FORM } from '../../renderer/screens/upstreams/add-input.ts';
import { Upstreams } from '../../renderer/screens/upstreams/upstreams.tsx';
import { FakeApi } from './fake-api.ts';
import { renderWith } from './render.tsx';

/** The Add upstream form: what it refuses before anything is sent, and the HTTP consent step (the stdio one runs in test/e2e/upstreams.e2e.test.ts). */
afterEach(cleanup);
const HEADER_VALUE = 'header-value-3e9a51';

describe('addInput', () => {
  it('names the field that is wrong, by the contract the service checks too', () => {
    const bad = (change: Partial<typeof EMPTY_FORM>) => {
      const r = addInput({ ...EMPTY_FORM, id: 'ok', command: 'node', ...change });
      if (r.ok) throw new Error('accepted');
      return r.errors;
    };
    expect(bad({ id: '__proto__' }).id).toMatch(/upstream id/);
    expect(bad({ command: 'node\u001b[2J' }).command).toMatch(/control characters/);
    expect(bad({ args: 'a\nb\u0000c' }).args).toMatch(/^argument 2: .*NUL/);
    expect(bad({ env: [{ name: '1BAD', value: 'v' }] }).env).toMatch(/^row 1: /);
    expect(bad({ timeoutMs: '5s' }).timeoutMs).toBeTruthy();
    expect(bad({ kind: 'http', url: 'http://user:pw@example.com/mcp' }).url).toMatch(/credentials/);
    expect(
      bad({ kind: 'http', url: 'http://example.com/mcp', headers: [{ name: 'X-Key', value: 'a\nb' }] }).headers,
    ).toMatch(/line breaks/);
  });

  it('sends one argument per line as typed, drops empty rows, and asks for the two-step add', () => {
    const r = addInput({
      ...EMPTY_FORM,
      id: 'files',
      command: ' npx ',
      args: '-y\n\n@scope/pkg\n /tmp/with space ',
      env: [
        { name: 'A', value: ' v ' },
        { name: '', value: '' },
      ],
      read: 'read_file, list_dir',
    });
    expect(r).toEqual({
      ok: true,
      input: {
        id: 'files',
        transport: {
          kind: 'stdio',
          command: 'npx',
          args: ['-y', '@scope/pkg', ' /tmp/with space '],
          env: [{ name: 'A', value: ' v ' }],
        },
        read: ['read_file', 'list_dir'],
        approve_listed: false,
      },
    });
  });
});

describe('adding an HTTP upstream', () => {
  it('shows the URL and header names, never a value, before anything is sent; a refusal keeps the form as typed', async () => {
    const fake = new FakeApi();
    renderWith(fake, <Upstreams />);
    await userEvent.click(await screen.findByRole('button', { name: 'Add an upstream server' }));
    await userEvent.type(screen.getByLabelText('Id'), 'remote');
    await userEvent.click(screen.getByLabelText(/A server at a URL/));
    await userEvent.type(screen.getByLabelText('URL'), 'https://mcp.example.com/mcp');
    await userEvent.click(screen.getByRole('button', { name: 'Add a header' }));
    await userEvent.type(screen.getByLabelText('header 1 name'), 'X-Api-Key');
    await userEvent.type(screen.getByLabelText('header 1 value'), HEADER_VALUE);
    expect(screen.getByLabelText('header 1 value').getAttribute('type')).toBe('password');
    await userEvent.click(screen.getByRole('button', { name: 'Review before connecting' }));

    const consent = screen.getByRole('region', { name: 'Connect to this server for “remote”?' });
    expect(consent.textContent).toContain('https://mcp.example.com/mcp');
    expect(consent.textContent).toContain('X-Api-Key');
    expect(document.body.innerHTML).not.toContain(HEADER_VALUE);
    expect(fake.callsTo('upstreams.add')).toEqual([]);

    await userEvent.click(within(consent).getByRole('button', { name: 'Connect and list its tools' }));
    expect(fake.callsTo('upstreams.add')).toEqual([
      {
        id: 'remote',
        transport: {
          kind: 'http',
          url: 'https://mcp.example.com/mcp',
          headers: [{ name: 'X-Api-Key', value: HEADER_VALUE }],
        },
        read: [],
        approve_listed: false,
      },
    ]);
    expect((await screen.findByRole('alert')).textContent).toMatch(/^Not added: .*\(not_found\)$/);
    expect((screen.getByLabelText('URL') as HTMLInputElement).value).toBe('https://mcp.example.com/mcp');
  });

  it('shows the sandbox beside the command before anything runs: the folder suggested from the arguments, the grants typed, no network', async () => {
    const fake = new FakeApi();
    renderWith(fake, <Upstreams />);
    await userEvent.click(await screen.findByRole('button', { name: 'Add an upstream server' }));
    await userEvent.type(screen.getByLabelText('Id'), 'fs');
    await userEvent.type(screen.getByLabelText('Command'), 'npx');
    await userEvent.type(
      screen.getByLabelText('Arguments (one per line)'),
      '-y{Enter}@modelcontextprotocol/server-filesystem{Enter}~/notes',
    );
    await userEvent.type(screen.getByLabelText('Folders it may only read (one per line)'), '/srv/docs');
    await userEvent.click(screen.getByRole('button', { name: /^Review before/ }));
    const consent = screen.getByRole('region', { name: 'Run this program for “fs”?' });
    const sandbox = within(consent).getByLabelText('Sandbox');
    expect(within(sandbox).getByLabelText('Folders granted').textContent).toBe(
      'read-only /srv/docsread-write ~/notes (from the command line)',
    );
    expect(within(consent).getByLabelText('Network').textContent).toBe('registry.npmjs.org (for the package runner)');
    expect(fake.callsTo('upstreams.add')).toEqual([]);
    await userEvent.click(within(consent).getByRole('button', { name: 'Run it and list its tools' }));
    expect(fake.callsTo('upstreams.add')[0]).toMatchObject({
      transport: { sandbox: { read: ['/srv/docs'], write: [], net: [] } },
    });
  });
});
